# A blocked Str consumer takes a lock only when there is an item for it:
# lock acquisitions are counted (stats' lock_acquired), not timed. A child
# blocks in pop_wait (pop_back_wait, pop_wait_multi) for each of N items;
# the parent pushes each one once the child is asleep on a futex, or
# after a pause of a few milliseconds, so the child waits for every item
# (spins, announces itself, sleeps, is woken). Each push takes the back
# lock once; the consumer may take a lock to settle with the back (when
# it finds a push holding the back lock) and one to take its item, so a
# delivery costs at most 3 acquisitions in all (4 for pop_back_wait, whose
# pop takes both locks). A consumer that locked to look would count about
# two hundred per item.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

BEGIN { $ENV{DQS_TEST_NO_SLICE} = 1 }
use Data::Queue::Shared::Str;

watchdog(120);

my $N = 25;

# How to pop one item, and the locks its pop takes.
my %pop = (
    pop_wait       => [1, sub { $_[0]->pop_wait(20) }],
    pop_back_wait  => [2, sub { $_[0]->pop_back_wait(20) }],
    pop_wait_multi => [1, sub { ($_[0]->pop_wait_multi(1, 20))[0] }],
);

for my $how (sort keys %pop) {
    for my $pace (qw(asleep 3ms)) {
        subtest "$how, each item pushed when the consumer is $pace" => sub {
            my ($takes, $pop) = @{ $pop{$how} };
            my $q = Data::Queue::Shared::Str->new(undef, 16);
            my $before = $q->stats->{lock_acquired};
            # Each item once (pop_back_wait takes the newest, and with
            # the 3 ms pace a slow consumer may find several).
            my $pid = spawn(sub {
                my %seen;
                for my $i (1 .. $N) {
                    my $v = $pop->($q);
                    defined $v or die "$how timed out at item $i\n";
                    $v =~ /^v(\d+)$/ && $1 >= 1 && $1 <= $N or die "$how got '$v'\n";
                    $seen{$v}++ and die "$how got '$v' twice\n";
                }
            });
            for my $i (1 .. $N) {
                if ($pace eq 'asleep') {
                    wait_asleep([$pid]) or diag("item $i: consumer not asleep after 10 s");
                }
                else {
                    select undef, undef, undef, 0.003;
                }
                $q->push("v$i") or die "push $i failed\n";
            }
            is(reap($pid), 0, 'the consumer got every item once');
            my $locks = $q->stats->{lock_acquired} - $before;
            my $most = 2 + $takes;
            cmp_ok($locks, '<=', $most * $N, "at most $most lock acquisitions per item (got $locks for $N)");
            cmp_ok($locks, '>=', (1 + $takes) * $N, 'each push and each pop counted');
        };
    }
}

done_testing;
