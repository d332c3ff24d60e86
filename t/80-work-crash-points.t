# The work-queue steps at deterministic crash points
# (DQS_TEST_KILL_POINT=work_*): a process SIGKILLs itself inside a delivery
# count, a move to the dead-letter area, a kick, a delayed release or
# push_delayed, an item made due, or a dead_drain. The survivors take its
# lock over and finish or undo the step: every item is afterwards in the
# live queue or in the dead-letter area, at least once and at most twice
# (the manual's promise), and the counts stay sane. Fails at once if a
# kill point does not fire.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use Time::HiRes ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(120);
my $dir = tmpdir();
my $n   = 0;

# Everything left: the live items (after the delayed ones fell due) and the
# dead ones.
sub everything {
    my ($q) = @_;
    wait_for(sub { $q->lease_stats->{delayed} == 0 }, 5);
    my @live;
    while (1) {
        my ($v, $l) = $q->pop_lease;
        last unless defined $l;
        push @live, $v;
        $q->ack($l);
    }
    return (\@live, [map { $_->{value} } $q->dead_list]);
}

# Each scenario: the queue's options, the parent's set-up, the doomed
# child's step, the item(s) that must survive, and where.
my @SCENARIOS = (
    [work_counted => { max_deliveries => 0 }, sub { $_[0]->push($_[1]) },
     sub { $_[0]->pop_lease }, 'live'],
    [work_dead_moved => { max_deliveries => 1 }, sub { $_[0]->push($_[1]) },
     sub { my (undef, $l) = $_[0]->pop_lease; $_[0]->release($l) }, 'dead'],
    [work_dead_moved => { max_deliveries => 1 }, sub { $_[0]->push($_[1]) },
     sub { my (undef, $l) = $_[0]->pop_lease; $_[0]->bury($l) }, 'dead', 'bury'],
    [work_kicked => { max_deliveries => 1 },
     sub { $_[0]->push($_[1]); my (undef, $l) = $_[0]->pop_lease; $_[0]->bury($l) },
     sub { $_[0]->kick(1) }, 'either'],
    [work_delayed => {}, sub { $_[0]->push($_[1]) },
     sub { my (undef, $l) = $_[0]->pop_lease; $_[0]->release($l, 0.01) }, 'live'],
    [work_delayed => {}, sub { }, sub { $_[0]->push_delayed(0.01, $_[1]) }, 'live', 'push_delayed'],
    [work_made_due => {}, sub { $_[0]->push_delayed(0.001, $_[1]); Time::HiRes::sleep(0.005) },
     sub { $_[0]->pop }, 'live'],
    [work_dead_drain => { max_deliveries => 1 },
     sub { $_[0]->push($_[1]); my (undef, $l) = $_[0]->pop_lease; $_[0]->bury($l) },
     sub { $_[0]->dead_drain(1) }, 'dead'],
);

for my $class ('Data::Queue::Shared::Int', 'Data::Queue::Shared::Str') {
    my $str = $class =~ /Str$/;
    for my $sc (@SCENARIOS) {
        my ($point, $opts, $setup, $step, $where, $how) = @$sc;
        my $name = "$class $point" . ($how ? " ($how)" : '');
        my $path = "$dir/k" . $n++ . '.shm';
        my $item = $str ? "item-$n" : 100 + $n;
        my $q = $str ? $class->new($path, 16, undef, { max_dead => 8, %$opts })
                     : $class->new($path, 16, { max_dead => 8, %$opts });
        $setup->($q, $item);
        my $kid = doomed_at($class, $path, $point, sub { $step->($_[0], $item) });
        my $st = reap($kid);
        is $st & 127, 9, "$name: the kill point fired (SIGKILL)" or diag "status $st";
        my ($live, $dead) = everything($q);
        my $count = grep { $_ eq $item } @$live, @$dead;
        cmp_ok $count, '>=', 1, "$name: the item is not lost";
        cmp_ok $count, '<=', 2, "$name: ... and appears at most twice";
        if ($where eq 'live') {
            ok((grep { $_ eq $item } @$live), "$name: it is in the live queue");
        }
        elsif ($where eq 'dead') {
            ok((grep { $_ eq $item } @$dead), "$name: it is in the dead-letter area");
        }
        my $s = $q->lease_stats;
        is $s->{open}, 0, "$name: no lease left open";
        is $s->{dead_items}, scalar @$dead, "$name: dead_items agrees with dead_list";
        note "$name: live [@$live] dead [@$dead]";
        $q->unlink;
    }
}

done_testing;
