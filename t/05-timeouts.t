# Timeouts of every *_wait method: fractions of a second, 0 = try once,
# omitted/undef/negative/+Inf = wait forever, NaN croaks. Bounds are
# generous: at least 0.8 x the timeout, at most several times it.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Blocking;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(100);

my $T = 0.3;    # the timeout used throughout
my $D = 0.15;   # how long a child waits before it wakes the parent

for my $class (@INT_CLASSES) {
    subtest "$class: a timeout expires after about the requested time" => sub {
        my $q = $class->new(undef, 2);

        my $t0 = now();
        my $v = $q->pop_wait($T);
        my $dt = now() - $t0;
        is($v, undef, "pop_wait($T) on empty returns undef");
        between_ok($dt, 0.8 * $T, 10 * $T, 'pop_wait waited about the timeout');

        $t0 = now();
        my @list = $q->pop_wait($T);
        is_deeply(\@list, [undef], 'timed-out pop_wait in list context: (undef)');

        $t0 = now();
        @list = $q->pop_wait_multi(4, $T);
        $dt = now() - $t0;
        is_deeply(\@list, [], 'pop_wait_multi on empty returns an empty list on timeout');
        between_ok($dt, 0.8 * $T, 10 * $T, 'pop_wait_multi waited about the timeout');

        $q->push_multi(1, 2);
        $t0 = now();
        my $ok = $q->push_wait(3, $T);
        $dt = now() - $t0;
        ok(!$ok, 'push_wait on full returns false on timeout');
        between_ok($dt, 0.8 * $T, 10 * $T, 'push_wait waited about the timeout');

        $q->pop;
        $t0 = now();
        my $n = $q->push_wait_multi($T, 3, 4, 5);
        $dt = now() - $t0;
        is($n, 1, 'push_wait_multi pushed what fitted before the timeout');
        between_ok($dt, 0.8 * $T, 10 * $T, 'push_wait_multi waited about the timeout');
        is_deeply([$q->drain], [2, 3], 'queue holds the right items');

        $t0 = now();
        $v = $q->pop_wait('0.3');
        $dt = now() - $t0;
        between_ok($dt, 0.8 * $T, 10 * $T, 'a timeout given as a string');

        is($q->stats->{$_}, 0, "$_ back to 0 after the timeouts") for qw(pop_waiters push_waiters);
    };

    subtest "$class: timeout 0 tries once without sleeping" => sub {
        my $q = $class->new(undef, 2);
        my $t0 = now();
        is($q->pop_wait(0), undef, 'pop_wait(0) on empty');
        is_deeply([$q->pop_wait_multi(3, 0)], [], 'pop_wait_multi(n, 0) on empty');
        $q->push_multi(1, 2);
        ok(!$q->push_wait(3, 0), 'push_wait(v, 0) on full');
        is($q->push_wait_multi(0, 3, 4), 0, 'push_wait_multi(0, ...) on full');
        my $dt = now() - $t0;
        ok($dt < 1.0, 'four zero-timeout calls did not sleep') or diag("took ${dt}s");

        is($q->pop_wait(0), 1, 'pop_wait(0) with an item returns it');
        ok($q->push_wait(5, 0), 'push_wait(v, 0) with room pushes');
        is_deeply([$q->pop_wait_multi(5, 0)], [2, 5], 'pop_wait_multi(n, 0) with items');
        is($q->push_wait_multi(0, 6, 7, 8), 2, 'push_wait_multi(0, ...) pushes what fits');
        is($q->stats->{pop_waiters}, 0, 'no waiter left registered');
    };

    subtest "$class: tiny timeouts" => sub {
        my $q = $class->new(undef, 2);
        for my $t (1e-9, 1e-6, 0.001) {
            my $t0 = now();
            is($q->pop_wait($t), undef, "pop_wait($t) on empty");
            ok(now() - $t0 < 2, "pop_wait($t) returns promptly");
        }
    };

    my %forever = (
        'omitted'   => [],
        'undef'     => [undef],
        'negative'  => [-1],
        '-0.5'      => [-0.5],
        '+Inf'      => [INF],
        'huge'      => [1e12],
    );
    for my $how (sort keys %forever) {
        my @t = @{ $forever{$how} };
        subtest "$class: timeout $how waits until woken" => sub {
            my $q = $class->new(undef, 2);

            # t0 before the fork: the child sleeps $D from its own start, so
            # the wait cannot end sooner than $D after t0 however late the
            # parent runs again.
            my $t0 = now();
            my $pid = later($D, sub { $q->push(5) or die "push\n" });
            my $v = $q->pop_wait(@t);
            my $dt = now() - $t0;
            is($v, 5, "pop_wait($how) returns the item pushed later");
            ok($dt >= 0.8 * $D, 'it really waited for it') or diag("only ${dt}s");
            reap_ok($pid);

            $q->push_multi(1, 2);
            $t0 = now();
            $pid = later($D, sub { my $x = $q->pop; defined $x && $x == 1 or die "pop\n" });
            ok($q->push_wait(3, @t), "push_wait(v, $how) succeeds once a slot frees");
            ok(now() - $t0 >= 0.8 * $D, 'it really waited for the slot');
            reap_ok($pid);
            is_deeply([$q->drain], [2, 3], 'queue holds the right items');

            return unless $how eq 'omitted' || $how eq '+Inf' || $how eq 'negative';

            $pid = later($D, sub { $q->push_multi(6, 7) == 2 or die "push_multi\n" });
            my @got = $q->pop_wait_multi(2, @t);
            ok(@got >= 1 && $got[0] == 6, "pop_wait_multi(2, $how) returns items pushed later");
            reap_ok($pid);
            $q->clear;

            $q->push_multi(1, 2);
            $pid = later($D, sub { $q->pop_multi(2) == 2 or die "pop_multi\n" });
            # (its timeout is not optional: undef tries once, see t/46-drop-in.t)
            is($q->push_wait_multi(@t ? $t[0] : -1, 3, 4), 2,
               "push_wait_multi(" . (@t ? $how : -1) . ", ...) pushes everything once slots free");
            reap_ok($pid);
            is_deeply([$q->drain], [3, 4], 'queue holds the right items');
        };
    }

    subtest "$class: NaN timeouts croak" => sub {
        my $q = $class->new(undef, 4);
        $q->push(1);
        my $nan = NAN;
        ok($nan != $nan, 'have a NaN');
        eval { $q->pop_wait($nan) };
        like($@, qr/^\Q$class\E->pop_wait: .*not a number/, 'pop_wait(NaN)');
        eval { $q->push_wait(2, $nan) };
        like($@, qr/^\Q$class\E->push_wait: .*not a number/, 'push_wait(v, NaN)');
        eval { $q->pop_wait_multi(2, $nan) };
        like($@, qr/^\Q$class\E->pop_wait_multi: .*not a number/, 'pop_wait_multi(n, NaN)');
        eval { $q->push_wait_multi($nan, 2, 3) };
        like($@, qr/^\Q$class\E->push_wait_multi: .*not a number/, 'push_wait_multi(NaN, ...)');
        is_deeply([$q->drain], [1], 'nothing was pushed or popped by the croaking calls');
    };
}

done_testing;
