# Stress (author test): cross-process wait/wake round trips. A child echoes
# every item it pop_waits from queue A into queue B; the parent pushes into
# A and pop_waits on B, 10**6 times by default. Every round trip must
# complete, and none may take a second or more: waits are bounded by 5 s,
# so a lost wake-up shows as a timeout, and a wake-up that only came from a
# timeout or a poll shows as a slow round trip. The bound is a correctness
# check, not a speed assertion (a round trip normally takes microseconds).
#
#     AUTHOR_TESTING=1 prove -l xt/stress-pingpong.t
#     DQS_ROUNDS=100000 ...   # round trips per class (default 10**6)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/../t/lib";
use DQSTest;
use Test::More;

BEGIN {
    plan skip_all => 'author test: set AUTHOR_TESTING=1' unless $ENV{AUTHOR_TESTING};
}
# Waits sleep until woken or timed out, never a slice at a time: a lost
# wake-up costs the whole wait (and fails) instead of a quarter second.
BEGIN { $ENV{DQS_TEST_NO_SLICE} = 1 }
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

my $ROUNDS = $ENV{DQS_ROUNDS} || 1_000_000;
watchdog(900);

for my $class (qw(Data::Queue::Shared::Int Data::Queue::Shared::Str)) {
    my $n = $class =~ /Str/ ? int($ROUNDS / 4) || 1 : $ROUNDS;
    subtest "$class: $n round trips" => sub {
        my $qa = $class->new(undef, 2);
        my $qb = $class->new(undef, 2);
        my $echo = spawn(sub {
            while (1) {
                my $v = $qa->pop_wait(5);
                die "echo: pop_wait timed out (lost wake-up?)\n" unless defined $v;
                last if $v < 0;
                $qb->push_wait($v, 5) or die "echo: push_wait timed out\n";
            }
        }, timeout => 880);
        my ($max, $slow, $lost) = (0, 0, 0);
        my $t0 = now();
        for my $i (1 .. $n) {
            my $s = now();
            $qa->push($i) or die "push to A failed at $i";
            my $v = $qb->pop_wait(5);
            my $dt = now() - $s;
            if (!defined $v || $v != $i) { $lost++; last }
            $max = $dt if $dt > $max;
            $slow++ if $dt >= 1;
        }
        my $total = now() - $t0;
        $qa->push(-1);
        reap_ok($echo, 'echo process finished cleanly');
        is($lost, 0, 'every round trip completed with the right item');
        is($slow, 0, 'no round trip took a second or more');
        diag(sprintf '%s: %d round trips in %.1fs (%.1f us each), slowest %.3f ms',
             $class, $n, $total, $total / $n * 1e6, $max * 1000);
        is($qa->size + $qb->size, 0, 'both queues empty');
    };
}

done_testing;
