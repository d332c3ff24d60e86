# The poison job: one item whose consumer dies every time it gets it, among
# 10,000 good ones, on a queue created with max_deliveries. The count lives
# in shared memory and is taken when the lease is handed out, so the killed
# consumer never needs to reach an error handler: after exactly
# max_deliveries deliveries the item is in the dead-letter area with reason
# "holder died", while every other item went through the 4 consumers
# exactly once (leased, acked). Then the same with a consumer that releases
# the poison item with an exponential backoff (release($lease, $delay)):
# the delays show in the timestamps of its deliveries, and the item dies
# with reason "released". The timelines are printed (note).
# DQS_POISON_ITEMS sets the number of good items (default 10,000).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use Fcntl qw(O_WRONLY O_APPEND O_CREAT);
use Time::HiRes ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

my $ITEMS     = $ENV{DQS_POISON_ITEMS} || 10_000;
my $CONSUMERS = 4;
my $MAX       = 4;    # max_deliveries
watchdog(240);
my $dir = tmpdir();

# Run one round. $poison_act is what a consumer does with the poison item:
# 'kill' (SIGKILL itself) or 'backoff' (release it with delay BASE * 2**(n-1)
# after its n-th delivery). Returns nothing; makes the tests.
sub round {
    my ($class, $act) = @_;
    my $str    = $class =~ /Str$/;
    my $name   = (split /::/, $class)[-1] . " $act";
    my $path   = "$dir/poison-$act" . ($str ? '-str' : '') . '.shm';
    my $log    = "$path.log";
    my $poison = $str ? 'poison' : -1;
    my $base   = 0.05;
    my @opts   = ({ max_deliveries => $MAX, max_dead => 8 });
    my $q = $str ? $class->new($path, 16384, 16384 * 16, @opts) : $class->new($path, 16384, @opts);
    my $t0 = Time::HiRes::time();
    $q->push($poison);
    $q->push($str ? "j$_" : $_) for 1 .. $ITEMS;

    my $consumer = sub {
        spawn(sub {
            my $c = $class->new($path, 16384);
            sysopen my $fh, $log, O_WRONLY | O_APPEND | O_CREAT or die "$log: $!";
            while (1) {
                my ($v, $l, $d) = $c->pop_lease_wait(0.05);
                if (!defined $l) {
                    last if -e "$log.stop";
                    next;
                }
                if ($v eq $poison) {
                    syswrite $fh, sprintf "P %.6f %d %d\n", Time::HiRes::time(), $d, $$;
                    if ($act eq 'kill') { kill 'KILL', $$; sleep 10 }
                    $c->release($l, $base * 2**($d - 1)) or die "release of the poison item failed";
                    next;
                }
                syswrite $fh, "R $v $d $$\n";
                $c->ack($l) or die "ack of $v failed";
            }
        }, timeout => 200);
    };
    my %live = map { $consumer->() => 1 } 1 .. $CONSUMERS;
    my $respawned = 0;
    my $done = sub {
        my $s = $q->lease_stats;
        return $s->{acked} >= $ITEMS && $q->dead_count >= 1 && $s->{open} == 0;
    };
    my $end = now() + 120;
    until ($done->() || now() > $end || $respawned > 10 * $MAX) {
        for my $pid (keys %live) {
            next unless defined reap($pid, 1);
            delete $live{$pid};
            $live{ $consumer->() } = 1;
            $respawned++;
        }
        Time::HiRes::sleep(0.002);
    }
    ok $done->(), "$name: every good item acked, the poison item dead";
    open my $stop, '>', "$log.stop" or die;
    close $stop;
    for my $pid (keys %live) {
        my $st = reap($pid);
        ok $st == 0 || ($act eq 'kill' && ($st & 127) == 9), "$name: consumer $pid ended";
    }

    # The log: each good item recorded once, with delivery count 1.
    open my $fh, '<', $log or die "$log: $!";
    my (%seen, @poison, $twice, $recount);
    while (<$fh>) {
        if (/^R (\S+) (\d+) (\d+)$/) { $twice++ if $seen{$1}++; $recount++ if $2 != 1 }
        elsif (/^P (\S+) (\d+) (\d+)$/) { push @poison, [$1, $2, $3] }
    }
    is scalar(keys %seen), $ITEMS, "$name: all $ITEMS good items delivered";
    is $twice // 0, 0, "$name: ... each exactly once";
    is $recount // 0, 0, "$name: ... each at its first delivery";
    my $s = $q->lease_stats;
    is $s->{acked}, $ITEMS, "$name: $ITEMS acks";
    is $s->{delivered}, $ITEMS + $MAX, "$name: delivered = good items + $MAX poison deliveries";
    is scalar @poison, $MAX, "$name: the poison item was delivered exactly $MAX times";
    is_deeply [map { $_->[1] } @poison], [1 .. $MAX], "$name: ... counted 1 .. $MAX";
    is $q->dead_count, 1, "$name: one dead item";
    my $dead = $q->dead_peek;
    is $dead->{value}, $poison, "$name: it is the poison item";
    is $dead->{deliveries}, $MAX, "$name: dead after exactly $MAX deliveries";
    is $dead->{reason}, $act eq 'kill' ? 'holder died' : 'released', "$name: reason";
    is $q->size, 0, "$name: nothing left in the live queue";
    is $s->{dead}, 1, "$name: lease_stats dead 1";
    is $s->{returned_dead}, $act eq 'kill' ? $MAX : 0, "$name: holders found dead" if $act eq 'kill';
    is $respawned, $act eq 'kill' ? $MAX : 0, "$name: consumers lost (and replaced): $respawned";

    my @lines = sprintf '%s timeline (seconds from the first push; %d good items, %d consumers, max_deliveries %d):',
        $name, $ITEMS, $CONSUMERS, $MAX;
    my $prev;
    for my $p (@poison) {
        push @lines, sprintf '  %8.3f  delivery %d to pid %d%s', $p->[0] - $t0, $p->[1], $p->[2],
            defined $prev ? sprintf('  (+%.3f s)', $p->[0] - $prev) : '';
        $prev = $p->[0];
    }
    push @lines, sprintf '  %8.3f  moved to the dead-letter area: deliveries %d, reason "%s"',
        $dead->{when} - $t0, $dead->{deliveries}, $dead->{reason};
    note join "\n", @lines;
    if ($act eq 'backoff') {
        for my $i (1 .. $#poison) {
            my $gap  = $poison[$i][0] - $poison[$i - 1][0];
            my $want = $base * 2**($i - 1);
            cmp_ok $gap, '>=', $want - 0.002, "$name: delivery " . ($i + 1) . " came after its delay ($want s)";
            cmp_ok $gap, '<', $want + 0.5, "$name: ... and not much later";
        }
    }
    $q->unlink;
    unlink $log, "$log.stop";
}

round('Data::Queue::Shared::Int', 'kill');
round('Data::Queue::Shared::Int', 'backoff');
round('Data::Queue::Shared::Str', 'kill');
round('Data::Queue::Shared::Str', 'backoff');

done_testing;
