# A process killed while blocked in a wait leaves its waiter count behind;
# the other side forgets it within a bounded number of operations (the
# epoch reset of wait.rs), and waiters that are still alive keep being
# woken. Checked for consumers and producers of an Int and a Str queue,
# also when the other side's operations come from many short-lived
# processes (the tally of fruitless wakes is kept in the queue).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

# Waits sleep until woken or timed out, never a slice at a time: a lost
# wake-up costs the whole wait (and fails) instead of a quarter second.
BEGIN { $ENV{DQS_TEST_NO_SLICE} = 1 }
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(120);

my $dir = tmpdir();

# Comfortably above the reset bound of 64 fruitless wake calls.
my $OPS = 200;

sub blocked_child {
    my ($q, $how) = @_;
    my $pid = spawn(sub {
        if ($how eq 'pop') { $q->pop_wait(60) }
        else               { $q->push_wait('x', 60) }
        die "wait returned\n";
    }, timeout => 90);
    return $pid;
}

for my $class (qw(Data::Queue::Shared::Int Data::Queue::Shared::Str)) {
    my $q = $class->new("$dir/" . ($class =~ /Str/ ? 's' : 'i') . '.shm', 4);
    my $item = $class =~ /Str/ ? 'x' : 7;

    subtest "$class: consumers killed in pop_wait are forgotten" => sub {
        my @dead = map { blocked_child($q, 'pop') } 1 .. 2;
        ok(wait_for(sub { $q->stats->{pop_waiters} == 2 }, 10), 'both blocked');
        kill 'KILL', @dead;
        is(reap($_) & 127, 9, "waiter $_ killed") for @dead;
        is($q->stats->{pop_waiters}, 2, 'their counts are still there');

        for (1 .. $OPS) {
            $q->push($item) or die "push";
            defined $q->pop or die "pop";
        }
        is($q->stats->{pop_waiters}, 0, "forgotten after $OPS push+pop pairs");

        # A live waiter after the reset is woken by one push.
        my $live = spawn(sub {
            my $v = $q->pop_wait(30);
            defined $v && $v eq $item or die "live waiter got nothing\n";
        });
        ok(wait_for(sub { $q->stats->{pop_waiters} == 1 }, 10), 'live waiter blocked');
        $q->push($item);
        reap_ok($live, 'live waiter woken');
        is($q->stats->{pop_waiters}, 0, 'and its count taken back');
    };

    subtest "$class: a live waiter survives the reset caused by a dead one" => sub {
        my $dead = blocked_child($q, 'pop');
        ok(wait_for(sub { $q->stats->{pop_waiters} == 1 }, 10), 'blocked');
        kill 'KILL', $dead;
        reap($dead);
        # The live waiter takes exactly the one item pushed after all the
        # push+pop pairs (during which the dead count is reset).
        my $live = spawn(sub {
            my $n = 0;
            while (1) {
                my $v = $q->pop_wait(30);
                defined $v or die "timed out after $n items\n";
                last if $v eq ($class =~ /Str/ ? 'last' : -1);
                $n++;
            }
        });
        ok(wait_for(sub { $q->stats->{pop_waiters} == 2 }, 10), 'live one blocked too');
        for (1 .. $OPS) {
            $q->push($item) or die "push";
            $q->pop;    # races with the live waiter; either may take it
        }
        $q->push($class =~ /Str/ ? 'last' : -1);
        reap_ok($live, 'live waiter got its items and the last one');
        ok(wait_for(sub { $q->stats->{pop_waiters} == 0 }, 5), 'no count left');
        $q->clear;
    };

    # The tally of fruitless wakes belongs to the queue, not to a process:
    # processes that each make only a few wake calls, far fewer than the
    # bound, still add up to a reset.
    subtest "$class: a dead consumer is forgotten by many short-lived producers" => sub {
        $q->clear;
        my $dead = blocked_child($q, 'pop');
        ok(wait_for(sub { $q->stats->{pop_waiters} == 1 }, 10), 'blocked');
        kill 'KILL', $dead;
        reap($dead);
        is($q->stats->{pop_waiters}, 1, 'its count is left');
        my $procs = 0;
        for my $n (1 .. 40) {
            my $kid = spawn(sub {
                $q->push($item) or die "push\n" for 1 .. 3;
            });
            reap_ok($kid, "producer $n") or last;
            $procs++;
            defined $q->pop or die "pop" for 1 .. 3;
            last if $q->stats->{pop_waiters} == 0;
        }
        is($q->stats->{pop_waiters}, 0, 'forgotten')
            or diag("after $procs producer processes of 3 pushes each");
        my $live = spawn(sub {
            my $v = $q->pop_wait(30);
            defined $v && $v eq $item or die "live waiter got nothing\n";
        });
        ok(wait_for(sub { $q->stats->{pop_waiters} == 1 }, 10), 'a live waiter blocked');
        my $kid = spawn(sub { $q->push($item) or die "push\n" });
        reap_ok($kid, 'one more short-lived producer');
        reap_ok($live, 'wakes the live waiter');
        $q->clear;
    };

    subtest "$class: a dead producer is forgotten by many short-lived consumers" => sub {
        $q->clear;
        $q->push($item) for 1 .. 4;
        my $dead = spawn(sub { $q->push_wait($item, 60); die "returned\n" }, timeout => 90);
        ok(wait_for(sub { $q->stats->{push_waiters} == 1 }, 10), 'blocked on full');
        kill 'KILL', $dead;
        reap($dead);
        my $procs = 0;
        for my $n (1 .. 40) {
            my $kid = spawn(sub {
                defined $q->pop or die "pop\n" for 1 .. 3;
            });
            reap_ok($kid, "consumer $n") or last;
            $procs++;
            $q->push($item) or die "push" for 1 .. 3;
            last if $q->stats->{push_waiters} == 0;
        }
        is($q->stats->{push_waiters}, 0, 'forgotten')
            or diag("after $procs consumer processes of 3 pops each");
        $q->clear;
    };

    subtest "$class: producers killed in push_wait are forgotten" => sub {
        $q->clear;
        $q->push($item) for 1 .. 4;
        my $dead = spawn(sub { $q->push_wait($item, 60); die "returned\n" }, timeout => 90);
        ok(wait_for(sub { $q->stats->{push_waiters} == 1 }, 10), 'blocked on full');
        kill 'KILL', $dead;
        reap($dead);
        for (1 .. $OPS) {
            defined $q->pop or die "pop";
            $q->push($item) or die "push";
        }
        is($q->stats->{push_waiters}, 0, "forgotten after $OPS pop+push pairs");
        $q->clear;
    };
}

done_testing;
