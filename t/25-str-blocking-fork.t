# Str queues across processes: handles inherited by fork, blocking in both
# directions (full by count and full by arena) at both ends, deque
# operations seen from another process, clear and batches waking every
# waiter they should, and producer/consumer processes moving many strings.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Backing;
use DQSTest::Blocking;
use DQSTest::Files;
use Test::More;

# Waits sleep until woken or timed out, never a slice at a time: a lost
# wake-up costs the whole wait (and fails) instead of a quarter second.
BEGIN { $ENV{DQS_TEST_NO_SLICE} = 1 }
use Data::Queue::Shared::Str;

watchdog(240);

my $CLASS = 'Data::Queue::Shared::Str';
my $dir   = scratch_dir();

my %q     = queues_of($CLASS, 4);
my %arena = queues_of($CLASS, 16, 4096);

for my $kind (qw(anon file memfd)) {
    my $q  = $q{$kind};
    my $aq = $arena{$kind};

    subtest "$kind: a handle made before fork works in the child" => sub {
        $q->push_multi('p1', 'p2');
        my $pid = spawn(sub {
            my @got = $q->drain;
            "@got" eq 'p1 p2' or die "child drained '@got'\n";
            $q->push_multi('c1', "c2\0\x{263a}") == 2 or die "child push_multi\n";
            $q->stats->{capacity} == 4 or die "capacity\n";
        });
        reap_ok($pid, 'child drained the parent\'s items and pushed its own');
        my @got = $q->drain;
        is_deeply(\@got, ['c1', "c2\0\x{263a}"], 'parent sees the child\'s items, bytes and flag intact');
        ok(utf8::is_utf8($got[1]), 'the UTF-8 flag crossed the process boundary');
    };

    subtest "$kind: pop_wait and pop_back_wait are woken by another process" => sub {
        for my $m (qw(pop_wait pop_back_wait)) {
            for my $timeout (undef, 30) {
                my $label = defined $timeout ? "$m($timeout)" : "$m()";
                my $pid = spawn(sub { await_waiters($q, 'pop_waiters'); $q->push("for $label") or die "push\n" });
                my $t0 = now();
                my $v = $q->$m(defined $timeout ? $timeout : ());
                is($v, "for $label", "$label returns the child's item");
                ok(now() - $t0 < 20, "$label: woken, not timed out");
                reap_ok($pid);
            }
        }
        is($q->stats->{pop_waiters}, 0, 'no waiter left registered');
    };

    subtest "$kind: push_wait and push_front_wait on a full queue are woken by a pop" => sub {
        $q->push_multi(qw(a b c d));
        ok($q->is_full, 'full');
        my $pid = spawn(sub {
            await_waiters($q, 'push_waiters');
            my $v = $q->pop;
            defined $v && $v eq 'a' or die "child popped ", $v // 'undef', "\n";
        });
        ok($q->push_wait('e', 30), 'push_wait succeeds once the child pops');
        reap_ok($pid);
        is_deeply([$q->drain], [qw(b c d e)], 'queue holds the right items in order');

        $q->push_multi(qw(a b c d));
        $pid = spawn(sub {
            await_waiters($q, 'push_waiters');
            my $v = $q->pop_back;
            defined $v && $v eq 'd' or die "child pop_back ", $v // 'undef', "\n";
        });
        ok($q->push_front_wait('z'), 'push_front_wait (no timeout) succeeds once the child pops the back');
        reap_ok($pid);
        is_deeply([$q->drain], [qw(z a b c)], 'the new item is at the head');
        is($q->stats->{push_waiters}, 0, 'no waiter left registered');
    };

    subtest "$kind: producers blocked on a full arena are woken by a pop" => sub {
        $aq->push('A' x 4000);
        ok(!$aq->is_full, 'not full by count');
        my $pid = spawn(sub {
            await_waiters($aq, 'push_waiters');
            my $v = $aq->pop;
            defined $v && length $v == 4000 or die "child pop\n";
        });
        ok($aq->push_wait('B' x 3000, 30), 'push_wait of 3000 bytes succeeds once the child frees the arena');
        reap_ok($pid);

        $pid = spawn(sub {
            await_waiters($aq, 'push_waiters');
            my $v = $aq->pop_back;
            defined $v && $v eq 'B' x 3000 or die "child pop_back\n";
        });
        ok($aq->push_front_wait('C' x 2000, 30), 'push_front_wait of 2000 bytes succeeds after a pop_back');
        reap_ok($pid);
        is_deeply([$aq->drain], ['C' x 2000], 'contents');
        is($aq->stats->{arena_used}, 0, 'arena empty');
    };

    subtest "$kind: deque operations across processes" => sub {
        $q->push_multi('m1', 'm2');
        my $pid = spawn(sub {
            $q->push_front('from child') or die "push_front\n";
            my $v = $q->pop_back;
            $v eq 'm2' or die "child pop_back got $v\n";
        });
        reap_ok($pid, 'child pushed at the front and popped the back');
        is($q->peek, 'from child', 'parent sees the child\'s push_front at the head');
        is_deeply([$q->drain], ['from child', 'm1'], 'contents');

        $pid = spawn(sub {
            my $v = $q->pop_back_wait(20);
            defined $v && $v eq 'tail' or die "child pop_back_wait got ", $v // 'undef', "\n";
            my $w = $q->pop_wait(20);
            defined $w && $w eq 'head' or die "child pop_wait got ", $w // 'undef', "\n";
        });
        wait_for(sub { $q->stats->{pop_waiters} >= 1 }, 5);
        $q->push_multi('head', 'tail');
        reap_ok($pid, 'child took the tail with pop_back_wait, then the head');
        ok($q->is_empty, 'empty');
    };

    subtest "$kind: clear wakes every blocked producer at once" => sub {
        for my $how ('count', 'arena') {
            my $qq = $how eq 'count' ? $q : $aq;
            my $item = $how eq 'count' ? 'p' : 'p' x 1000;    # 3 x 1000 fit after clear
            if ($how eq 'count') { $qq->push_multi(qw(a b c d)) } else { $qq->push('F' x 4090) }
            my @pids = map {
                my $i = $_;
                spawn(sub {
                    my $t0 = now();
                    $qq->push_wait("$item$i", 20) or die "producer $i timed out\n";
                    my $dt = now() - $t0;
                    die "producer $i was woken only after ${dt}s\n" if $dt > 10;
                });
            } 1 .. 3;
            wait_for(sub { $qq->stats->{push_waiters} >= 3 }, 5);
            ok(wait_asleep(\@pids), "$how: three producers asleep on a futex");
            is($qq->stats->{push_waiters}, 3, "$how: three producers are blocked");
            my $w0 = woken();
            $qq->clear;
            cmp_ok(woken() - $w0, '>=', 3, "$how: clear woke three sleepers");
            my $clean = 0;
            $clean += reap($_) == 0 ? 1 : 0 for @pids;
            is($clean, 3, "$how: one clear unblocked all three producers");
            is_deeply([sort $qq->drain], [map { "$item$_" } 1 .. 3], "$how: all three items are in");
            is($qq->stats->{push_waiters}, 0, "$how: no waiter left registered");
        }
    };

    subtest "$kind: a batch wakes as many consumers as items it moved" => sub {
        for my $how (qw(push_multi push_wait_multi)) {
            my $out = fresh_path('batch');
            my @pids = map {
                my $i = $_;
                spawn(sub {
                    my $t0 = now();
                    my $v = $q->pop_wait(20);
                    defined $v or die "consumer $i timed out\n";
                    my $dt = now() - $t0;
                    die "consumer $i was woken only after ${dt}s\n" if $dt > 10;
                    spew("$out.$i", $v);
                });
            } 1 .. 3;
            wait_for(sub { $q->stats->{pop_waiters} >= 3 }, 5);
            ok(wait_asleep(\@pids), "$how: three consumers asleep on a futex");
            is($q->stats->{pop_waiters}, 3, "$how: three consumers are blocked");
            my $w0 = woken();
            my $n = $how eq 'push_multi' ? $q->push_multi(qw(x1 x2 x3))
                                         : $q->push_wait_multi(5, qw(x1 x2 x3));
            is($n, 3, "$how of 3 items");
            cmp_ok(woken() - $w0, '>=', 3, "$how: the batch woke three sleepers");
            my $clean = 0;
            $clean += reap($_) == 0 ? 1 : 0 for @pids;
            is($clean, 3, "$how: every blocked consumer was woken");
            my @got = sort map { slurp("$out.$_") // 'none' } 1 .. 3;
            is_deeply(\@got, [qw(x1 x2 x3)], "$how: each got a different item");
        }

        for my $how (qw(pop_multi drain)) {
            $aq->push_multi(map { 'z' x 1000 } 1 .. 4);    # 4000 of 4096 bytes
            my @pids = map {
                my $i = $_;
                spawn(sub {
                    my $t0 = now();
                    $aq->push_wait("q$i" x 300, 20) or die "producer $i timed out\n";
                    my $dt = now() - $t0;
                    die "producer $i was woken only after ${dt}s\n" if $dt > 10;
                });
            } 1 .. 3;
            wait_for(sub { $aq->stats->{push_waiters} >= 3 }, 5);
            ok(wait_asleep(\@pids), "$how: three producers asleep on a futex");
            my $w0 = woken();
            my @got = $how eq 'pop_multi' ? $aq->pop_multi(3) : $aq->drain;
            ok(@got >= 3, "$how took " . scalar(@got) . ' items');
            cmp_ok(woken() - $w0, '>=', 3, "$how woke the three sleepers");
            my $clean = 0;
            $clean += reap($_) == 0 ? 1 : 0 for @pids;
            is($clean, 3, "$how: every blocked producer was woken");
            my @left = grep { /^q/ } @got, $aq->drain;
            is(scalar @left, 3, "$how: their items are in");
        }
    };

    subtest "$kind: pop_wait_multi is woken by another process; byte budget across processes" => sub {
        my $pid = spawn(sub { await_waiters($q, 'pop_waiters'); $q->push_multi(qw(s1 s2 s3)) == 3 or die "push_multi\n" });
        my @got = $q->pop_wait_multi(8, 30);
        ok(@got >= 1 && @got <= 3, 'pop_wait_multi returns between 1 and 3 items (' . @got . ')');
        reap_ok($pid);
        push @got, $q->drain;
        is_deeply(\@got, [qw(s1 s2 s3)], 'all items, in order');

        $pid = spawn(sub { await_waiters($q, 'pop_waiters'); $q->push_multi('0123456789', 'abcdefghij', 'ABCDEFGHIJ') == 3 or die "push_multi\n" });
        @got = $q->pop_wait_multi(8, 30, 15);
        is(scalar @got, 1, 'pop_wait_multi with a 15-byte budget returns one 10-byte item');
        reap_ok($pid);
        $q->clear;
    };

    subtest "$kind: push_wait_multi on a full queue with a consumer child" => sub {
        $q->push_multi(qw(-1 -2 -3 -4));
        my @items = map { "item $_ " . ('.' x ($_ % 40)) } 1 .. 100;
        my ($pid, $got) = consumer_child($q, 104);
        is($q->push_wait_multi(30, @items), 100, 'push_wait_multi pushes all 100');
        reap_ok($pid, 'consumer got 104 items');
        is_deeply([$got->()], [qw(-1 -2 -3 -4), @items], 'consumer saw them all in order');
        ok($q->is_empty, 'queue empty');
    };
}

subtest '1 producer, 1 consumer: 50000 strings of varying length, in order' => sub {
    my $q = $CLASS->new(undef, 64);
    my $N = 50_000;
    my $item = sub { my $i = shift; "$i:" . ('x' x ($i % 300)) };
    my $pid = spawn(sub { push_in_order($q, $N, $item) }, timeout => 120);
    my ($bad, $first_bad) = pop_in_order($q, $N, $item,
                                         sub { substr($_[0], 0, 20) . '... (' . length($_[0]) . ' bytes)' });
    is($bad, 0, "$N strings in order and intact") or diag($first_bad);
    reap_ok($pid, 'producer finished');
    my $s = $q->stats;
    is($s->{push_ok}, $N, 'push_ok');
    is($s->{pop_ok}, $N, 'pop_ok');
    is($s->{size}, 0, 'empty');
    is($s->{arena_used}, 0, 'arena_used 0');
};

# Producers push "p:i:padding" (P FIFO streams); consumers pop with a mix of
# methods until a flag says the producers are done and the queue is empty.
sub stress {
    my (%o) = @_;
    my ($q, $P, $C, $EACH, $tag, $deque) = @o{qw(queue producers consumers each tag deque)};
    my $TOTAL = $P * $EACH;
    my $flag = "$dir/$tag.done";
    my $item = sub { my ($p, $i) = @_; "$p:$i:" . ('#' x (($p * 31 + $i) % 200)) };

    my @consumers = map {
        my $c = $_;
        spawn(sub {
            my @got;
            while (1) {
                my @v = $deque && $c % 2 ? $q->pop_back
                      : $c % 3 == 0      ? $q->pop_multi(8, 600)
                      :                    $q->pop;
                @v = () if @v == 1 && !defined $v[0];
                if (!@v) {
                    if (-e $flag) {
                        @v = $q->drain;
                        last unless @v;
                    }
                    else {
                        @v = $c % 2  ? $q->pop_wait_multi(8, 0.02)
                           : $deque ? $q->pop_back_wait(0.02)
                           :          $q->pop_wait(0.02);
                        @v = () if @v == 1 && !defined $v[0];
                    }
                }
                push @got, @v;
            }
            spew("$dir/$tag.c$c", join '', map { "$_\n" } @got);
        }, timeout => 150);
    } 0 .. $C - 1;
    my @producers = map {
        my $p = $_;
        spawn(sub {
            my @vals = map { $item->($p, $_) } 0 .. $EACH - 1;
            if ($deque && $p % 2) {
                for my $v (@vals) { $q->push_front($v) or $q->push_front_wait($v, 10) or die "stuck\n" }
            }
            elsif ($p % 2) {
                for my $v (@vals) { $q->push($v) or $q->push_wait($v, 10) or die "stuck\n" }
            }
            else {
                while (@vals) {
                    my $n = $q->push_multi(@vals[0 .. ($#vals < 9 ? $#vals : 9)]);
                    splice @vals, 0, $n;
                    $q->push_wait($vals[0], 0.02) && shift @vals if !$n && @vals;
                }
            }
        }, timeout => 150);
    } 0 .. $P - 1;

    my $ok = 0;
    $ok += reap($_) == 0 ? 1 : 0 for @producers;
    is($ok, $P, 'every producer finished cleanly');
    spew($flag, '');
    $ok = 0;
    $ok += reap($_) == 0 ? 1 : 0 for @consumers;
    is($ok, $C, 'every consumer finished cleanly');

    my (@all, $order_bad);
    for my $c (0 .. $C - 1) {
        my $data = slurp("$dir/$tag.c$c");
        next unless defined $data;
        my @got = split /\n/, $data;
        push @all, @got;
        next if $deque;
        my %last;
        for my $v (@got) {
            my ($p, $i) = split /:/, $v;
            $order_bad //= "consumer $c saw $p:$i after $p:$last{$p}"
                if defined $last{$p} && $i <= $last{$p};
            $last{$p} = $i;
        }
    }
    is(scalar @all, $TOTAL, "consumers popped exactly $TOTAL items");
    my %want = map { my $p = $_; map { ($item->($p, $_) => 1) } 0 .. $EACH - 1 } 0 .. $P - 1;
    my %seen;
    my @bad = grep { !delete $want{$_} || $seen{$_}++ } @all;
    ok(!@bad && !%want, 'the popped multiset equals the pushed one, every string intact')
        or diag(scalar(@bad) . ' unexpected or duplicated, ' . scalar(keys %want) . ' missing');
    ok(!defined $order_bad, 'each consumer saw each producer\'s items in order') or diag($order_bad)
        unless $deque;

    my $s = $q->stats;
    is($s->{push_ok}, $TOTAL, 'stats push_ok is exact');
    is($s->{pop_ok}, $TOTAL, 'stats pop_ok is exact');
    is($s->{size}, 0, 'stats size 0');
    is($s->{arena_used}, 0, 'arena_used 0');
    is($s->{push_waiters}, 0, 'no push waiters left');
    is($s->{pop_waiters}, 0, 'no pop waiters left');
    note("lock_acquired $s->{lock_acquired}, lock_contended $s->{lock_contended}, "
       . "push_full $s->{push_full}, pop_empty $s->{pop_empty}");
}

# The pattern of the cross-process benchmark: a child pushes with the
# non-blocking push, retrying while the queue is full; the parent pops
# non-blocking until it has every item. A pop that finds the queue empty
# and a push that finds every slot taken answer without the lock (from the
# item count the last commit stored beside the state switch), so with one
# producer and one consumer the lock is taken exactly once per item moved,
# however many times each side polled.
subtest 'non-blocking push and pop polling across processes' => sub {
    my $N = 3000;
    for my $kind (qw(anon file memfd)) {
        my %fresh = queues_of($CLASS, 4);
        my $q   = $fresh{$kind};
        my $pad = 'p' x 40;
        my $pid = spawn(sub {
            for my $i (1 .. $N) { 1 until $q->push("$i:$pad") }
        });
        my ($got, $bad) = (0, undef);
        while ($got < $N) {
            my $v = $q->pop;
            next unless defined $v;
            $got++;
            $bad //= "item $got is '$v'" unless $v eq "$got:$pad";
        }
        reap_ok($pid, "$kind: the producer finished");
        ok(!defined $bad, "$kind: every item arrived, in order") or diag($bad);
        is($q->pop, undef, "$kind: nothing more");
        my $s = $q->stats;
        is($s->{push_ok}, $N, "$kind: push_ok exact");
        is($s->{pop_ok}, $N, "$kind: pop_ok exact");
        is($s->{lock_acquired}, 2 * $N,
           "$kind: the lock was taken once per push and pop that moved an item");
        ok($s->{pop_empty} >= 1, "$kind: the empty polls were counted ($s->{pop_empty})");
        is($s->{arena_used}, 0, "$kind: arena_used 0");
        note("$kind: push_full $s->{push_full}, pop_empty $s->{pop_empty}, "
           . "lock_contended $s->{lock_contended}");
    }
};

subtest '4 producers x 4 consumers, 20000 strings' => sub {
    stress(queue => $CLASS->new(undef, 32, 8192), producers => 4, consumers => 4,
           each => 5000, tag => 'fifo');
};

subtest 'both ends at once: push/push_front producers, pop/pop_back consumers' => sub {
    stress(queue => $CLASS->new_memfd('dqs-str-stress', 16, 4096), producers => 4, consumers => 4,
           each => 3000, tag => 'deque', deque => 1);
};

done_testing;
