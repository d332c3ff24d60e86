#!/usr/bin/env perl
# A pool of worker processes: the parent forks WORKERS children that take
# job numbers from one queue with a lease (pop_lease_wait) and send their
# results back on a second queue, then ack the lease. A worker that dies
# with a job in its hands (SIGKILL, the OOM killer) loses nothing: its
# lease comes back to the front of the job queue for another worker. SIGTERM (or SIGINT) stops the pool cleanly: a worker
# finishes the job in its hands, sends the result and exits; the jobs no
# worker took stay in the queue. The parent then checks that every job was
# either done exactly once or is still waiting, never lost or done twice.
#
#     perl -Mblib eg/worker-pool.pl [WORKERS] [JOBS] [STOP_AFTER]
#
# STOP_AFTER: shut the pool down, as a SIGTERM to the parent would, once
# that many results are in (default: all jobs are done first).
use strict;
use warnings;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;
use POSIX ();

my $workers    = shift // 4;
my $jobs_total = shift // 1000;
my $stop_after = shift // $jobs_total;

# Anonymous queues are shared with the children forked after they are
# made. Small on purpose: the parent has to keep feeding and draining.
my $jobs    = Data::Queue::Shared::Int->new(undef, 64);
my $results = Data::Queue::Shared::Str->new(undef, 64);

# SIGTERM or SIGINT sets $stop: the parent stops handing out jobs, a worker
# stops taking them. Set before forking, so a worker has it from birth. The
# handler only sets a flag: a die could strike between taking a job and
# sending its result, and lose it.
my $stop = 0;
$SIG{TERM} = $SIG{INT} = sub { $stop = 1 };

my $parent = $$;
my %pids;
for (1 .. $workers) {
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        worker();
        POSIX::_exit(0);
    }
    $pids{$pid} = 1;
}
$| = 1;
print "pool: $workers workers started\n";

# Feed the jobs, draining results whenever the job queue is full (a parent
# that only pushed could wait for room for ever while the workers wait for
# room in a full result queue).
my %done;    # job => the worker that did it
my $next = 1;
while (!$stop && keys %done < $jobs_total) {
    $next++ while $next <= $jobs_total && $jobs->push($next);
    collect($results->pop_wait(0.05));
    $stop = 1 if keys %done >= $stop_after;
}

# Shut down: each worker finishes its job and exits; keep draining the
# results until the last one is gone, then take what is left.
kill TERM => keys %pids;
while (%pids) {
    collect($results->pop_wait(0.05));
    while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
        die "worker $pid exited with status $?\n" if $?;
        delete $pids{$pid};
    }
}
collect($_) for $results->drain;
my @left = $jobs->drain;

# Every job handed out is done exactly once or still in the queue.
my %seen = %done;
for my $job (@left) {
    die "job $job was done and is still queued\n" if $seen{$job}++;
}
my @lost = grep { !$seen{$_} } 1 .. $next - 1;
die "lost jobs: @lost\n" if @lost;
printf "%d jobs: %d done by %d workers, %d left in the queue, %d never handed out\n",
    $jobs_total, scalar(keys %done), $workers, scalar(@left), $jobs_total - ($next - 1);
exit 0;

sub collect {
    for my $result (grep { defined } @_) {
        my ($job, $pid, $square) = split ' ', $result;
        die "job $job done twice (by $done{$job} and $pid)\n" if exists $done{$job};
        die "job $job: wrong answer $square\n" if $square != $job * $job;
        $done{$job} = $pid;
    }
}

sub worker {
    # pop_lease_wait goes on waiting after the handler returns, so wait in
    # short steps. A worker whose parent died (of SIGKILL, say) stops too.
    until ($stop || getppid() != $parent) {
        my ($job, $lease) = $jobs->pop_lease_wait(0.1);
        next unless defined $lease;
        select(undef, undef, undef, 0.001);    # the work
        my $result = join ' ', $job, $$, $job * $job;
        until ($results->push_wait($result, 0.1)) {
            die "the parent is gone\n" if getppid() != $parent;
        }
        # Done: the job leaves for good. Had this worker died before this
        # line, the job would have gone back to the queue.
        $jobs->ack($lease) or die "lost the lease of job $job\n";
    }
}
