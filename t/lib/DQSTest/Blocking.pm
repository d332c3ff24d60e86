package DQSTest::Blocking;

# Processes that block and wake each other, for the tests that the Int and
# Str twins share: a child that acts after a delay, a child that waits
# until the parent is blocked, a consumer child for a blocked producer, a
# producer and a consumer that check items arrive in order, and a wait
# that SIGALRM interrupts.
#
#     use DQSTest::Blocking;
#     my $pid = later(0.15, sub { $q->push(1) });
#     my ($bad, $first_bad) = pop_in_order($q, $N, sub { $_[0] % 7 });

use strict;
use warnings;

use Exporter 'import';
use Time::HiRes ();

use DQSTest ();
use DQSTest::Files ();

our @EXPORT = qw(later await_waiters consumer_child push_in_order pop_in_order signalled_wait);

# Run $code in a child after $delay seconds; returns the pid (not reaped).
sub later {
    my ($delay, $code) = @_;
    return DQSTest::spawn(sub { Time::HiRes::sleep($delay); $code->() });
}

# In a child: wait until $n processes (default 1) are blocked on $key
# (push_waiters or pop_waiters; give up after a few seconds and go on
# anyway, so that a queue that does not count waiters still gets woken),
# then a little longer so they are asleep.
sub await_waiters {
    my ($q, $key, $n) = @_;
    DQSTest::wait_for(sub { $q->stats->{$key} >= ($n // 1) }, 5);
    Time::HiRes::sleep(0.02);
}

# Fork a consumer: once a producer blocks on $q (push_waiters), it pops $n
# items, waiting up to 10 s for each, and saves them. Returns its pid and a
# sub that gives the items it popped, in order, once it has been reaped
# (items must not hold a newline).
sub consumer_child {
    my ($q, $n) = @_;
    my $out = DQSTest::Files::fresh_path('consumed');
    my $pid = DQSTest::spawn(sub {
        await_waiters($q, 'push_waiters');
        my @got;
        while (@got < $n) {
            my $v = $q->pop_wait(10);
            die "consumer timed out after " . @got . " items\n" unless defined $v;
            push @got, $v;
        }
        DQSTest::Files::spew($out, join "\n", @got);
    });
    return ($pid, sub { split /\n/, DQSTest::Files::slurp($out) // '' });
}

# Push $item->($i) for $i = 0 .. $n - 1 onto $q, in order, waiting up to
# 10 s for room for each; dies when there is none (for a producer child).
sub push_in_order {
    my ($q, $n, $item) = @_;
    for my $i (0 .. $n - 1) {
        my $v = $item->($i);
        next if $q->push($v);
        $q->push_wait($v, 10) or die "producer stuck at $i\n";
    }
}

# Pop $n items from $q (waiting up to 10 s for each one that is not there
# yet) and compare item $i with $want->($i) as strings. Returns how many
# were wrong or missing (it stops at the first missing one) and a
# description of the first, shown through $show->($v) when given.
sub pop_in_order {
    my ($q, $n, $want, $show) = @_;
    my ($bad, $first_bad) = (0);
    for my $i (0 .. $n - 1) {
        my $v = $q->pop;
        $v = $q->pop_wait(10) unless defined $v;
        if (!defined $v || $v ne $want->($i)) {
            $first_bad //= "item $i: got " . (!defined $v ? 'undef' : $show ? $show->($v) : $v);
            $bad++;
            last unless defined $v;
        }
    }
    return ($bad, $first_bad);
}

# Run $wait (a blocking call, in scalar context) while SIGALRM arrives
# after $first microseconds, and then every $every microseconds if given;
# a handler counts the signals. Returns (signals handled, what $wait
# returned, seconds it took). The timer is off again on return.
sub signalled_wait {
    my ($wait, $first, $every) = @_;
    my $hits = 0;
    local $SIG{ALRM} = sub { $hits++ };
    Time::HiRes::ualarm($first, $every // 0);
    my $t0 = DQSTest::now();
    my $v = $wait->();
    my $dt = DQSTest::now() - $t0;
    Time::HiRes::ualarm(0);
    return ($hits, $v, $dt);
}

1;
