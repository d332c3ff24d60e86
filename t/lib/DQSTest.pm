package DQSTest;

# Shared helpers for the Data::Queue::Shared test suite: the list of integer
# classes and their geometry, temporary directories, forking children that
# always exit (and are always reaped), a watchdog that turns a hang into a
# loud failure, elapsed-time checks with generous bounds, and a
# $SIG{__WARN__} hook that makes any warning a test failure.
#
#     use FindBin;
#     use lib "$FindBin::Bin/lib";
#     use DQSTest;
#
#     watchdog(60);
#     my $pid = spawn(sub { ... die on failure ... });
#     reap_ok($pid, 'child finished cleanly');

use strict;
use warnings;

use Carp ();
use Exporter 'import';
use File::Temp ();
use POSIX ();
use Test::More ();
use Time::HiRes ();

our @EXPORT = qw(
    @INT_CLASSES HEADER_SIZE slot_size mmap_size_for
    tmpdir spawn track reap reap_ok kill_children
    watchdog now between_ok wait_for header_u32
    asleep wait_asleep woken proc_state doomed_at
    NAN INF
);

our @INT_CLASSES = qw(
    Data::Queue::Shared::Int
    Data::Queue::Shared::Int32
    Data::Queue::Shared::Int16
);

use constant HEADER_SIZE => 320;
use constant INF         => 9**9**9;
use constant NAN         => 9**9**9 - 9**9**9;

my %SLOT_SIZE = (
    'Data::Queue::Shared::Int'   => 16,
    'Data::Queue::Shared::Int32' => 8,
    'Data::Queue::Shared::Int16' => 8,
);

# Bytes per slot of an integer class.
sub slot_size {
    my ($class) = @_;
    return $SLOT_SIZE{$class} // die "no slot size for $class";
}

# The exact size of the mapping (and of the backing file) of a queue:
# header, slots, then (format 7) the ring's 32 intent records of 64 bytes
# on a 64-byte boundary, then the default lease table (format 8): a
# 192-byte head, 64 records of 128 bytes and 64 dead-letter records of 64.
sub mmap_size_for {
    my ($class, $cap) = @_;
    my $end = HEADER_SIZE + $cap * slot_size($class);
    return (($end + 63) & ~63) + 32 * 64 + 192 + 64 * 128 + 64 * 64;
}

my $MAIN_PID = $$;
my %KIDS;            # pid => 1 for every child spawned and not yet reaped
my $WATCHER;         # pid of the watchdog process, when one is used
my $CHILD_WARNED = 0;

# Any warning fails the test. In a child, where printing TAP would corrupt
# the stream, the warning goes to STDERR and the child exits non-zero.
$SIG{__WARN__} = sub {
    my $msg = join '', @_;
    if ($$ == $MAIN_PID) {
        Test::More::fail('no warnings');
        Test::More::diag("unexpected warning: $msg");
    }
    else {
        $CHILD_WARNED = 1;
        print STDERR "# child $$ warned: $msg";
    }
};

# A private temporary directory removed when the test exits.
sub tmpdir {
    return File::Temp::tempdir('dqs-test-XXXXXX', TMPDIR => 1, CLEANUP => 1);
}

sub now { Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()) }

