package DQSCli;

# Helpers for the tests of the dqs command-line tool (t/5*-cli*.t): where
# the binary is, and running it with given standard input while capturing
# its exit status, standard output and standard error (through files, so
# nothing can deadlock on a full pipe).
#
#     my $r = dqs(['pop', $path, '-n', 3], stdin => "...");
#     is $r->{code}, 0; is $r->{out}, "1\n2\n3\n";

use strict;
use warnings;

use Exporter ();
our @ISA = ('Exporter');
use File::Spec ();
use FindBin ();
use POSIX ();
use Test::More ();
use DQSTest ();

our @EXPORT = qw($DQS dqs dqs_bg one_line_err slurp spew);

# The binary: $DQS_BIN, else target/release/dqs of this tree. Tests skip
# (with the reason) only when it is missing; `make` builds it.
our $DQS = $ENV{DQS_BIN}
    // File::Spec->catfile($FindBin::Bin, File::Spec->updir, qw(target release dqs));

sub import {
    if (!-x $DQS) {
        Test::More::plan(skip_all => "the dqs binary is not built ($DQS); run make first");
    }
    __PACKAGE__->export_to_level(1, @_);
}

my $RUNDIR;
my $RUN = 0;

sub slurp {
    my ($path) = @_;
    open my $fh, '<:raw', $path or die "open $path: $!";
    local $/;
    my $s = <$fh>;
    return $s // '';
}

sub spew {
    my ($path, $data) = @_;
    open my $fh, '>:raw', $path or die "open $path: $!";
    print {$fh} $data;
    close $fh or die "close $path: $!";
}

sub _files {
    $RUNDIR //= File::Temp::tempdir('dqs-cli-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    my $n = $RUN++;
    return map { "$RUNDIR/$n.$_" } qw(in out err);
}

# Start dqs with @$args; standard input from $opt{stdin} (a string) or
# /dev/null. Returns ($pid, $out_file, $err_file). The child is a plain
# fork + exec, counted among the test's children (DQSTest::track, so the
# watchdog kills it), which the caller reaps with DQSTest::reap.
sub dqs_bg {
    my ($args, %opt) = @_;
    require File::Temp;
    my ($in, $out, $err) = _files();
    spew($in, $opt{stdin} // '');
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if ($pid == 0) {
        $SIG{$_} = 'DEFAULT' for qw(ALRM TERM INT HUP CHLD);
        open STDIN,  '<', $in  or POSIX::_exit(126);
        open STDOUT, '>', $out or POSIX::_exit(126);
        open STDERR, '>', $err or POSIX::_exit(126);
        { no warnings 'exec'; exec { $DQS } $DQS, @$args; }
        POSIX::_exit(127);
    }
    DQSTest::track($pid);
    return ($pid, $out, $err);
}

# Run dqs to completion. Returns { code, signal, out, err }.
sub dqs {
    my ($args, %opt) = @_;
    my ($pid, $out, $err) = dqs_bg($args, %opt);
    my $st = DQSTest::reap($pid);
    die "waitpid: $!" if $st == -1;
    return {
        code   => $st >> 8,
        signal => $st & 127,
        out    => slurp($out),
        err    => slurp($err),
    };
}

# ok() that a result's stderr is exactly one line matching $re.
sub one_line_err {
    my ($r, $re, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    return Test::More::ok($r->{err} =~ /\A[^\n]*\n\z/ && $r->{err} =~ $re, $name)
        || Test::More::diag("stderr was: $r->{err}");
}

1;
