# Wake-ups checked by count, not by time. With DQS_TEST_NO_SLICE set when
# the module loads, a wait sleeps until it is woken or its timeout passes
# (never a quarter second at a time), so a lost wake-up costs a waiter its
# whole wait and fails it. And before each waking operation every waiter
# is asleep on a futex (its /proc wchan says so), so the count of sleepers
# this process woke with FUTEX_WAKE must move by exactly as many as the
# operation had to wake: one per item moved, every producer on a clear.
# For every variant: single pushes and pops, batches, clear, and the Str
# deque ends.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

BEGIN { $ENV{DQS_TEST_NO_SLICE} = 1 }
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(150);

# Generous: a waiter that was woken returns at once; one that was not
# sleeps all of it and then fails.
my $WAIT = 20;

# Start $n children, each running $code->($i) (a blocking call that must
# succeed), and wait until all of them are asleep on a futex.
sub sleepers {
    my ($n, $code) = @_;
    my @pids = map {
        my $i = $_;
        spawn(sub { $code->($i) });
    } 1 .. $n;
    ok(wait_asleep(\@pids), "$n children asleep on a futex")
        or diag('wchan: ', join ' ', map { `cat /proc/$_/wchan 2>/dev/null` } @pids);
    return @pids;
}

# Run $op; it must wake at least $want sleepers (by this process's count),
# and every child must then exit cleanly (a child left asleep times out).
sub wakes_ok {
    my ($want, $pids, $op, $name) = @_;
    my $w0 = woken();
    $op->();
    my $got = woken() - $w0;
    cmp_ok($got, '>=', $want, "$name: woke $want sleepers");
    my $clean = 0;
    $clean += reap($_) == 0 ? 1 : 0 for @$pids;
    is($clean, scalar @$pids, "$name: every waiter got through");
}

for my $class (@INT_CLASSES, 'Data::Queue::Shared::Str') {
    my $str = $class =~ /Str/;
    my $q = $class->new(undef, 4);
    my $v = sub { $str ? "v$_[0]" : $_[0] };

    subtest "$class: a push wakes its consumer, a pop its producer" => sub {
        my @p = sleepers(1, sub { defined $q->pop_wait($WAIT) or die "pop_wait timed out\n" });
        wakes_ok(1, \@p, sub { $q->push($v->(1)) }, 'push');
        $q->push_multi(map { $v->($_) } 1 .. 4);
        @p = sleepers(1, sub { $q->push_wait($v->(9), $WAIT) or die "push_wait timed out\n" });
        wakes_ok(1, \@p, sub { $q->pop }, 'pop');
        $q->clear;
    };

    subtest "$class: a batch of 3 wakes 3 consumers" => sub {
        for my $how (qw(push_multi push_wait_multi)) {
            my @p = sleepers(3, sub { defined $q->pop_wait($WAIT) or die "pop_wait timed out\n" });
            my @items = map { $v->($_) } 1 .. 3;
            wakes_ok(3, \@p, sub {
                my $n = $how eq 'push_multi' ? $q->push_multi(@items) : $q->push_wait_multi(5, @items);
                $n == 3 or die "$how moved $n\n";
            }, $how);
            ok($q->is_empty, "$how: each consumer took one");
        }
    };

    subtest "$class: a batch pop of 3 wakes 3 producers" => sub {
        for my $how (qw(pop_multi drain)) {
            $q->push_multi(map { $v->($_) } 1 .. 4);
            my @p = sleepers(3, sub { $q->push_wait($v->(10 + $_[0]), $WAIT) or die "push_wait timed out\n" });
            wakes_ok(3, \@p, sub {
                my @got = $how eq 'pop_multi' ? $q->pop_multi(3) : $q->drain(3);
                @got == 3 or die "$how took " . scalar(@got) . "\n";
            }, $how);
            is($q->size, 4, "$how: the three producers' items are in");
            $q->clear;
        }
    };

    subtest "$class: clear wakes every blocked producer" => sub {
        $q->push_multi(map { $v->($_) } 1 .. 4);
        my @p = sleepers(3, sub { $q->push_wait($v->(10 + $_[0]), $WAIT) or die "push_wait timed out\n" });
        wakes_ok(3, \@p, sub { $q->clear }, 'clear');
        is($q->size, 3, 'the three producers\' items are in');
        $q->clear;
    };

    next unless $str;

    subtest "$class: the other ends wake too" => sub {
        my @p = sleepers(2, sub { defined $q->pop_back_wait($WAIT) or die "pop_back_wait timed out\n" });
        wakes_ok(2, \@p, sub { $q->push_front('f1'); $q->push_front('f2') }, 'push_front');
        $q->push_multi(map { "v$_" } 1 .. 4);
        @p = sleepers(2, sub { $q->push_front_wait("w$_[0]", $WAIT) or die "push_front_wait timed out\n" });
        wakes_ok(2, \@p, sub { $q->pop_back; $q->pop_back }, 'pop_back');
        $q->clear;
    };
}

# The Str lock: a holder stopped with the lock (DQS_TEST_KILL_POINT=
# str_lock_stop) while two processes go to sleep on it; once it goes on,
# its unlock must wake one of them (by the holder's own count; the second
# is woken by the first one's unlock), and both get through.
subtest 'Str: an unlock wakes a process asleep on the lock' => sub {
    my $dir = tmpdir();
    my $path = "$dir/lock.q";
    my $q = Data::Queue::Shared::Str->new($path, 16);
    my $out = "$dir/holder-woke";
    my $holder = spawn(sub {
        local $ENV{DQS_TEST_KILL_POINT} = 'str_lock_stop';
        my $h = Data::Queue::Shared::Str->new($path, 16);
        my $w0 = woken();
        $h->push('held');    # stops with the lock; goes on after SIGCONT
        open my $fh, '>', $out or die "$out: $!";
        print {$fh} woken() - $w0;
        close $fh or die "$out: $!";
    });
    ok(wait_for(sub { (stat_state($holder) // '') eq 'T' }, 10), 'the holder stopped with the lock');
    my @p = sleepers(2, sub { $q->push("w$_[0]") or die "push failed\n" });
    kill 'CONT', $holder;
    reap_ok($holder, 'the holder went on and finished');
    open my $fh, '<', $out or die "$out: $!";
    my $n = <$fh>;
    cmp_ok($n, '>=', 1, 'its unlock woke a sleeper on the lock');
    my $clean = 0;
    $clean += reap($_) == 0 ? 1 : 0 for @p;
    is($clean, 2, 'both sleepers got the lock');
    is($q->size, 3, 'and all three pushes are in');
};

done_testing;

sub stat_state {
    my ($pid) = @_;
    open my $fh, '<', "/proc/$pid/stat" or return undef;
    my $s = <$fh>;
    return $s =~ /\)\s+(\S)/ ? $1 : undef;
}
