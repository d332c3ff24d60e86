# Perl signal handlers run while a queue operation waits; the wait then goes
# on for the time that is left. A handler that dies aborts the wait cleanly.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Blocking;
use Test::More;
use Time::HiRes qw(ualarm);

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

# SIGALRM belongs to the tests here: the watchdog uses a watcher process.
watchdog(100, process => 1);

sub clear_alarm { ualarm(0) }    # the handlers themselves are local()ized

for my $class (@INT_CLASSES) {
    my $q = $class->new(undef, 2);

    subtest "$class: a SIGALRM handler runs during pop_wait, which then returns the item" => sub {
        my $pid = later(0.4, sub { $q->push(99) or die "push\n" });
        my ($hits, $v, $dt) = signalled_wait(sub { $q->pop_wait(20) }, 100_000);
        is($hits, 1, 'the handler ran once');
        is($v, 99, 'the wait went on and returned the item pushed later');
        ok($dt >= 0.3, 'it did not return early') or diag("returned after ${dt}s");
        reap_ok($pid);
    };

    subtest "$class: a signal does not shorten or lengthen the timeout" => sub {
        my ($hits, $v, $dt) = signalled_wait(sub { $q->pop_wait(0.5) }, 150_000);
        is($hits, 1, 'the handler ran');
        is($v, undef, 'timed out');
        between_ok($dt, 0.4, 5, 'waited the full timeout, not restarted from the signal');
    };

    subtest "$class: repeated signals during one wait" => sub {
        my ($hits, $v, $dt) = signalled_wait(sub { $q->pop_wait(2) }, 50_000, 50_000);    # every 50 ms
        ok($hits >= 2, "the handler ran on every signal ($hits times)");
        is($v, undef, 'timed out');
        between_ok($dt, 1.6, 8, 'deadline kept across many interruptions');
    };

    subtest "$class: handlers run during push_wait, pop_wait_multi, push_wait_multi" => sub {
        my $hits = 0;
        local $SIG{ALRM} = sub { $hits++ };

        ualarm(100_000);
        my @got = $q->pop_wait_multi(2, 0.3);
        is_deeply(\@got, [], 'pop_wait_multi timed out');
        is($hits, 1, 'handler ran during pop_wait_multi');

        $q->push_multi(1, 2);
        ualarm(100_000);
        my $t0 = now();
        ok(!$q->push_wait(3, 0.3), 'push_wait timed out');
        ok(now() - $t0 >= 0.24, 'after the full timeout');
        is($hits, 2, 'handler ran during push_wait');

        ualarm(100_000);
        is($q->push_wait_multi(0.3, 3, 4), 0, 'push_wait_multi timed out');
        is($hits, 3, 'handler ran during push_wait_multi');

        my $pid = later(0.3, sub { $q->pop_multi(2) == 2 or die "pop_multi\n" });
        ualarm(100_000);
        is($q->push_wait_multi(20, 5, 6), 2, 'push_wait_multi completed after the signal');
        is($hits, 4, 'handler ran');
        reap_ok($pid);
        clear_alarm();
        is_deeply([$q->drain], [5, 6], 'queue contents');
    };

    subtest "$class: a handler that dies aborts pop_wait" => sub {
        local $SIG{ALRM} = sub { die "alarm went off\n" };
        ualarm(200_000);
        my $t0 = now();
        my $v = eval { $q->pop_wait(20) };
        my $err = $@;
        my $dt = now() - $t0;
        clear_alarm();
        is($err, "alarm went off\n", 'the exception propagates out of pop_wait');
        ok($dt < 10, 'the wait was aborted') or diag("took ${dt}s");
        is($q->stats->{pop_waiters}, 0, 'pop_waiters back to 0');
        ok($q->push(5), 'push works afterwards');
        is($q->pop_wait(1), 5, 'pop_wait works afterwards');
        my $pid = later(0.2, sub { $q->push(6) or die "push\n" });
        is($q->pop_wait(20), 6, 'a later wait is woken normally');
        reap_ok($pid);
    };

    subtest "$class: a handler that dies aborts pop_wait forever, push_wait and the multi waits" => sub {
        local $SIG{ALRM} = sub { die "boom\n" };

        ualarm(150_000);
        eval { $q->pop_wait };
        is($@, "boom\n", 'pop_wait() without a timeout is aborted');

        ualarm(150_000);
        eval { $q->pop_wait_multi(3) };
        is($@, "boom\n", 'pop_wait_multi is aborted');
        is($q->stats->{pop_waiters}, 0, 'pop_waiters back to 0');

        $q->push_multi(1, 2);
        ualarm(150_000);
        eval { $q->push_wait(3) };
        is($@, "boom\n", 'push_wait is aborted');
        ualarm(150_000);
        my $n = eval { $q->push_wait_multi(-1, 3, 4) };
        is($@, "boom\n", 'push_wait_multi is aborted');
        clear_alarm();
        is($q->stats->{push_waiters}, 0, 'push_waiters back to 0');
        is_deeply([$q->drain], [1, 2], 'nothing extra was pushed');
        ok($q->push_wait(7, 0) && $q->pop_wait(0) == 7, 'queue works afterwards');
    };

    subtest "$class: SIGINT from another process" => sub {
        my $hits = 0;
        local $SIG{INT} = sub { $hits++ };
        my $parent = $$;
        my $pid = spawn(sub {
            wait_for(sub { $q->stats->{pop_waiters} >= 1 }, 5);
            kill 'INT', $parent;
            Time::HiRes::sleep(0.3);
            $q->push(31) or die "push\n";
        });
        my $v = $q->pop_wait(20);
        is($hits, 1, 'the SIGINT handler ran during the wait');
        is($v, 31, 'the wait went on and returned the item');
        reap_ok($pid);
        clear_alarm();
    };
}

done_testing;
