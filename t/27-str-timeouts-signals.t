# Timeouts of every Str *_wait method (0 = try once, fractions, forever
# forms, NaN croaks), and Perl signal handlers running during a wait, which
# then goes on. Bounds are generous: at least 0.8 x the timeout, at most
# several times it.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Blocking;
use Test::More;
use Time::HiRes qw(ualarm);

use Data::Queue::Shared::Str;

# SIGALRM belongs to the tests here: the watchdog uses a watcher process.
watchdog(120, process => 1);

my $CLASS = 'Data::Queue::Shared::Str';
my $T = 0.3;     # the timeout used throughout
my $D = 0.15;    # how long a child waits before it acts

subtest 'a timeout expires after about the requested time' => sub {
    my $q = $CLASS->new(undef, 2);
    for my $m (qw(pop_wait pop_back_wait)) {
        my $t0 = now();
        my $v = $q->$m($T);
        my $dt = now() - $t0;
        is($v, undef, "$m($T) on empty returns undef");
        between_ok($dt, 0.8 * $T, 10 * $T, "$m waited about the timeout");
        is_deeply([$q->$m($T)], [undef], "timed-out $m in list context: (undef)");
    }

    my $t0 = now();
    my @list = $q->pop_wait_multi(4, $T);
    my $dt = now() - $t0;
    is_deeply(\@list, [], 'pop_wait_multi on empty returns an empty list on timeout');
    between_ok($dt, 0.8 * $T, 10 * $T, 'pop_wait_multi waited about the timeout');

    $q->push_multi('a', 'b');
    for my $m (qw(push_wait push_front_wait)) {
        $t0 = now();
        my $ok = $q->$m('c', $T);
        $dt = now() - $t0;
        ok(!$ok, "$m on full returns false on timeout");
        between_ok($dt, 0.8 * $T, 10 * $T, "$m waited about the timeout");
    }

    $q->pop;
    $t0 = now();
    my $n = $q->push_wait_multi($T, qw(c d e));
    $dt = now() - $t0;
    is($n, 1, 'push_wait_multi pushed what fitted before the timeout');
    between_ok($dt, 0.8 * $T, 10 * $T, 'push_wait_multi waited about the timeout');
    is_deeply([$q->drain], [qw(b c)], 'queue holds the right items');

    $t0 = now();
    $q->pop_wait('0.3');
    between_ok(now() - $t0, 0.8 * $T, 10 * $T, 'a timeout given as a string');
    is($q->stats->{$_}, 0, "$_ back to 0 after the timeouts") for qw(pop_waiters push_waiters);
};

subtest 'timeout 0 tries once without sleeping' => sub {
    my $q = $CLASS->new(undef, 2);
    my $t0 = now();
    is($q->pop_wait(0), undef, 'pop_wait(0) on empty');
    is($q->pop_back_wait(0), undef, 'pop_back_wait(0) on empty');
    is_deeply([$q->pop_wait_multi(3, 0)], [], 'pop_wait_multi(n, 0) on empty');
    $q->push_multi('a', 'b');
    ok(!$q->push_wait('c', 0), 'push_wait(v, 0) on full');
    ok(!$q->push_front_wait('c', 0), 'push_front_wait(v, 0) on full');
    is($q->push_wait_multi(0, 'c', 'd'), 0, 'push_wait_multi(0, ...) on full');
    my $dt = now() - $t0;
    ok($dt < 1.0, 'six zero-timeout calls did not sleep') or diag("took ${dt}s");

    is($q->pop_wait(0), 'a', 'pop_wait(0) with an item returns it');
    ok($q->push_front_wait('z', 0), 'push_front_wait(v, 0) with room pushes');
    is($q->pop_back_wait(0), 'b', 'pop_back_wait(0) returns the tail');
    is_deeply([$q->pop_wait_multi(5, 0)], ['z'], 'pop_wait_multi(n, 0) with items');
    is($q->stats->{pop_waiters}, 0, 'no waiter left registered');
};

