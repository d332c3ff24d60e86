#!/usr/bin/env perl
# A consumer waiting in select(2) on a queue's eventfd, fed by a forked
# producer that pushes jobs in batches and calls notify once per batch.
#
#     perl -Mblib eg/select-loop.pl [JOBS]
#
# The same loop works with IO::Select, which takes the fd number as is:
#     my $sel = IO::Select->new($q->fileno);  ... $sel->can_read(5)
use strict;
use warnings;

use Data::Queue::Shared::Int;
use POSIX ();

my $jobs  = shift // 10_000;
my $batch = 100;

# An anonymous queue is shared with the children forked after it is made.
# Create the eventfd before forking too: the child inherits it.
my $q  = Data::Queue::Shared::Int->new(undef, 1024);
my $fd = $q->eventfd;

my $pid = fork // die "fork: $!";
if ($pid == 0) {
    # Producer. -1 marks the end of the work.
    for my $start (map { $_ * $batch + 1 } 0 .. int(($jobs - 1) / $batch)) {
        my $end = $start + $batch - 1;
        $end = $jobs if $end > $jobs;
        $q->push_wait($_) for $start .. $end;    # waits while the queue is full
        $q->notify;                              # one wake-up per batch
        select(undef, undef, undef, 0.001);      # (the next batch takes time)
    }
    $q->push_wait(-1);
    $q->notify;
    POSIX::_exit(0);
}

# Consumer: sleep in select until the eventfd is readable, clear it, then
# pop until the queue is empty. Clearing before popping means a notify
# that arrives while we pop leaves the fd readable for the next round.
my $rin = '';
vec($rin, $fd, 1) = 1;
my ($count, $sum, $wakeups, $notes) = (0, 0, 0, 0);
WAIT: while (1) {
    my $n = select(my $rout = $rin, undef, undef, 10);
    if ($n < 0) {
        next WAIT if $!{EINTR};
        die "select: $!";
    }
    die "no notification for 10 seconds\n" if $n == 0;
    $wakeups++;
    $notes += $q->eventfd_consume;
    while (defined(my $job = $q->pop)) {
        last WAIT if $job == -1;
        $count++;
        $sum += $job;
    }
}
waitpid($pid, 0);

printf "consumed %d jobs (sum %d) in %d wake-ups for %d notifications\n",
    $count, $sum, $wakeups, $notes;
exit($count == $jobs && $sum == $jobs * ($jobs + 1) / 2 ? 0 : 1);
