# The runnable examples in eg/ run to completion and report success (each
# exits 0 only when every item arrived, once). The EV one is skipped
# without EV. Each example runs in a process group of its own, killed
# afterwards, so that the processes it forks never outlive the test.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

watchdog(240);

my $eg  = "$FindBin::Bin/../eg";
my $dir = tmpdir();

my @runs = (
    { name => 'select-loop.pl', args => [2000],   out => qr/^consumed 2000 jobs \(sum 2001000\)/ },
    { name => 'ev-consumer.pl', args => [3, 500], out => qr/^received 1500 messages from 3 producers/,
      needs => 'EV' },
    { name => 'pipeline.pl',    args => [3, 20_000],
      out  => qr/^pipeline: 20000 lines -> 3 parsers -> 20000 records \(sum of squares 2666866670000\)$/m },
    { name => 'worker-pool.pl', args => [4, 1000],
      out  => qr/^1000 jobs: 996 done by 4 workers, 4 dead-lettered, 0 left in the queue, 0 never handed out\ndeliveries 1024, released with backoff 28, touched \d+$/m },
    # Shut down in the middle: the accounting (done, left, never handed
    # out) must add up, and the example checks that no job was lost or done
    # twice.
    { name => 'worker-pool.pl', args => [3, 5000, 500], adds_up => 5000,
      out  => qr/^5000 jobs: (\d+) done by 3 workers, (\d+) dead-lettered, (\d+) left in the queue, (\d+) never handed out$/m },
);

my $n = 0;
for my $run (@runs) {
    my $name = "$run->{name} @{ $run->{args} }";
    SKIP: {
        skip "$run->{name} needs $run->{needs}", 2
            if $run->{needs} && !eval "require $run->{needs}; 1";
        my $out = "$dir/" . $n++ . '.out';
        my $pid = run_example($run->{name}, $run->{args}, $out);
        reap_ok($pid, "$name exits 0");
        kill KILL => -$pid;
        my $text = slurp($out);
        like($text, $run->{out}, "$name reports every item") or diag $text;
        if (my $total = $run->{adds_up}) {
            my ($done, $dead, $left, $never) = $text =~ $run->{out};
            is($done + $dead + $left + $never, $total, "$name: every job done, dead, left or not handed out")
                if defined $never;
            cmp_ok($done, '>=', $run->{args}[2], "$name: stopped after $run->{args}[2] results or more")
                if defined $done;
        }
    }
}

# A SIGTERM to the pool's parent stops the pool: the workers finish the job
# in hand and exit; nothing is lost. A million jobs take minutes, so the
# run ends within the example's alarm only if the signal stopped it.
{
    pipe(my $r, my $w) or die "pipe: $!";
    my $pid = run_example('worker-pool.pl', [4, 1_000_000], $w);
    close $w;
    my $first = <$r>;
    like($first // '', qr/^pool: 4 workers started$/, 'worker-pool.pl says it started');
    kill TERM => $pid;
    my $rest = do { local $/; <$r> };
    reap_ok($pid, 'worker-pool.pl exits 0 after SIGTERM');
    kill KILL => -$pid;
    my ($done, $dead, $left, $never) = ($rest // '') =~
        /^1000000 jobs: (\d+) done by 4 workers, (\d+) dead-lettered, (\d+) left in the queue, (\d+) never handed out$/m;
    ok(defined $never, '... and reports what it did') or diag $rest;
    if (defined $never) {
        is($done + $dead + $left + $never, 1_000_000, '... every job done, dead, left or not handed out');
        cmp_ok($done, '<', 1_000_000, '... having stopped before the end');
    }
}

done_testing;

# Start eg/$name with @$args in a process group of its own, standard output
# to the file $out (a name) or the handle $out. The child's alarm survives
# the exec: a hung example dies of SIGALRM.
sub run_example {
    my ($name, $args, $out) = @_;
    return spawn(sub {
        setpgrp(0, 0) or die "setpgrp: $!";
        if (ref $out) {
            open STDOUT, '>&', $out or die "dup: $!";
        }
        else {
            open STDOUT, '>', $out or die "open $out: $!";
        }
        exec $^X, (map { "-I$_" } grep { !ref } @INC), "$eg/$name", @$args;
        die "exec $^X: $!";
    }, timeout => 90);
}

sub slurp {
    my ($path) = @_;
    open my $fh, '<', $path or die "open $path: $!";
    local $/;
    return scalar <$fh>;
}
