# Blocking across processes in both directions, handles inherited by forked
# children, and FIFO order between a producer and a consumer process.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Backing;
use DQSTest::Blocking;
use DQSTest::Files;
use Test::More;
use Time::HiRes ();

# Waits sleep until woken or timed out, never a slice at a time: a lost
# wake-up costs the whole wait (and fails) instead of a quarter second.
BEGIN { $ENV{DQS_TEST_NO_SLICE} = 1 }
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(100);

# In a child: once the parent sleeps on a futex, run $code, which must
# wake it (by the FUTEX_WAKE count), or die.
sub wake_parent {
    my ($what, $code) = @_;
    wait_asleep([getppid()]) or die "the parent never went to sleep\n";
    my $w0 = woken();
    $code->();
    woken() - $w0 >= 1 or die "$what woke nobody\n";
}

for my $class (@INT_CLASSES) {
    my %q = queues_of($class, 4);
    for my $kind (qw(anon file memfd)) {
        my $q = $q{$kind};

        subtest "$class ($kind): a handle made before fork works in the child" => sub {
            $q->push_multi(1, 2);
            my $pid = spawn(sub {
                my @got = $q->drain;
                "@got" eq '1 2' or die "child drained '@got'\n";
                $q->push_multi(3, 4) == 2 or die "child push_multi\n";
                $q->stats->{capacity} == 4 or die "capacity\n";
            });
            reap_ok($pid, 'child drained the parent\'s items and pushed its own');
            is_deeply([$q->drain], [3, 4], 'parent sees the child\'s items');
        };

        subtest "$class ($kind): pop_wait is woken by a push from another process" => sub {
            for my $timeout (undef, 30) {
                my $label = defined $timeout ? "pop_wait($timeout)" : 'pop_wait()';
                my $pid = spawn(sub { wake_parent(push => sub { $q->push(42) or die "push\n" }) });
                my $v = $q->pop_wait(defined $timeout ? $timeout : ());
                is($v, 42, "$label returns the child's item");
                reap_ok($pid);
            }
            is($q->stats->{pop_waiters}, 0, 'no waiter left registered');
        };

        subtest "$class ($kind): push_wait is woken by a pop from another process" => sub {
            $q->push_multi(1 .. 4);
            ok($q->is_full, 'full');
            my $pid = spawn(sub {
                wake_parent(pop => sub {
                    my $v = $q->pop;
                    defined $v && $v == 1 or die "child popped ", $v // 'undef', "\n";
                });
            });
            ok($q->push_wait(5, 30), 'push_wait on a full queue succeeds once the child pops');
            reap_ok($pid);
            is_deeply([$q->drain], [2 .. 5], 'queue holds the right items in order');
            is($q->stats->{push_waiters}, 0, 'no waiter left registered');
        };

        subtest "$class ($kind): clear wakes a blocked producer" => sub {
            $q->push_multi(1 .. 4);
            my $pid = spawn(sub { wake_parent(clear => sub { $q->clear }) });
            my $t0 = now();
            ok($q->push_wait(9, 30), 'push_wait on a full queue succeeds after another process clears it');
            ok(now() - $t0 < 25, 'woken, not timed out');
            reap_ok($pid);
            is_deeply([$q->drain], [9], 'only the new item is left');
            is($q->stats->{push_waiters}, 0, 'no waiter left registered');
        };

        subtest "$class ($kind): pop_wait_multi is woken by another process" => sub {
            my $pid = spawn(sub { wake_parent(push_multi => sub { $q->push_multi(7, 8, 9) == 3 or die "push_multi\n" }) });
            my @got = $q->pop_wait_multi(8, 30);
            ok(@got >= 1 && @got <= 3, 'pop_wait_multi returns between 1 and 3 items (' . @got . ')');
            reap_ok($pid);
            push @got, $q->drain;
            is_deeply(\@got, [7, 8, 9], 'all items, in order');
        };

        subtest "$class ($kind): push_wait_multi on a full queue with a consumer child" => sub {
            $q->push_multi(-1, -2, -3, -4);
            my ($pid, $got) = consumer_child($q, 104);
            is($q->push_wait_multi(30, 1 .. 100), 100, 'push_wait_multi pushes all 100');
            reap_ok($pid, 'consumer got 104 items');
            is_deeply([$got->()], [-1, -2, -3, -4, 1 .. 100], 'consumer saw them all in order');
            ok($q->is_empty, 'queue empty');
        };

        subtest "$class ($kind): blocked consumers in several processes each get one item" => sub {
            my $out = fresh_path('several');
            my @pids = map {
                my $i = $_;
                spawn(sub {
                    my $v = $q->pop_wait(20);
                    defined $v or die "consumer $i timed out\n";
                    open my $fh, '>', "$out.$i" or die;
                    print {$fh} $v;
                    close $fh or die;
                });
            } 1 .. 4;
            wait_for(sub { $q->stats->{pop_waiters} >= 4 }, 5);
            ok(wait_asleep(\@pids), 'four consumers asleep on a futex');
            my $w0 = woken();
            for my $v (11 .. 14) {
                ok($q->push($v), "push $v");
                Time::HiRes::sleep(0.01);
            }
            cmp_ok(woken() - $w0, '>=', 4, 'the pushes woke four sleepers');
            my $clean = 0;
            $clean += reap($_) == 0 ? 1 : 0 for @pids;
            is($clean, 4, 'every blocked consumer was woken');
            my @got = sort map { open my $fh, '<', "$out.$_" or die; scalar <$fh> } 1 .. 4;
            is_deeply(\@got, [11 .. 14], 'each got a different item');
        };
    }

    subtest "$class: 1 producer, 1 consumer, 100k items in FIFO order" => sub {
        my $q = $class->new(undef, 64);
        my $N = 100_000;
        my $M = $class =~ /Int16$/ ? 30_000 : 1 << 30;    # keep values in range
        my $item = sub { $_[0] % $M };
        my $pid = spawn(sub { push_in_order($q, $N, $item) });
        my ($bad, $first_bad) = pop_in_order($q, $N, $item);
        is($bad, 0, "$N items in order") or diag($first_bad);
        reap_ok($pid, 'producer finished');
        my $s = $q->stats;
        is($s->{push_ok}, $N, 'push_ok');
        is($s->{pop_ok}, $N, 'pop_ok');
        is($s->{size}, 0, 'empty');
    };
}

done_testing;
