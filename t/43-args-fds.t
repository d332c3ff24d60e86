# Hostile Perl arguments and file descriptors: absurd numbers (1e30, 2**64,
# inf, NaN, negative, '12abc'), references and non-numeric strings where a
# number, a path or a name belongs croak naming the method and the value,
# and create nothing; new_from_fd refuses a directory, a pipe, an eventfd,
# /dev/null, huge and non-numeric fds; closing a queue's memfd or eventfd
# from Perl never crashes, and DESTROY then leaves alone whatever file got
# that fd number next; 1000 create/destroy cycles of Int32 and Int16 in
# each backing leak no fd and no mapping (t/42 does Int and Str).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Backing;
use DQSTest::Files qw(fd_count maps_count);
use Test::More;
use Cwd ();
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(120);
my $dir = tmpdir();
my $STR = 'Data::Queue::Shared::Str';
my @ALL = (@INT_CLASSES, $STR);

sub fd_open { defined readlink("/proc/self/fd/$_[0]") }
sub entries { opendir my $d, $_[0] or die "opendir $_[0]: $!"; sort grep { !/^\.\.?$/ } readdir $d }

subtest 'absurd capacities and arena sizes croak, naming the value' => sub {
    my @cases = (
        [1e30,       qr/capacity 1e\+30 is too large/],
        [2**64,      qr/capacity 1\.84467e\+19 is too large/],
        ['inf',      qr/capacity Inf is too large/],
        [9**9**9,    qr/capacity Inf is too large/],
        ['-inf',     qr/capacity must be a positive integer, got -Inf/],
        ['nan',      qr/capacity must be a positive integer, got NaN/],
        [-1,         qr/capacity must be a positive integer, got -1\b/],
        [0,          qr/capacity must be a positive integer, got 0\b/],
        [0.5,        qr/capacity must be a positive integer, got 0\.5/],
        ['12abc',    qr/capacity must be a positive integer, got '12abc'/],
        ['',         qr/capacity must be a positive integer, got ''/],
        ['0x10',     qr/capacity must be a positive integer, got '0x10'/],
        [[],         qr/capacity must be a positive integer, got 'ARRAY\(0x/],
        [undef,      qr/capacity is required/],
        [2**30 + 1,  qr/capacity 1073741825 is out of range/],
        [2**63,      qr/capacity 9223372036854775808 is out of range/],
    );
    for my $class (@ALL) {
        for my $c (@cases) {
            my ($cap, $re) = @$c;
            my $show = defined $cap ? "'$cap'" : 'undef';
            eval { $class->new(undef, $cap) };
            like($@, qr/^\Q$class\E->new: $re/, "$class->new(undef, $show)");
            eval { $class->new_memfd('x', $cap) };
            like($@, qr/^\Q$class\E->new_memfd: $re/, "$class->new_memfd('x', $show)");
        }
    }
    for my $arena ([1e30, qr/arena size 1e\+30 is too large/],
                   [-5, qr/arena size must be a positive integer, got -5/],
                   ['big', qr/arena size must be a positive integer, got 'big'/],
                   [2**33, qr/arena size 8589934592 exceeds the maximum/]) {
        eval { $STR->new(undef, 4, $arena->[0]) };
        like($@, qr/^\Q$STR\E->new: $arena->[1]/, "$STR->new(undef, 4, '$arena->[0]')");
    }
    ok($STR->new(undef, 4, undef), 'an undef arena means the default');
};

subtest 'references and NUL bytes as paths or names croak and create nothing' => sub {
    my $old = Cwd::getcwd();
    my $here = "$dir/refs";
    mkdir $here or die;
    chdir $here or die;
    {
        package Stringy;
        use overload '""' => sub { $_[0]{p} }, fallback => 1;
    }
    for my $class (@ALL) {
        for my $ref ([], {}, \'q.shm', sub { 1 }) {
            my $kind = ref $ref;
            eval { $class->new($ref, 4) };
            like($@, qr/^\Q$class\E->new: path must be a string, not a reference \($kind\(0x/,
                 "$class->new($kind ref)");
            eval { $class->new_memfd($ref, 4) };
            like($@, qr/^\Q$class\E->new_memfd: name must be a string, not a reference/,
                 "$class->new_memfd($kind ref)");
            eval { $class->unlink($ref) };
            like($@, qr/^\Q$class\E->unlink: path must be a string, not a reference/,
                 "$class->unlink($kind ref)");
        }
        eval { $class->new_memfd("a\0b", 4) };
        like($@, qr/^\Q$class\E->new_memfd: name contains a NUL byte/, "$class->new_memfd: NUL in the name");
        my $q = $class->new(bless({ p => "$here/ov.shm" }, 'Stringy'), 4);
        ok(-f "$here/ov.shm", "$class: an object with \"\" overloading is a path");
        $q->unlink;
    }
    is_deeply([entries($here)], [], 'no file was created from a stringified reference');
    chdir $old or die;
};

subtest 'file modes that are not numbers croak' => sub {
    for my $class (@ALL) {
        my $p = "$dir/mode.shm";
        my @extra = $class eq $STR ? (undef) : ();
        for my $m ('abc', '', [], 'rw-') {
            eval { $class->new($p, 4, @extra, $m) };
            like($@, qr/^\Q$class\E->new: mode '\Q$m\E' is not a file mode/, "$class: mode '$m'");
            ok(!-e $p, '... and no file was created');
        }
        eval { $class->new($p, 4, @extra, 0o10000) };
        like($@, qr/^\Q$class\E->new: mode 4096 is not a file mode/, "$class: mode 010000");
    }
};

subtest 'timeouts, counts and budgets that are not numbers croak' => sub {
    for my $class (@ALL) {
        my $q = $class->new(undef, 8);
        my $v = $class eq $STR ? 'x' : 1;
        $q->push($v) for 1 .. 3;
        my $re = qr/^\Q$class\E->/;
        for my $t ('abc', [], '1s') {
            eval { $q->push_wait($v, $t) };
            like($@, qr/${re}push_wait: timeout must be a number of seconds, got '\Q$t\E'/,
                 "push_wait timeout '$t'");
            eval { $q->pop_wait($t) };
            like($@, qr/${re}pop_wait: timeout must be a number of seconds/, "pop_wait timeout '$t'");
            eval { $q->push_wait_multi($t, $v) };
            like($@, qr/${re}push_wait_multi: timeout must be a number of seconds/,
                 "push_wait_multi timeout '$t'");
            eval { $q->pop_wait_multi(1, $t) };
            like($@, qr/${re}pop_wait_multi: timeout must be a number of seconds/,
                 "pop_wait_multi timeout '$t'");
        }
        for my $n ('abc', [], {}) {
            eval { $q->pop_multi($n) };
            like($@, qr/${re}pop_multi: count must be a number, got '/, "pop_multi('$n')");
            eval { $q->pop_wait_multi($n, 0) };
            like($@, qr/${re}pop_wait_multi: count must be a number, got '/, "pop_wait_multi('$n')");
            eval { $q->drain($n) };
            like($@, qr/${re}drain: max must be a number, got '/, "drain('$n')");
        }
        eval { $q->pop_multi(undef) };
        like($@, qr/${re}pop_multi: count is required/, 'pop_multi(undef)');
        eval { $q->pop_multi('nan') };
        like($@, qr/${re}pop_multi: count must be a number, got NaN/, 'pop_multi(NaN)');
        is($q->size, 3, 'nothing was pushed or popped by the failed calls');
        is(scalar(my @n = $q->pop_multi(-5)), 3, 'a negative count pops all (as in the C implementation)');
        $q->push($v) for 1 .. 3;
        is(scalar(my @a = $q->pop_multi(1e30)), 3, 'a count of 1e30 pops what there is');
        {
            package Num3;
            use overload '0+' => sub { 3 }, fallback => 1;
        }
        $q->push($v) for 1 .. 4;
        is(scalar(my @b = $q->pop_multi(bless {}, 'Num3')), 3, 'a count with numeric overloading');
        is(scalar(my @c = $q->drain('1e1')), 1, 'drain takes a numeric string');
        if ($class eq $STR) {
            eval { $q->pop_multi(2, 'lots') };
            like($@, qr/${re}pop_multi: max_bytes must be a non-negative number, got 'lots'/,
                 'pop_multi max_bytes that is not a number');
        }
    }
};

subtest 'new_from_fd refuses what cannot hold a queue' => sub {
    opendir(my $dh, $dir) or die;
    my $dirfd = POSIX::open($dir, POSIX::O_RDONLY()) // die "open $dir: $!";
    pipe(my $r, my $w) or die;
    my $evq = Data::Queue::Shared::Int->new(undef, 2);
    my $efd = $evq->eventfd;
    open(my $null, '+<', '/dev/null') or die;
    for my $class (@ALL) {
        my $re = qr/^\Q$class\E->new_from_fd: /;
        eval { $class->new_from_fd($dirfd) };
        my $why = qr/invalid or incompatible queue file \(/;
        like($@, qr/${re}fd $dirfd: ${why}a directory, not a memfd or regular file\)/, "$class: a directory fd");
        eval { $class->new_from_fd(fileno $r) };
        like($@, qr/${re}.*${why}a pipe or FIFO, not a memfd or regular file\)/, "$class: a pipe");
        eval { $class->new_from_fd($efd) };
        like($@, qr/${re}.*${why}a special file, not a memfd or regular file\)/, "$class: an eventfd");
        eval { $class->new_from_fd(fileno $null) };
        like($@, qr/${re}.*${why}a character device, not a memfd or regular file\)/, "$class: /dev/null");
        for my $bad (2**40, 2**31) {
            eval { $class->new_from_fd($bad) };
            like($@, qr/${re}fd $bad is not a valid file descriptor/, "$class: fd $bad");
        }
        for my $bad ('abc', [], \*STDIN, '') {
            eval { $class->new_from_fd($bad) };
            like($@, qr/${re}fd must be a file descriptor number/, "$class: fd '$bad'");
        }
        eval { $class->new_from_fd(2**31 - 1) };
        like($@, qr/${re}fd 2147483647: .*Bad file descriptor/, "$class: fd 2**31-1 (not open)");
    }
    POSIX::close($dirfd);
};

subtest 'a memfd closed from Perl' => sub {
    for my $class (@ALL) {
        my $v = $class eq $STR ? 'payload' : 42;
        my $q = $class->new_memfd('closed', 8);
        my $fd = $q->memfd;
        ok(POSIX::close($fd), "$class: closed the memfd from Perl");
        ok($q->push($v), 'push still works (the mapping does not need the fd)');
        is($q->pop, $v, 'pop too');
        is($q->memfd, $fd, 'memfd still reports the number');
        eval { $class->new_from_fd($fd) };
        like($@, qr/^\Q$class\E->new_from_fd: fd $fd: .*Bad file descriptor/, 'new_from_fd of it croaks');
        # The number is reused by the next open: DESTROY must not close it.
        my $p = "$dir/reuse.txt";
        my $ufd = POSIX::open($p, POSIX::O_CREAT() | POSIX::O_RDWR(), 0600);
        is($ufd, $fd, 'fixture: the next open reuses the number');
        undef $q;
        ok(fd_open($ufd), 'DESTROY left the file that now has the number open');
        is(POSIX::write($ufd, "ok", 2), 2, 'and it is still usable');
        POSIX::close($ufd);
        unlink $p;
    }
};

subtest 'an eventfd closed from Perl, its number reused' => sub {
    for my $class (@ALL) {
        my $q = $class->new(undef, 8);
        my $fd = $q->eventfd;
        POSIX::close($fd);
        my $p = "$dir/reuse-ev.txt";
        my $ufd = POSIX::open($p, POSIX::O_CREAT() | POSIX::O_RDWR(), 0600);
        is($ufd, $fd, "$class: fixture: the next open reuses the number");
        undef $q;
        ok(fd_open($ufd), 'DESTROY left the file that now has the number open');
        POSIX::close($ufd);
        unlink $p;

        # and the plain case still closes its own eventfd
        $q = $class->new(undef, 8);
        $fd = $q->eventfd;
        undef $q;
        ok(!fd_open($fd), 'an eventfd still ours is closed by DESTROY');
    }
};

SKIP: {
    skip 'no /proc/self', 1 unless -d '/proc/self/fd';
    subtest '1000 create/destroy cycles of Int32 and Int16 leak nothing' => sub {
        leak_cycles_ok(['Data::Queue::Shared::Int32', 'Data::Queue::Shared::Int16'],
                       sub { eval { $_[0]->new_from_fd(-1) } });
    };
}

done_testing;
