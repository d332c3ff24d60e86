# Str lock crash takeover: a process killed while holding the queue lock
# (DQS_TEST_KILL_POINT makes it SIGKILL itself there) is detected as dead,
# reaped or still a zombie, and the next caller takes the lock over, counts
# it in `recoveries`, and finds the queue consistent. A holder that is only
# stopped is never taken over: callers honour their lock timeout, their
# deadline and their signals, and take over once it is killed.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use POSIX ();
use Time::HiRes ();

use Data::Queue::Shared::Str;

watchdog(120, process => 1);

my $CLASS = 'Data::Queue::Shared::Str';
my $dir   = tmpdir();
my $seq   = 0;

sub ceil8 { my $n = shift; ($n + 7) & ~7 }



# Format 7: two locks, the front one at header offset 72 and the back one
# at 136. The holders below stop or die in push_front, which holds both;
# the pops that wait for them wait for the front lock.
sub lock_word_owner { header_u32($_[0], $_[1] ? 136 : 72) & 0x7fff_ffff }

# Lockers counted to sleep on the front lock (the low 16 bits of its
# sleepers word).
sub lock_sleepers { header_u32($_[0], 76) & 0xffff }

for my $reaped (1, 0) {
    subtest 'holder killed with the lock held, ' . ($reaped ? 'reaped' : 'a zombie') => sub {
        my $path = "$dir/t" . $seq++ . '.shm';
        my $q = $CLASS->new($path, 16);
        ok($q->push("item$_"), "push $_") for 1 .. 3;
        my $pid = doomed_at($CLASS, $path, 'str_lock_held', sub { $_[0]->push_front('never') });
        if ($reaped) {
            my $st = reap($pid);
            is($st & 127, 9, 'the holder died of SIGKILL');
        }
        else {
            ok(wait_for(sub { proc_state($pid) eq 'Z' }, 10), 'the holder is a zombie');
        }
        is(lock_word_owner($path), $pid, 'the front lock word still names the dead holder');
        is(lock_word_owner($path, 1), $pid, 'and so does the back lock word');
        my $t0 = now();
        is($q->pop, 'item1', 'pop takes the lock over and works');
        my $took = now() - $t0;
        ok($took < 5, 'takeover within 5 s') or diag("took ${took}s");
        is($q->stats->{recoveries}, 1, 'one recovery counted');
        is_deeply([$q->drain], ['item2', 'item3'], 'the rest is intact; the dead push is absent');
        ok($q->push('after'), 'push works after the takeover');
        is($q->pop, 'after', 'and pop');
        is($q->stats->{recoveries}, 2,
           'the push took the back lock over: one recovery per lock the dead holder held');
        reap($pid) unless $reaped;
        $q->unlink;
    };
}