# DQS_TIMEOUT_FACTOR (default 1) stretches the last-resort timers (the
# watchdog, a child's alarm) and wait_for's patience, for runs under a slow
# tool such as valgrind (dev/valgrind.sh sets it). It changes only how long
# a hang takes to fail, never what a test checks.
my $FACTOR = ($ENV{DQS_TIMEOUT_FACTOR} // '') =~ /\A[0-9]+(?:\.[0-9]+)?\z/
    && $ENV{DQS_TIMEOUT_FACTOR} >= 1 ? $ENV{DQS_TIMEOUT_FACTOR} : 1;
sub _stretch { my $s = $_[0] * $FACTOR; return $s == int $s ? $s : int($s) + 1 }

# Fork a child that runs $code and exits: 0 when $code returns, 70 when it
# dies (the error goes to STDERR), 71 when it warned. The child never runs
# END blocks or the parent's destructors (POSIX::_exit), has its own alarm
# as a last resort, and default signal dispositions.
sub spawn {
    my ($code, %opt) = @_;
    my $timeout = _stretch($opt{timeout} // 60);
    my $pid = fork;
    die "fork failed: $!" unless defined $pid;
    if ($pid == 0) {
        %KIDS    = ();
        $WATCHER = undef;
        $SIG{$_} = 'DEFAULT' for qw(ALRM TERM INT HUP USR1 USR2 CHLD);
        alarm $timeout;
        my $ok  = eval { $code->(); 1 };
        my $err = $@;
        if (!$ok) {
            print STDERR "# child $$ died: $err";
            POSIX::_exit(70);
        }
        POSIX::_exit($CHILD_WARNED ? 71 : 0);
    }
    $KIDS{$pid} = 1;
    return $pid;
}

# A child that opens a $class queue of 16 slots at $path with the kill
# point $point set (DQS_TEST_KILL_POINT) and runs $code on it; the kill
# point ends it. Returns the pid (not reaped).
sub doomed_at {
    my ($class, $path, $point, $code) = @_;
    return spawn(sub {
        local $ENV{DQS_TEST_KILL_POINT} = $point;
        my $q = $class->new($path, 16);
        $code->($q);
        die "kill point $point was not reached\n";
    });
}

# The state letter of process $pid from /proc/PID/stat (R, S, T, Z, ...),
# or '' when it is gone.
sub proc_state {
    my ($pid) = @_;
    open my $fh, '<', "/proc/$pid/stat" or return '';
    my $s = <$fh>;
    return $s =~ /\)\s+(\S)/ ? $1 : '';
}

# Count a child started some other way (a fork + exec) as ours: the
# watchdog and the end of the test kill it if it is still running. Reap
# it with reap (or reap_ok), which forgets it.
sub track {
    my ($pid) = @_;
    $KIDS{$pid} = 1;
    return $pid;
}

# Wait for one child; returns its raw wait status ($?), which also stays in
# $?. With $nohang, returns undef (and keeps the child) while it runs.
sub reap {
    my ($pid, $nohang) = @_;
    my $r = waitpid($pid, $nohang ? POSIX::WNOHANG() : 0);
    return undef if $nohang && $r == 0;
    my $status = $?;
    delete $KIDS{$pid};
    return $r == $pid ? $status : -1;
}

sub reap_ok {
    my ($pid, $name) = @_;
    my $status = reap($pid);
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    Test::More::is($status, 0, $name // "child $pid exited cleanly")
        or Test::More::diag(sprintf 'child %d: exit %d, signal %d',
                            $pid, $status >> 8, $status & 127);
    return $status == 0;
}

# Kill and reap every child still running.
sub kill_children {
    my @pids = keys %KIDS;
    kill 'KILL', @pids if @pids;
    for my $pid (@pids) {
        waitpid($pid, 0);
        delete $KIDS{$pid};
    }
    return scalar @pids;
}

# Turn a hang into a loud failure: after $secs seconds kill every child and
# exit with status 124, whatever the test is doing (the handler is installed
# with POSIX::sigaction as an unsafe handler, so it runs even while the
# process is stuck inside an XSUB).
#
# By default the timer is alarm(). A test that uses SIGALRM itself passes
# process => 1: a watcher process then sends SIGTERM instead.
sub watchdog {
    my ($secs, %opt) = @_;
    $secs = _stretch($secs);
    my $handler = sub {
        my $where = Carp::longmess('stuck');
        $where =~ s/^/#   /mg;
        print STDERR "# WATCHDOG: $0 still running after ${secs}s;",
                     " killing children and failing. It was here:\n$where\n";
        kill_children();
        File::Temp::cleanup();
        POSIX::_exit(124);
    };
    my $action = POSIX::SigAction->new($handler, POSIX::SigSet->new, 0);
    $action->safe(0);
    if ($opt{process}) {
        my $parent = $$;
        my $pid = fork;
        die "fork failed: $!" unless defined $pid;
        if ($pid == 0) {
            $SIG{$_} = 'DEFAULT' for qw(ALRM TERM INT);
            my $end = now() + $secs;
            while (now() < $end) {
                Time::HiRes::sleep(0.2);
                POSIX::_exit(0) if getppid() != $parent;
            }
            kill 'TERM', $parent;
            Time::HiRes::sleep(10);
            kill 'KILL', $parent if getppid() == $parent;
            POSIX::_exit(0);
        }
        $WATCHER = $pid;
        POSIX::sigaction(POSIX::SIGTERM(), $action) or die "sigaction: $!";
    }
    else {
        POSIX::sigaction(POSIX::SIGALRM(), $action) or die "sigaction: $!";
        alarm $secs;
    }
    return;
}

# ok() that $elapsed lies in [$lo, $hi], with a diagnostic when it does not.
sub between_ok {
    my ($elapsed, $lo, $hi, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    return Test::More::ok($elapsed >= $lo && $elapsed <= $hi, $name)
        || Test::More::diag(sprintf 'elapsed %.3fs, expected between %.3f and %.3f',
                            $elapsed, $lo, $hi);
}

# Poll $cond every 5 ms until it returns true or $timeout seconds pass.
# Returns the last value of $cond.
sub wait_for {
    my ($cond, $timeout) = @_;
    my $end = now() + ($timeout // 10) * $FACTOR;
    while (1) {
        my $v = $cond->();
        return $v if $v || now() >= $end;
        Time::HiRes::sleep(0.005);
    }
}

# The little-endian u32 at byte $off of the queue file $path, read from the
# file itself (tests that look at header words, such as the Str lock's).
sub header_u32 {
    my ($path, $off) = @_;
    open my $fh, '<:raw', $path or die "$path: $!";
    sysseek($fh, $off, 0) or die "$path: seek: $!";
    sysread($fh, my $buf, 4) == 4 or die "$path: short read at $off";
    return unpack('V', $buf);
}

# Whether process $pid sleeps in the kernel on a futex: its /proc wchan
# names a futex function (futex_wait_queue, futex_do_wait, ... by kernel).
# A queue waiter or lock sleeper that announced itself is asleep only
# then: a wake-up counted after this is one it needed.
sub asleep {
    my ($pid) = @_;
    open my $fh, '<', "/proc/$pid/wchan" or return 0;
    my $w = <$fh> // '';
    return $w =~ /futex/ ? 1 : 0;
}

# Wait until every pid in @$pids is asleep on a futex (see asleep); false
# if one is not after $timeout seconds (default 10).
sub wait_asleep {
    my ($pids, $timeout) = @_;
    return wait_for(sub { !grep { !asleep($_) } @$pids }, $timeout // 10);
}

# Sleepers this process has woken with FUTEX_WAKE so far (a test hook of
# the XS: queue waiters and lock sleepers alike). Tests that set
# DQS_TEST_NO_SLICE before loading the module check wake-ups by this
# count, so a lost wake-up fails by count as well as by a hang.
sub woken { return Data::Queue::Shared::_futex_woken() }

END {
    if ($$ == $MAIN_PID) {
        my $status = $?;
        alarm 0;
        if (my $n = kill_children()) {
            print STDERR "# killed $n leftover child process(es)\n";
        }
        if ($WATCHER) {
            kill 'KILL', $WATCHER;
            waitpid($WATCHER, 0);
        }
        $? = $status;
    }
}

1;
