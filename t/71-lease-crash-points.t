# Leases at deterministic crash points (DQS_TEST_KILL_POINT=lease_*): a
# process that SIGKILLs itself inside pop_lease, inside an ack, or inside
# the return of a dead holder's lease must leave every item exactly once:
# the survivors take the dead process's locks over, settle its half-written
# lease records, return its leases, and the queue hands out each item once,
# in order. Also shows the one documented duplicate of the Int queues: a
# leaser killed between its intent and its take while a plain pop takes the
# same item. Fails at once if the kill points do not fire.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(240);
my $dir = tmpdir();
my $seq = 0;

# Where each point sits, and what the doomed process does to reach it.
my %POINTS = (
    int => {
        lease_int_intent   => 'pop',     # intent written, slot not yet taken
        lease_int_taken    => 'pop',     # slot taken, record not yet held
        lease_int_ack      => 'ack',     # ack checked, record not yet freed
        lease_int_returned => 'return',  # dead lease marked returned, count not bumped
    },
    str => {
        lease_str_pending   => 'pop',    # record pending, pop not committed
        lease_str_committed => 'pop',    # pop committed, record not yet held
        lease_str_ack       => 'ack',
        lease_str_returning => 'return', # pushed back, not committed
        lease_str_returned  => 'return', # return committed, record not freed
    },
);

# Every item left, each leased and acked by this process, in order.
sub drain {
    my ($q) = @_;
    my @got;
    while (1) {
        my ($v, $l) = $q->pop_lease;
        last unless defined $l;
        push @got, $v;
        $q->ack($l) or die "ack of a fresh lease failed";
    }
    return @got;
}

for my $class (@INT_CLASSES, 'Data::Queue::Shared::Str') {
    my $str = $class =~ /Str$/;
    my @items = $str ? map { "item-$_" } 1 .. 6 : 11 .. 16;
    my $points = $POINTS{ $str ? 'str' : 'int' };
    for my $point (sort keys %$points) {
        my $how = $points->{$point};
        subtest "$class: killed at $point" => sub {
            my $path = "$dir/kp" . $seq++ . '.shm';
            my $q = $class->new($path, 16);
            $q->push($_) for @items;
            if ($how eq 'return') {
                # A holder that dies with a lease, so that there is one to return.
                my $h = spawn(sub { my ($v, $l) = $q->pop_lease; die unless defined $l });
                reap_ok($h, 'a holder leased one and exited');
            }
            my $pid = doomed_at($class, $path, $point, sub {
                my ($d) = @_;
                if ($how eq 'pop') { $d->pop_lease }
                elsif ($how eq 'ack') { my ($v, $l) = $d->pop_lease; $d->ack($l) }
                else { $d->lease_stats }
            });
            my $st = reap($pid);
            is($st & 127, 9, "the process died of SIGKILL at $point")
                or diag("status $st");
            my @got = drain($q);
            is_deeply(\@got, \@items, 'every item exactly once, in order')
                or diag("got @got");
            my $s = $q->lease_stats;
            is($s->{open} + $s->{waiting}, 0, 'no lease left open or waiting');
            $q->push($items[0]);
            my ($v, $l) = $q->pop_lease;
            ok($q->ack($l), 'leasing goes on');
            $q->unlink;
        };
    }
}

# The documented duplicate needs a plain pop already under way when the
# leaser dies between its intent and its take; one that starts after the
# death takes the lease lock over first, and the repair frees the intent.
subtest 'Int: a plain pop after a leaser killed before its take repairs first' => sub {
    my $class = 'Data::Queue::Shared::Int';
    my $path = "$dir/dup.shm";
    for my $form (qw(pop pop_multi)) {
        my $q = $class->new($path, 16);
        $q->push($_) for 1 .. 3;
        my $pid = doomed_at($class, $path, 'lease_int_intent', sub { $_[0]->pop_lease });
        reap($pid);
        my @first = $form eq 'pop' ? ($q->pop) : ($q->pop_multi(1));
        is_deeply(\@first, [1], "$form takes the item the dead leaser meant to take");
        is_deeply([drain($q)], [2, 3], "$form: the takeover came first: no duplicate");
        my $s = $q->lease_stats;
        is_deeply([@$s{qw(returned_dead open waiting)}], [0, 0, 0], "$form: nothing returned, nothing open");
        is($q->stats->{recoveries}, 1, "$form: one takeover");
        $q->unlink;
    }
};

done_testing;
