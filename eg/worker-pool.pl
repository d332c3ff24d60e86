#!/usr/bin/env perl
# A pool of worker processes: the parent forks WORKERS children that take
# job numbers from one queue with a lease (pop_lease_wait) and send their
# results back on a second queue, then ack the lease. A worker that dies
# with a job in its hands (SIGKILL, the OOM killer) loses nothing: its
# lease comes back to the front of the job queue for another worker.
#
# It is a work queue too. Leases have a deadline (LEASE seconds), and a
# long job keeps its lease by calling touch as a heartbeat. A job that
# fails is released with an exponential backoff (release($lease, $delay),
# longer after each delivery). The job queue is created with
# max_deliveries: a job that fails every time (here every 250th, the
# "poison" jobs) is handed out MAX_DELIVERIES times and then parked in the
# queue's dead-letter area instead of going round for ever.
#
# SIGTERM (or SIGINT) stops the pool cleanly: a worker finishes the job in
# its hands, sends the result and exits; the jobs no worker took stay in
# the queue. The parent then checks that every job was done exactly once,
# is dead-lettered, or is still waiting: never lost or done twice.
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
use constant { MAX_DELIVERIES => 3, LEASE => 1, BACKOFF => 0.01 };
my $jobs    = Data::Queue::Shared::Int->new(undef, 64,
                                            { max_deliveries => MAX_DELIVERIES, max_dead => 64 });
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
while (!$stop && keys(%done) + $jobs->dead_count < $jobs_total) {
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
# Jobs released with a backoff are invisible until due: let them come back.
select(undef, undef, undef, 0.01) while $jobs->lease_stats->{delayed};
my @left = $jobs->drain;
my @dead = $jobs->dead_list;

# Every job handed out is done exactly once, dead-lettered or still in the
# queue; the dead ones are the poison jobs, after MAX_DELIVERIES deliveries.
my %seen = %done;
for my $job (@left, map { $_->{value} } @dead) {
    die "job $job was done and is still queued\n" if $seen{$job}++;
}
for my $d (@dead) {
    die "job $d->{value} is dead but is no poison job\n" unless poison($d->{value});
    die "job $d->{value} died after $d->{deliveries} deliveries\n"
        unless $d->{deliveries} == MAX_DELIVERIES;
}
my @lost = grep { !$seen{$_} } 1 .. $next - 1;
die "lost jobs: @lost\n" if @lost;
my $s = $jobs->lease_stats;
printf "%d jobs: %d done by %d workers, %d dead-lettered, %d left in the queue, %d never handed out\n",
    $jobs_total, scalar(keys %done), $workers, scalar(@dead), scalar(@left), $jobs_total - ($next - 1);
printf "deliveries %d, released with backoff %d, touched %d\n",
    $s->{delivered}, $s->{released}, $s->{touched};
exit 0;

# Every 250th job always fails; every 50th fails on its first delivery;
# every 200th (+1) is a long one.
sub poison { $_[0] % 250 == 0 }
sub flaky  { $_[0] % 50 == 0 }
sub long   { $_[0] % 200 == 1 }

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
    JOB: until ($stop || getppid() != $parent) {
        my ($job, $lease, $deliveries) = $jobs->pop_lease_wait(0.1, LEASE);
        next unless defined $lease;
        if (long($job)) {
            # A job longer than its lease: a heartbeat every 0.1 s keeps it.
            # A false touch means the lease ended (this worker was too slow
            # and the job went to another): drop it, do not send a result.
            for (1 .. 12) {
                select(undef, undef, undef, 0.1);
                $jobs->touch($lease) or next JOB;
            }
        }
        else {
            select(undef, undef, undef, 0.001);    # the work
        }
        if (poison($job) || (flaky($job) && $deliveries == 1)) {
            # Failed: try again later, waiting longer after each delivery.
            # After its last delivery the queue dead-letters it instead.
            $jobs->release($lease, BACKOFF * 2**$deliveries);
            next;
        }
        $jobs->touch($lease) or next;    # still ours (long jobs can be late)
        my $result = join ' ', $job, $$, $job * $job;
        until ($results->push_wait($result, 0.1)) {
            die "the parent is gone\n" if getppid() != $parent;
        }
        # Done: the job leaves for good. Had this worker died before this
        # line, the job would have gone back to the queue.
        $jobs->ack($lease) or die "lost the lease of job $job\n";
    }
}
