# Stress (author test): a storm of SIGUSR1 at processes blocked in long
# waits. Perl's handler runs inside the wait, which then goes on with the
# time left (see "Timeouts" and t/07-signals.t): no wait may return early,
# none may lose or duplicate an item, and a bounded wait still ends at its
# deadline, not sooner and not much later.
#
#     AUTHOR_TESTING=1 prove -l xt/stress-signal-storm.t
#     DQS_STORM_SECS=10 ...   # length of each storm (default 3)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/../t/lib";
use DQSTest;
use Test::More;
use Time::HiRes ();

BEGIN {
    plan skip_all => 'author test: set AUTHOR_TESTING=1' unless $ENV{AUTHOR_TESTING};
}
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(300);
my $STORM = $ENV{DQS_STORM_SECS} || 3;
my $K     = 4;    # waiters per scenario

# A process that sends SIGUSR1 to @pids every ~50 us for $secs seconds.
sub storm {
    my ($secs, @pids) = @_;
    return spawn(sub {
        my $end = now() + $secs;
        while (now() < $end) {
            kill 'USR1', @pids;
            Time::HiRes::sleep(0.00005);
        }
    }, timeout => $secs + 30);
}

# A waiter: counts SIGUSR1, runs $wait, reports "hits elapsed result" on $w.
sub waiter {
    my ($w, $wait) = @_;
    return spawn(sub {
        my $hits = 0;
        $SIG{USR1} = sub { $hits++ };
        my $t0 = now();
        my $res = $wait->();
        my $dt = now() - $t0;
        my $seen = $hits;    # the storm may still be on; keep counting
        syswrite $w, sprintf("%d %.6f %s\n", $seen, $dt, $res // 'undef');
    }, timeout => 120);
}

sub collect {
    my ($r, @kids) = @_;
    my @lines = map { chomp; [split ' '] } <$r>;
    my $ok = 0;
    reap($_) == 0 && $ok++ for @kids;
    return ($ok, @lines);
}

for my $class (qw(Data::Queue::Shared::Int Data::Queue::Shared::Str)) {
    subtest "$class: pop_wait without timeout under a storm, then served" => sub {
        my $q = $class->new(undef, 16);
        pipe(my $r, my $w) or die "pipe: $!";
        my @kids = map { waiter($w, sub { $q->pop_wait }) } 1 .. $K;
        close $w;
        wait_for(sub { $q->stats->{pop_waiters} == $K }, 20);
        my $s = storm($STORM, @kids);
        reap_ok($s, 'storm finished');
        # A waiter that was running its handler registers again at once.
        ok(wait_for(sub { $q->stats->{pop_waiters} == $K }, 10), 'all still waiting after the storm');
        my $t_push = now();
        $q->push($_) for 1 .. $K;
        my ($ok, @res) = collect($r, @kids);
        is($ok, $K, 'every waiter exited cleanly');
        is(join(' ', sort map { $_->[2] } @res), join(' ', 1 .. $K), 'each got one distinct item');
        is(scalar(grep { $_->[0] > 0 } @res), $K, 'every waiter ran its handler')
            or diag(join ', ', map { $_->[0] } @res);
        is(scalar(grep { $_->[1] < $STORM } @res), 0, 'no wait returned during the storm');
        is($q->size, 0, 'queue empty');
    };

    subtest "$class: push_wait without timeout under a storm, then served" => sub {
        my $q = $class->new(undef, 2);
        $q->push(0) for 1 .. 2;
        pipe(my $r, my $w) or die "pipe: $!";
        my @kids = map { my $v = $_; waiter($w, sub { $q->push_wait($v) ? 'ok' : 'fail' }) } 1 .. $K;
        close $w;
        wait_for(sub { $q->stats->{push_waiters} == $K }, 20);
        my $s = storm($STORM, @kids);
        reap_ok($s, 'storm finished');
        is($q->size, 2, 'nothing pushed during the storm');
        my @got;
        while (@got < $K + 2) {
            my $v = $q->pop_wait(20);
            last unless defined $v;
            push @got, $v;
        }
        my ($ok, @res) = collect($r, @kids);
        is($ok, $K, 'every pusher exited cleanly');
        is(join(' ', sort @got), join(' ', 0, 0, 1 .. $K), 'every item arrived once');
        is(scalar(grep { $_->[2] eq 'ok' } @res), $K, 'every push_wait returned true');
        is(scalar(grep { $_->[0] > 0 } @res), $K, 'every pusher ran its handler');
    };

    subtest "$class: bounded pop_wait under a storm ends at its deadline" => sub {
        my $q = $class->new(undef, 16);
        my $T = $STORM;
        pipe(my $r, my $w) or die "pipe: $!";
        my @kids = map { waiter($w, sub { $q->pop_wait($T) }) } 1 .. $K;
        close $w;
        # Registered waiters have their handler installed already.
        wait_for(sub { $q->stats->{pop_waiters} == $K }, 20);
        my $s = storm($T + 1, @kids);
        my ($ok, @res) = collect($r, @kids);
        reap_ok($s, 'storm finished');
        is($ok, $K, 'every waiter exited cleanly');
        is(scalar(grep { $_->[2] eq 'undef' } @res), $K, 'every wait timed out empty');
        is(scalar(grep { $_->[1] < $T - 0.01 } @res), 0, 'none returned early')
            or diag(join ', ', map { $_->[1] } @res);
        is(scalar(grep { $_->[1] > $T + 5 } @res), 0, 'none overshot by seconds')
            or diag(join ', ', map { $_->[1] } @res);
        is(scalar(grep { $_->[0] > 0 } @res), $K, 'every waiter ran its handler');
    };
}

done_testing;