my %forever = (
    'omitted'  => [],
    'undef'    => [undef],
    'negative' => [-1],
    '+Inf'     => [INF],
);
for my $how (sort keys %forever) {
    my @t = @{ $forever{$how} };
    subtest "timeout $how waits until woken" => sub {
        my $q = $CLASS->new(undef, 2);
        for my $m (qw(pop_wait pop_back_wait)) {
            my $pid = later($D, sub { $q->push("late $m") or die "push\n" });
            my $t0 = now();
            my $v = $q->$m(@t);
            is($v, "late $m", "$m($how) returns the item pushed later");
            ok(now() - $t0 >= 0.8 * $D, 'it really waited for it');
            reap_ok($pid);
        }
        for my $m (qw(push_wait push_front_wait)) {
            $q->push_multi('x', 'y');
            my $pid = later($D, sub { defined $q->pop or die "pop\n" });
            my $t0 = now();
            ok($q->$m('new', @t), "$m(v, $how) succeeds once a slot frees");
            ok(now() - $t0 >= 0.8 * $D, 'it really waited for the slot');
            reap_ok($pid);
            $q->clear;
        }
        my $pid = later($D, sub { $q->push_multi('m1', 'm2') == 2 or die "push_multi\n" });
        my @got = $q->pop_wait_multi(2, @t);
        ok(@got >= 1 && $got[0] eq 'm1', "pop_wait_multi(2, $how) returns items pushed later");
        reap_ok($pid);
        $q->clear;
        is($q->stats->{$_}, 0, "$_ back to 0") for qw(pop_waiters push_waiters);
    };
}

subtest 'NaN timeouts croak' => sub {
    my $q = $CLASS->new(undef, 4);
    $q->push('keep');
    my $nan = NAN;
    ok($nan != $nan, 'have a NaN');
    my %calls = (
        pop_wait        => sub { $q->pop_wait($nan) },
        pop_back_wait   => sub { $q->pop_back_wait($nan) },
        push_wait       => sub { $q->push_wait('v', $nan) },
        push_front_wait => sub { $q->push_front_wait('v', $nan) },
        pop_wait_multi  => sub { $q->pop_wait_multi(2, $nan) },
        push_wait_multi => sub { $q->push_wait_multi($nan, 'v', 'w') },
    );
    for my $m (sort keys %calls) {
        eval { $calls{$m}->() };
        like($@, qr/^\Q$CLASS\E->\Q$m\E: .*not a number/, "$m with a NaN timeout croaks");
    }
    is_deeply([$q->drain], ['keep'], 'nothing was pushed or popped by the croaking calls');
};

subtest 'a SIGALRM handler runs during pop_wait, which then goes on' => sub {
    my $q = $CLASS->new(undef, 2);
    my $pid = later(0.4, sub { $q->push('after the signal') or die "push\n" });
    my ($hits, $v, $dt) = signalled_wait(sub { $q->pop_wait(20) }, 100_000);
    is($hits, 1, 'the handler ran once');
    is($v, 'after the signal', 'the wait went on and returned the item pushed later');
    ok($dt >= 0.3, 'it did not return early') or diag("returned after ${dt}s");
    reap_ok($pid);

    ($hits, $v, $dt) = signalled_wait(sub { $q->pop_back_wait(2) }, 50_000, 50_000);
    ok($hits >= 2, "the handler ran on every signal ($hits times) during pop_back_wait");
    is($v, undef, 'timed out');
    between_ok($dt, 1.6, 8, 'deadline kept across many interruptions');

    $q->push_multi('a', 'b');
    $pid = later(0.4, sub { $q->pop eq 'a' or die "pop\n" });
    ($hits, $v) = signalled_wait(sub { $q->push_front_wait('f', 20) }, 100_000);
    ok($v, 'push_front_wait completes after the signal');
    is($hits, 1, 'the handler ran during push_front_wait');
    reap_ok($pid);
    is_deeply([$q->drain], ['f', 'b'], 'contents');
};

subtest 'a handler that dies aborts the wait cleanly' => sub {
    my $q = $CLASS->new(undef, 2);
    local $SIG{ALRM} = sub { die "alarm went off\n" };
    ualarm(150_000);
    my $t0 = now();
    eval { $q->pop_wait(20) };
    ualarm(0);
    is($@, "alarm went off\n", 'the exception propagates out of pop_wait');
    ok(now() - $t0 < 10, 'the wait was aborted');
    is($q->stats->{pop_waiters}, 0, 'pop_waiters back to 0');

    $q->push_multi('a', 'b');
    ualarm(150_000);
    eval { $q->push_wait('c') };
    ualarm(0);
    is($@, "alarm went off\n", 'push_wait without a timeout is aborted');
    is($q->stats->{push_waiters}, 0, 'push_waiters back to 0');
    is_deeply([$q->drain], ['a', 'b'], 'nothing extra was pushed');

    my $pid = spawn(sub { $q->push('x') or die "push\n"; $q->pop eq 'x' or die "pop\n" }, timeout => 10);
    reap_ok($pid, 'the lock is free: another process pushes and pops');
    ok($q->push_wait('y', 0) && $q->pop_wait(0) eq 'y', 'queue works afterwards');
};

done_testing;
