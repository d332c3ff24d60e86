# Hostile lock words and stopped lock holders: no call waits past its own
# timeout, and a call without one does not wait for ever on a lock word
# that no queue user wrote. Each case runs in a child whose alarm turns a
# hang into a failure.
#
# * A lock word overwritten with the pid of a live process that is no
#   queue user (pid 1, a sleeping child): the next caller takes the lock
#   over (the word's owner tag names someone else for a second) and works.
# * A lock word no locker can write (pid bits 0, the high bit set) or one
#   naming the waiting process itself (single-threaded): taken over.
# * A lock held by a stopped process: push_wait_multi and pop_lease_wait
#   return at their timeout (Str, and the Int lease lock); lease calls give
#   up at the lock timeout (Str) or after a second (Int) with a croak.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(240);
my $dir = tmpdir();
my $seq = 0;
my $STR = 'Data::Queue::Shared::Str';
my $INT = 'Data::Queue::Shared::Int';

# Header offsets (Format.pod): the Str front lock word, the back lock word,
# and the field holding the lease table's offset (its first word is the
# Int lease lock).
my ($FRONT, $BACK, $LEASE_OFF) = (72, 136, 288);

sub poke {
    my ($path, $off, $fmt, $v) = @_;
    open my $fh, '+<:raw', $path or die "$path: $!";
    sysseek($fh, $off, 0) or die "seek: $!";
    syswrite($fh, pack($fmt, $v)) == length pack($fmt, 0) or die "write: $!";
    close $fh;
}

sub lease_lock_off {
    my ($path) = @_;
    open my $fh, '<:raw', $path or die "$path: $!";
    sysseek($fh, $LEASE_OFF, 0) or die "seek: $!";
    sysread($fh, my $b, 8) == 8 or die "read: $!";
    return unpack 'Q<', $b;
}

# A child that sleeps, not a queue user; stopped with $stop.
sub bystander {
    my ($stop) = @_;
    my $pid = spawn(sub { sleep 1 while 1 }, timeout => 200);
    if ($stop) {
        kill 'STOP', $pid;
        wait_for(sub { proc_state($pid) eq 'T' }, 10) or die "bystander did not stop\n";
    }
    return $pid;
}

sub str_q { $STR->new($_[0], 16, undef, { max_leases => 8 }) }
sub int_q { $INT->new($_[0], 16, { max_leases => 8 }) }

# ---- words no queue user wrote: taken over, by calls without a timeout ----

my @live = (['a sleeping child', sub { bystander(0) }]);
unshift @live, ['pid 1', sub { 1 }] if kill(0, 1) || $!{EPERM};

