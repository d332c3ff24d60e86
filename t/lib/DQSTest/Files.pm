package DQSTest::Files;

# Files and fds for the tests that the Int and Str twins share: one private
# directory per test with fresh paths in it, whole-file reads and writes,
# file modes, fd state read from /proc (so no Perl handle takes ownership
# of an fd), the checks every memfd must pass, and processes that race to
# create the same path.
#
#     use DQSTest::Files;
#     my $p = fresh_path();            # "$dir/f0.shm", then f1.shm, ...
#     my $n = race_creators(8, sub { my ($i) = @_; ... });

use strict;
use warnings;

use Exporter 'import';
use POSIX ();
use Test::More ();
use Time::HiRes ();

use DQSTest ();

our @EXPORT = qw(
    scratch_dir fresh_path mode_of slurp spew
    fd_open fd_flags fd_count maps_count memfd_sealed_ok race_creators
);

use constant F_GET_SEALS   => 1034;
use constant F_SEAL_SHRINK => 2;
use constant F_SEAL_GROW   => 4;
use constant O_CLOEXEC_BIT => 02000000;

my $DIR;
my $SEQ = 0;

# The test's private temporary directory (made on first use, removed when
# the test exits).
sub scratch_dir { return $DIR //= DQSTest::tmpdir() }

# A path in scratch_dir that nothing has used: "$dir/${stem}N.shm" (stem
# "f" by default), N counting up over the whole test.
sub fresh_path {
    my ($stem) = @_;
    return scratch_dir() . '/' . ($stem // 'f') . $SEQ++ . '.shm';
}

sub mode_of { (stat $_[0])[2] & 07777 }

# The bytes of the file at $path, or undef when it cannot be opened.
sub slurp {
    my ($path) = @_;
    open my $fh, '<:raw', $path or return undef;
    local $/;
    return scalar <$fh>;
}

# Write $bytes as the whole file at $path; dies on failure.
sub spew {
    my ($path, $bytes) = @_;
    open my $fh, '>:raw', $path or die "open $path: $!";
    print {$fh} $bytes or die "write $path: $!";
    close $fh or die "close $path: $!";
}

# Is $fd open in this process? (Does not create a Perl handle on it.)
sub fd_open { defined POSIX::lseek($_[0], 0, POSIX::SEEK_CUR()) || $! != POSIX::EBADF() }

# The open flags of $fd, from /proc (so no Perl handle takes ownership of it).
sub fd_flags {
    my ($fd) = @_;
    open my $fh, '<', "/proc/self/fdinfo/$fd" or return undef;
    while (<$fh>) { return oct $1 if /^flags:\s*([0-7]+)/ }
    return undef;
}

# How many fds this process has open, and how many mappings it has (lines
# of /proc/self/maps), for the tests that check nothing leaks.
sub fd_count {
    opendir my $d, '/proc/self/fd' or die "opendir /proc/self/fd: $!";
    return scalar grep { /^\d+$/ } readdir $d;
}

sub maps_count {
    open my $m, '<', '/proc/self/maps' or die "open /proc/self/maps: $!";
    my @l = <$m>;
    return scalar @l;
}

# The checks every memfd queue passes, seven of them: its fd is
# close-on-exec (by its flags, and an exec()ed program does not have it),
# and the file is sealed against shrinking and growing.
sub memfd_sealed_ok {
    my ($q) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $fd = $q->memfd;
    my $flags = fd_flags($fd);
    Test::More::ok(defined $flags && ($flags & O_CLOEXEC_BIT), 'O_CLOEXEC set on the memfd')
        or Test::More::diag(sprintf 'flags %o', $flags // -1);

    # By identity, not by number: a program run under valgrind finds
    # the tool's own files at low numbers. None of its fds is this memfd.
    my ($dev, $ino) = (stat "/proc/self/fd/$fd")[0, 1];
    my $status = system($^X, '-e', 'for (glob "/proc/self/fd/*") { my @s = stat;'
        . " exit 3 if \@s && \$s[0] == $dev && \$s[1] == $ino } exit 0");
    Test::More::is($status >> 8, 0, 'an exec()ed program does not inherit the memfd');

    open(my $dup, '+<&', $fd) or die "dup memfd: $!";    # seals are per file
    my $seals = fcntl($dup, F_GET_SEALS, 0);
    Test::More::ok(defined $seals, 'F_GET_SEALS works') or Test::More::diag("fcntl: $!");
    $seals = 0 + ($seals // 0);
    Test::More::ok($seals & F_SEAL_SHRINK, 'sealed against shrinking');
    Test::More::ok($seals & F_SEAL_GROW, 'sealed against growing');
    Test::More::ok(!truncate($dup, 0) && $!{EPERM}, 'truncate to 0 fails with EPERM')
        or Test::More::diag("truncate: $!");
    Test::More::ok(!truncate($dup, 1 << 20), 'growing fails');
    close $dup;
}

# Start $n children that wait at one gate (a pipe) and then all run
# $code->($i) at once ($i = 0 .. $n - 1); returns how many exited cleanly.
sub race_creators {
    my ($n, $code) = @_;
    pipe(my $r, my $w) or die "pipe: $!";
    my @pids;
    for my $i (0 .. $n - 1) {
        push @pids, DQSTest::spawn(sub {
            close $w;
            sysread($r, my $buf, 1);    # EOF when the parent closes: go
            $code->($i);
        });
    }
    close $r;
    Time::HiRes::sleep(0.05);
    close $w;
    my $clean = 0;
    $clean += DQSTest::reap($_) == 0 ? 1 : 0 for @pids;
    return $clean;
}

1;
