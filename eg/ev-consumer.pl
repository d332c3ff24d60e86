#!/usr/bin/env perl
# An EV event loop consuming a Str queue fed by other processes. Each
# producer opens the queue file itself and adopts the consumer's eventfd
# (inherited across fork) with eventfd_set, then notifies after each batch.
#
#     perl -Mblib eg/ev-consumer.pl [PRODUCERS] [MESSAGES_EACH]
use strict;
use warnings;

use EV;
use File::Temp ();
use POSIX ();
use Data::Queue::Shared::Str;

my $producers = shift // 4;
my $each      = shift // 2_500;

my $dir  = File::Temp::tempdir(CLEANUP => 1);
my $path = "$dir/messages.shm";
my $q    = Data::Queue::Shared::Str->new($path, 4096);
my $fd   = $q->eventfd;

for my $p (1 .. $producers) {
    my $pid = fork // die "fork: $!";
    next if $pid;
    # Producer: its own handle on the file, the inherited eventfd.
    my $out = Data::Queue::Shared::Str->new($path, 4096);
    $out->eventfd_set($fd);
    for my $i (1 .. $each) {
        $out->push_wait("producer $p: message $i") or die "push_wait failed";
        next unless $i % 50 == 0 || $i == $each;
        $out->notify;                              # one wake-up per 50 messages
        select(undef, undef, undef, 0.001);        # (the next ones take time)
    }
    POSIX::_exit(0);
}

my ($received, $wakeups) = (0, 0);
my %last;    # per producer, the last message number seen: FIFO check

my $io = EV::io($fd, EV::READ, sub {
    $wakeups++;
    $q->eventfd_consume;
    while (defined(my $msg = $q->pop)) {
        my ($p, $i) = $msg =~ /^producer (\d+): message (\d+)$/ or die "bad message '$msg'";
        die "producer $p: $i after $last{$p}\n" if $i != ($last{$p} // 0) + 1;
        $last{$p} = $i;
        $received++;
    }
    EV::break if $received == $producers * $each;
});
my $timeout = EV::timer(60, 0, sub { warn "timed out\n"; EV::break });

EV::run;
1 while waitpid(-1, 0) > 0;    # reap the producers

printf "received %d messages from %d producers in %d wake-ups\n",
    $received, $producers, $wakeups;
exit($received == $producers * $each ? 0 : 1);
