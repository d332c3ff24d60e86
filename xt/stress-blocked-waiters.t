# Stress (author test): 8 processes blocked in pop_wait are all served by 8
# pushes, and 8 blocked in push_wait by 8 pops, round after round, for the
# integer and the string queues. A lost wake-up shows as a waiter that times
# out (the waits are bounded) or, failing that, as the watchdog firing.
#
#     AUTHOR_TESTING=1 prove -l xt/stress-blocked-waiters.t
#     DQS_ROUNDS=200 ...   # rounds per class and direction (default 30)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/../t/lib";
use DQSTest;
use Test::More;

BEGIN {
    plan skip_all => 'author test: set AUTHOR_TESTING=1' unless $ENV{AUTHOR_TESTING};
}
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(300);
my $W      = 8;
my $ROUNDS = $ENV{DQS_ROUNDS} || 30;

sub stat_of { $_[0]->stats->{ $_[1] } }

for my $class (qw(Data::Queue::Shared::Int Data::Queue::Shared::Str)) {
    subtest "$class: $W blocked pop_wait served by $W pushes, $ROUNDS rounds" => sub {
        my $q = $class->new(undef, 16);
        my $bad = 0;
        for my $round (1 .. $ROUNDS) {
            pipe(my $r, my $w) or die "pipe: $!";
            my @kids = map {
                spawn(sub {
                    close $r;
                    my $v = $q->pop_wait(30);
                    die "pop_wait timed out (lost wake-up?)\n" unless defined $v;
                    syswrite $w, "$v\n";
                }, timeout => 60);
            } 1 .. $W;
            close $w;
            wait_for(sub { stat_of($q, 'pop_waiters') == $W }, 20)
                or do { $bad++; diag("round $round: only " . stat_of($q, 'pop_waiters') . " waiters") };
            $q->push($round * 100 + $_) or die "push failed" for 1 .. $W;
            my @got = sort { $a <=> $b } map { chomp; $_ } <$r>;
            my $ok = 0;
            reap($_) == 0 && $ok++ for @kids;
            if ($ok != $W || "@got" ne join(' ', map { $round * 100 + $_ } 1 .. $W)) {
                $bad++;
                diag("round $round: $ok of $W waiters finished; got (@got)");
            }
        }
        is($bad, 0, 'every round: every waiter got exactly one distinct item');
        is(stat_of($q, 'pop_waiters'), 0, 'no waiter left registered');
        is($q->size, 0, 'queue empty');
    };

    subtest "$class: $W blocked push_wait served by $W pops, $ROUNDS rounds" => sub {
        my $q = $class->new(undef, 2);
        my $bad = 0;
        for my $round (1 .. $ROUNDS) {
            $q->push(-1) or die "fill" for 1 .. 2;
            my @kids = map {
                my $v = $round * 100 + $_;
                spawn(sub {
                    $q->push_wait($v, 30) or die "push_wait timed out (lost wake-up?)\n";
                }, timeout => 60);
            } 1 .. $W;
            wait_for(sub { stat_of($q, 'push_waiters') == $W }, 20)
                or do { $bad++; diag("round $round: only " . stat_of($q, 'push_waiters') . " waiters") };
            my @got;
            while (@got < $W + 2) {
                my $v = $q->pop_wait(30);
                last unless defined $v;
                push @got, $v;
            }
            my $ok = 0;
            reap($_) == 0 && $ok++ for @kids;
            @got = sort { $a <=> $b } @got;
            if ($ok != $W || "@got" ne join(' ', -1, -1, map { $round * 100 + $_ } 1 .. $W)) {
                $bad++;
                diag("round $round: $ok of $W pushers finished; got (@got)");
            }
        }
        is($bad, 0, 'every round: every blocked pusher got its item in');
        is(stat_of($q, 'push_waiters'), 0, 'no waiter left registered');
        is($q->size, 0, 'queue empty');
    };
}

done_testing;
