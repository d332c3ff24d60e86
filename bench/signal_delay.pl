#!/usr/bin/env perl
# How long a Perl signal handler waits when the signal arrives while
# pop_wait is blocked on an empty queue: the time from the sender's kill()
# to the first statement of the handler, over many trials.
#
#   perl -Mblib bench/signal_delay.pl [TRIALS [TIMEOUT]]
#
# Each trial: the parent tells a forked helper "now", then calls
# pop_wait(TIMEOUT) on an empty queue; the helper waits a chosen delay
# (0 to 200 microseconds: the wait's spin before sleeping; or 20 ms: the
# wait is surely asleep in the kernel), sends SIGALRM and reports when it
# sent it. The handler notes the time and dies, which ends the wait. A
# signal that lands before the wait's futex sleep has begun is taken by
# perl's C handler (it only sets a flag), the sleep then does not see it,
# and the Perl handler runs when the wait returns: after TIMEOUT seconds
# (or an item). Those trials show up as delays near TIMEOUT.
use strict;
use warnings;
use POSIX ();
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

my $TRIALS  = shift // 200;
my $TIMEOUT = shift // 0.5;
$| = 1;

sub median {
    my @s = sort { $a <=> $b } @_;
    @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2;
}

for my $class (qw(Data::Queue::Shared::Int Data::Queue::Shared::Str)) {
    my $q = $class->new(undef, 16);
    for my $phase ([spin => sub { rand 200e-6 }], [asleep => sub { 0.02 }]) {
        my ($name, $delay) = @$phase;
        my (@lat, $lost);
        for (1 .. $TRIALS) {
            pipe my $go_r, my $go_w or die "pipe: $!";
            pipe my $t_r,  my $t_w  or die "pipe: $!";
            my $parent = $$;
            my $d      = $delay->();
            my $pid    = fork // die "fork: $!";
            if (!$pid) {
                close $go_w;
                close $t_r;
                sysread $go_r, my $b, 1;
                my $until = clock_gettime(CLOCK_MONOTONIC) + $d;
                1 while clock_gettime(CLOCK_MONOTONIC) < $until;
                my $t = clock_gettime(CLOCK_MONOTONIC);
                kill 'ALRM', $parent;
                syswrite $t_w, pack 'd', $t;
                POSIX::_exit(0);
            }
            close $go_r;
            close $t_w;
            my $got;
            {
                local $SIG{ALRM} = sub {
                    $got = clock_gettime(CLOCK_MONOTONIC);
                    die "alarm\n";
                };
                eval {
                    syswrite $go_w, 'x';
                    $q->pop_wait($TIMEOUT);
                    1;
                };
                # A signal taken after the wait ended: let it run now.
                eval { select undef, undef, undef, 0.001 until defined $got };
            }
            sysread $t_r, my $buf, 8;
            waitpid $pid, 0;
            push @lat, $got - unpack 'd', $buf;
        }
        my @s = sort { $a <=> $b } @lat;
        my $late = grep { $_ > $TIMEOUT / 2 } @lat;
        printf "%-27s %-6s trials %d: median %.0f us, 90%% %.0f us, max %.0f us; "
          . "%d delayed to the timeout (%.0f ms)\n",
          $class, $name, scalar @lat, 1e6 * median(@lat), 1e6 * $s[int 0.9 * $#s],
          1e6 * $s[-1], $late, 1e3 * $TIMEOUT;
    }
}
