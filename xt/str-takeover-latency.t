# Str lock takeover latency (author test): a holder stopped with the lock
# (DQS_TEST_KILL_POINT=str_lock_stop, in a push_front: both locks), a waiter asleep in pop_wait on the
# lock, then SIGKILL to the holder; the time from the kill to the waiter's
# pop returning is the takeover latency. Prints p50/p99 over the runs.
#
#     AUTHOR_TESTING=1 prove -lv xt/str-takeover-latency.t
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
use Data::Queue::Shared::Str;

watchdog(600, process => 1);
my $CLASS = 'Data::Queue::Shared::Str';
my $dir   = tmpdir();
my $RUNS  = $ENV{DQS_RUNS} || 100;

sub state_of {
    open my $fh, '<', "/proc/$_[0]/stat" or return '';
    my $s = <$fh>;
    return $s =~ /\)\s+(\S)/ ? $1 : '';
}

my (@lat, @lat_reaped);
for my $i (1 .. $RUNS) {
    my $path = "$dir/l$i.shm";
    my $q = $CLASS->new($path, 16);
    $q->push('x');
    my $holder = spawn(sub {
        local $ENV{DQS_TEST_KILL_POINT} = 'str_lock_stop';
        $CLASS->new($path, 16)->push_front('held');
    });
    wait_for(sub { state_of($holder) eq 'T' }, 10) or die "holder did not stop";
    pipe(my $r, my $w) or die "pipe: $!";
    my $waiter = spawn(sub {
        close $r;
        my $v = $CLASS->new($path, 16)->pop_wait(30);
        my $t = now();
        die "waiter got nothing\n" unless defined $v;
        syswrite($w, sprintf("%.9f\n", $t));
    });
    close $w;
    # Let the waiter settle into its sleep (random phase against its poll).
    Time::HiRes::sleep(0.05 + rand(0.03));
    my $t0 = now();
    kill 'KILL', $holder;
    my $line = <$r>;
    reap($waiter);
    reap($holder);
    push @lat, $line - $t0 if defined $line;
    # Reaped holder, a caller arriving afterwards.
    $q->push('y');
    my $h2 = spawn(sub {
        local $ENV{DQS_TEST_KILL_POINT} = 'str_lock_held';
        $CLASS->new($path, 16)->push_front('held');
    });
    reap($h2);
    my $t1 = now();
    $q->pop;
    push @lat_reaped, now() - $t1;
    $q->unlink;
}

sub pct {
    my ($p, @v) = @_;
    @v = sort { $a <=> $b } @v;
    return $v[int($p / 100 * $#v + 0.5)] * 1000;
}
is(scalar @lat, $RUNS, 'every waiter took over');
diag(sprintf 'sleeping waiter, holder killed: n=%d p50=%.2f ms p99=%.2f ms max=%.2f ms',
     scalar @lat, pct(50, @lat), pct(99, @lat), pct(100, @lat));
diag(sprintf 'caller after the holder was reaped: n=%d p50=%.2f ms p99=%.2f ms max=%.2f ms',
     scalar @lat_reaped, pct(50, @lat_reaped), pct(99, @lat_reaped), pct(100, @lat_reaped));
ok(pct(50, @lat) < 50, 'median takeover under 50 ms');
done_testing;