for my $l (@live) {
    my ($who, $make) = @$l;
    my $pid = $make->();
    for my $where ([back => $BACK], [front => $FRONT]) {
        my ($side, $off) = @$where;
        subtest "Str $side lock word naming $who" => sub {
            my $path = "$dir/q" . $seq++ . '.shm';
            my $q = str_q($path);
            $q->push('x') for 1 .. 2;
            poke($path, $off, 'V', $pid);
            my $c = spawn(sub {
                my $w = str_q($path);
                if ($side eq 'back') { $w->push('y') or die "push failed\n" }
                else { my $v = $w->pop; die "pop gave " . ($v // 'undef') . "\n" unless ($v // '') eq 'x' }
                my @l = $w->pop_lease;
                die "pop_lease gave nothing\n" unless @l == 3;
                $w->ack($l[1]);
            }, timeout => 30);
            reap_ok($c, "$side lock taken over from $who by calls without a timeout");
            ok($q->stats->{recoveries} >= 1, 'counted as a recovery');
            isnt(header_u32($path, $off) & 0x7fff_ffff, $pid, 'the word no longer names it');
            $q->unlink;
        };
    }
    subtest "Int lease lock word naming $who" => sub {
        my $path = "$dir/q" . $seq++ . '.shm';
        my $q = int_q($path);
        $q->push(7);
        poke($path, lease_lock_off($path), 'V', $pid);
        my $c = spawn(sub {
            my $w = int_q($path);
            my @l = $w->pop_lease;
            die "pop_lease gave @l\n" unless @l == 3 && $l[0] == 7;
            $w->ack($l[1]) or die "ack failed\n";
        }, timeout => 30);
        reap_ok($c, "the lease lock is taken over from $who");
        $q->unlink;
    };
    if ($pid != 1) { kill 'KILL', $pid; reap($pid) }
}

my @impossible = (
    ['high bit only (pid bits 0)', 'V', 0x8000_0000],
    ['high bit and a live pid', 'V', 0x8000_0001],
    ['all ones, with the sleepers word', 'Q<', ~0],
);
for my $case (@impossible) {
    my ($name, $fmt, $v) = @$case;
    subtest "Str front lock word scribbled: $name" => sub {
        my $path = "$dir/q" . $seq++ . '.shm';
        my $q = str_q($path);
        $q->push('x');
        poke($path, $FRONT, $fmt, $v);
        my $c = spawn(sub {
            my $w = str_q($path);
            my $v = $w->pop;
            die "pop gave " . ($v // 'undef') . "\n" unless ($v // '') eq 'x';
            $w->push_front('y') or die "push_front failed\n";
            ($w->pop // '') eq 'y' or die "pop after push_front\n";
        }, timeout => 30);
        reap_ok($c, 'taken over; pop and push_front work');
        $q->unlink;
    };
}

subtest 'Str lock word naming the waiting process itself' => sub {
    my $path = "$dir/q" . $seq++ . '.shm';
    my $q = str_q($path);
    $q->push('x');
    my $c = spawn(sub {
        my $w = str_q($path);
        poke($path, $FRONT, 'V', $$);
        my $v = $w->pop;
        die "pop gave " . ($v // 'undef') . "\n" unless ($v // '') eq 'x';
    }, timeout => 30);
    reap_ok($c, 'a single-threaded process does not wait for itself');
    $q->unlink;
};

# ---- a stopped holder: calls with a timeout return at it ----

subtest 'Str locks held by a stopped process: waits end at their timeout' => sub {
    my $path = "$dir/q" . $seq++ . '.shm';
    my $q = str_q($path);
    $q->push('x');
    my $holder = doomed_at($STR, $path, 'str_lock_stop', sub { $_[0]->push_front('held') });
    ok(wait_for(sub { proc_state($holder) eq 'T' }, 10), 'the holder stopped with both locks');
    my $c = spawn(sub {
        my $w = str_q($path);
        my $n = $w->push_wait_multi(0.3, 'a', 'b');
        die "push_wait_multi pushed $n\n" unless $n == 0;
        my @l = $w->pop_lease_wait(0.3);
        die "pop_lease_wait gave @l\n" if @l;
        die "push_wait gave true\n" if $w->push_wait('c', 0.2);
    }, timeout => 20);
    reap_ok($c, 'push_wait_multi, pop_lease_wait and push_wait returned at their timeout');
    my $lt = spawn(sub {
        my $w = str_q($path);
        $w->lock_timeout(0.2);
        die "push gave true\n" if $w->push('c');
        die "push: \$! is not ETIMEDOUT: $!\n" unless $!{ETIMEDOUT};
        for my $call ([pop_lease => sub { $w->pop_lease }], [pop_lease_wait => sub { $w->pop_lease_wait(5) }]) {
            my ($m, $code) = @$call;
            my $ok = eval { $code->(); 1 };
            die "$m did not croak\n" if $ok;
            die "$m: $@" unless $@ =~ /^\Q$STR\E->$m: lock timeout at /;
        }
    }, timeout => 20);
    reap_ok($lt, 'with a lock timeout: push returns false (ETIMEDOUT), lease calls croak "lock timeout"');
    kill 'KILL', $holder;
    reap($holder);
    is($q->pop, 'x', 'taken over once the holder is killed');
    $q->unlink;
};

subtest 'Int lease lock held by a stopped process' => sub {
    my $path = "$dir/q" . $seq++ . '.shm';
    my $q = int_q($path);
    $q->push(7);
    my $stopped = bystander(1);
    poke($path, lease_lock_off($path), 'V', $stopped);
    my $c = spawn(sub {
        my $w = int_q($path);
        my @l = $w->pop_lease_wait(0.3);
        die "pop_lease_wait gave @l\n" if @l;
        my $ok = eval { $w->pop_lease; 1 };
        die "pop_lease did not croak\n" if $ok;
        die "pop_lease: $@" unless $@ =~ /^\Q$INT\E->pop_lease: lock timeout at /;
    }, timeout => 20);
    reap_ok($c, 'pop_lease_wait returns at its timeout; pop_lease croaks "lock timeout" after a second');
    is($q->pop, 7, 'plain pops do not need the lease lock');
    kill 'KILL', $stopped;
    reap($stopped);
    $q->unlink;
};

done_testing;