subtest 'a holder stopped for seconds is not taken over; once killed, it is' => sub {
    my $path = "$dir/t" . $seq++ . '.shm';
    my $q = $CLASS->new($path, 16);
    $q->push('x');
    my $holder = doomed_at($CLASS, $path, 'str_lock_stop', sub { $_[0]->push_front('held') });
    ok(wait_for(sub { proc_state($holder) eq 'T' }, 10), 'the holder stopped with the lock');
    my $waiter = spawn(sub {
        my $w = $CLASS->new($path, 16);
        my $v = $w->pop_wait(30);
        die "waiter got " . ($v // 'undef') . "\n" unless defined $v && $v eq 'x';
    });
    # Stopped for several seconds: many poll intervals, many liveness
    # checks, and every one of them must find the holder alive.
    my $end = now() + 3.5;
    my ($waiting, $taken, $named) = (1, 0, 1);
    while (now() < $end) {
        Time::HiRes::sleep(0.25);
        $waiting &&= proc_state($waiter) =~ /^[SR]$/;
        $taken   ||= $q->stats->{recoveries};
        $named   &&= lock_word_owner($path) == $holder;
    }
    ok($waiting, 'the waiter kept waiting for 3.5 s');
    is($taken, 0, 'no takeover of a stopped holder');
    ok($named, 'the lock word named the stopped holder throughout');
    is(proc_state($holder), 'T', 'the holder is still stopped');
    kill 'KILL', $holder;
    reap_ok($waiter, 'the waiter took over and popped');
    reap($holder);
    is($q->stats->{recoveries}, 1, 'one recovery');
    is($q->size, 0, 'the stopped push never happened');
    $q->unlink;
};

# The waiter's sleeps are cut short every 2 ms by SIGALRM (a Perl handler
# that returns): it must judge the holder stuck by the time that passes,
# not by a sleep of a whole poll interval, and an interrupted lock wait
# must still look at the holder before it lets the handler run.
for my $how (qw(pop_wait pop)) {
    subtest "a waiter in $how under a signal storm takes over when the holder dies" => sub {
        my $path = "$dir/t" . $seq++ . '.shm';
        my $q = $CLASS->new($path, 16);
        $q->push('x');
        my $holder = doomed_at($CLASS, $path, 'str_lock_stop', sub { $_[0]->push_front('held') });
        ok(wait_for(sub { proc_state($holder) eq 'T' }, 10), 'the holder stopped with the lock');
        my $waiter = spawn(sub {
            my $w = $CLASS->new($path, 16);
            my $n = 0;
            local $SIG{ALRM} = sub { $n++ };
            Time::HiRes::setitimer(Time::HiRes::ITIMER_REAL(), 0.002, 0.002);
            my $v = $how eq 'pop_wait' ? $w->pop_wait(60) : $w->pop;
            Time::HiRes::setitimer(Time::HiRes::ITIMER_REAL(), 0);
            die "waiter got " . ($v // 'undef') . " after $n signals\n"
                unless defined $v && $v eq 'x';
            # pop_wait runs the handler during the wait; pop only after.
            die "only $n signals handled\n" if $how eq 'pop_wait' && $n < 20;
        });
        if ($how eq 'pop_wait') {
            Time::HiRes::sleep(0.5);
        }
        else {
            # A non-blocking call runs Perl handlers only when it returns,
            # and perl gives up after 120 pending signals (240 ms here):
            # kill the holder as soon as the waiter counts itself a
            # sleeper, i.e. waits in the lock.
            ok(wait_for(sub { lock_sleepers($path) == 1 }, 10),
               'the waiter waits in the lock');
        }
        is(waitpid($waiter, POSIX::WNOHANG()), 0, 'the waiter is still waiting');
        is($q->stats->{recoveries}, 0, 'no takeover of the stopped holder');
        my $t0 = now();
        kill 'KILL', $holder;
        reap_ok($waiter, 'the signalled waiter took over and popped');
        # A few ms; before the fix it took until a gap between signals
        # happened to exceed the poll interval (2 to 23 s measured).
        my $took = now() - $t0;
        ok($took < 5, 'takeover within 5 s of the kill') or diag("took ${took}s");
        reap($holder);
        is($q->stats->{recoveries}, 1, 'one recovery');
        is(lock_sleepers($path), 0, 'the waiter took its sleeper count back');
        ok($q->push('y') && $q->pop eq 'y', 'the queue works');
        $q->unlink;
    };
}

subtest 'a stopped holder: lock_timeout, deadlines and signals' => sub {
    my $path = "$dir/t" . $seq++ . '.shm';
    my $q = $CLASS->new($path, 16);
    $q->push('x');
    is($q->lock_timeout, undef, 'lock_timeout is undef (wait forever) by default');
    my $holder = doomed_at($CLASS, $path, 'str_lock_stop', sub { $_[0]->push_front('held') });
    ok(wait_for(sub { proc_state($holder) eq 'T' }, 10), 'the holder stopped with the lock');

    is($q->lock_timeout(0.2), 0.2, 'lock_timeout set');
    is($q->lock_timeout, 0.2, 'and read back');
    for my $call (
        [push => sub { $q->push('y') }],
        [pop  => sub { $q->pop }],
        [peek => sub { $q->peek }],
        [pop_multi => sub { my @l = $q->pop_multi(2); $l[0] }],
    ) {
        my ($name, $code) = @$call;
        $! = 0;
        my $t0 = now();
        my $r = $code->();
        my $el = now() - $t0;
        ok(!$r, "$name returns false on a lock held by a stopped process");
        ok($!{ETIMEDOUT}, "$name sets \$! to ETIMEDOUT") or diag("\$! = $!");
        between_ok($el, 0.15, 5, "$name waited about the lock timeout");
        is(lock_sleepers($path), 0, "$name took its sleeper count back");
    }

    $q->lock_timeout(undef);
    is($q->lock_timeout, undef, 'lock_timeout back to undef');
    my $t0 = now();
    is($q->pop_wait(0.3), undef, 'pop_wait times out at its deadline');
    between_ok(now() - $t0, 0.25, 5, 'pop_wait waited about its timeout');
    $t0 = now();
    ok(!$q->push_wait('z', 0.3), 'push_wait times out at its deadline');
    between_ok(now() - $t0, 0.25, 5, 'push_wait waited about its timeout');

    my $fired = 0;
    local $SIG{USR1} = sub { $fired++; die "usr1\n" };
    my $parent = $$;
    my $sig = spawn(sub { Time::HiRes::sleep(0.3); kill 'USR1', $parent });
    $t0 = now();
    my $r = eval { $q->pop_wait(20); 1 };
    is($@, "usr1\n", 'a signal handler runs (and may die) during a lock wait');
    ok(now() - $t0 < 10, 'well before the deadline');
    reap_ok($sig);

    is($q->stats->{recoveries}, 0, 'a stopped holder is never taken over');
    kill 'KILL', $holder;
    reap($holder);
    is($q->pop, 'x', 'after the kill, pop takes over');
    is($q->stats->{recoveries}, 1, 'one recovery');
    eval { $q->lock_timeout('soon') };
    like($@, qr/^\Q$CLASS\E->lock_timeout: timeout must be a number/, 'a bad timeout croaks');
    eval { $q->lock_timeout(-1) };
    like($@, qr/timeout must be a number of seconds/, 'a negative timeout croaks');
    $q->unlink;
};

done_testing;
