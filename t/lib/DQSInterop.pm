package DQSInterop;

# Cross-language tests: a Perl process and a foreign program (the Rust
# examples, or the C examples built against the staticlib) share one
# file-backed queue of each variant. A "tool" is a hash with
#
#     name     => 'Rust' or 'C'
#     producer => sub (%opt) -> argv   # opt: path type items wait utf8
#     consumer => sub (%opt) -> argv   # opt: path type count wait
#
# and run_all($tool) runs every scenario with it: values and strings
# (with and without the UTF-8 flag) in both directions, and blocking waits
# woken across the language boundary both ways, for Int, Int32, Int16 and
# Str. Every foreign process runs under spawn()'s alarm; the test file
# sets the overall watchdog.

use strict;
use warnings;

use Config;
use Exporter 'import';
use File::Spec;
use FindBin;
use Test::More;

use DQSTest;
use Data::Queue::Shared;

our @EXPORT = qw(root_dir find_cargo build_cargo run_all);

my %CLASS = (
    int   => 'Data::Queue::Shared::Int',
    int32 => 'Data::Queue::Shared::Int32',
    int16 => 'Data::Queue::Shared::Int16',
    str   => 'Data::Queue::Shared::Str',
);

# Values that hit each width's edges, in a form Perl holds as integers.
my %VALUES = (
    int   => [0, 1, -1, 9223372036854775807, -9223372036854775807 - 1, 1234567890123],
    int32 => [0, 1, -1, 2147483647, -2147483648, 1000000],
    int16 => [0, 1, -1, 32767, -32768, 12345],
);

# Foreign producers truncate out-of-range integers as a C cast does.
my %TRUNCATED = (
    int   => [['9223372036854775807', 9223372036854775807]],
    int32 => [['4294967297', 1], ['2147483648', -2147483648]],
    int16 => [['70000', 4464], ['-32769', 32767]],
);

sub root_dir { File::Spec->rel2abs("$FindBin::Bin/..") }

# The cargo to use, or undef when none runs.
sub find_cargo {
    my $cargo = $ENV{CARGO} || 'cargo';
    my $v = `$cargo --version 2>/dev/null`;
    return $v ? $cargo : undef;
}

# Run cargo with @args in the crate root (target dir "target", as the
# Makefile uses). Dies with cargo's output when it fails.
sub build_cargo {
    my ($cargo, @args) = @_;
    my $log = File::Spec->catfile(tmpdir(), 'cargo.log');
    my $root = root_dir();
    my $pid = spawn(sub {
        # Under dev/asan.sh the ASan runtime is preloaded into every process;
        # cargo and rustc are not ours and crash with it (rustc's own
        # allocator), so they run without it.
        delete $ENV{LD_PRELOAD};
        chdir $root or die "chdir $root: $!";
        open STDOUT, '>', $log or die "open $log: $!";
        open STDERR, '>&', \*STDOUT or die "dup: $!";
        exec $cargo, 'build', '--release', '--quiet', '--target-dir', 'target', @args;
        die "exec $cargo: $!";
    }, timeout => 1500);
    my $status = reap($pid);
    return 1 if $status == 0;
    open my $fh, '<', $log;
    my $text = $fh ? do { local $/; <$fh> } : '';
    die "cargo build @args failed (status $status):\n$text";
}

my $DIR;
my $N = 0;

# Start @$argv with stdout and stderr in files; returns a job.
sub start {
    my ($argv) = @_;
    $DIR //= tmpdir();
    my $job = { argv => $argv, out => "$DIR/out." . ++$N, err => "$DIR/err.$N" };
    $job->{pid} = spawn(sub {
        open STDOUT, '>', $job->{out} or die "open: $!";
        open STDERR, '>', $job->{err} or die "open: $!";
        exec @$argv;
        die "exec $argv->[0]: $!";
    }, timeout => 60);
    return $job;
}

# Wait for a job; returns (exit code, stdout, stderr). A signal death
# (the child's alarm) shows as 128 + signal.
sub finish {
    my ($job) = @_;
    my $st = reap($job->{pid});
    my $code = $st & 127 ? 128 + ($st & 127) : $st >> 8;
    my @text = map { slurp($_) } @$job{qw(out err)};
    return ($code, @text);
}

sub run { finish(start(@_)) }

sub slurp {
    my ($file) = @_;
    open my $fh, '<', $file or return '';
    local $/;
    return scalar <$fh>;
}

# The line a foreign consumer prints for a Perl value.
sub line_for {
    my ($type, $v) = @_;
    return "$v" unless $type eq 'str';
    my $flag = utf8::is_utf8($v);
    my $bytes = $v;
    utf8::encode($bytes) if $flag;
    return ($flag ? 'utf8 ' : 'bytes ') . unpack('H*', $bytes);
}

sub str_values {
    my $cafe = "caf\x{e9}";
    utf8::upgrade($cafe);
    my $ascii_flagged = 'ascii but flagged';
    utf8::upgrade($ascii_flagged);
    return ('plain ascii', '', "\0\x01\x7f\x80\xff raw bytes", $cafe,
            "\x{263a} smile \x{1F600}", $ascii_flagged);
}

sub values_for { $_[0] eq 'str' ? str_values() : @{ $VALUES{ $_[0] } } }

sub describe {
    my ($v) = @_;
    my $b = $v;
    utf8::encode($b) if utf8::is_utf8($b);
    return (utf8::is_utf8($v) ? 'utf8 ' : 'bytes ') . unpack('H*', $b);
}

sub fresh {
    my ($type, $name, $cap) = @_;
    $DIR //= tmpdir();
    my $path = "$DIR/$name.$type.shm";
    unlink $path;
    return ($path, $CLASS{$type}->new($path, $cap // 64));
}

sub exit_ok {
    my ($code, $err, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    is($code, 0, $name) or diag("stderr: $err");
}

# Perl pushes, the foreign consumer pops and prints.
sub perl_to_tool {
    my ($tool, $type) = @_;
    my ($path, $q) = fresh($type, 'p2t');
    my @vals = values_for($type);
    ok($q->push($_), 'Perl pushed ' . ($type eq 'str' ? describe($_) : $_)) for @vals;
    my ($code, $out, $err) = run($tool->{consumer}->(path => $path, type => $type,
                                                       count => scalar @vals));
    exit_ok($code, $err, "$tool->{name} $type consumer exits 0");
    is_deeply([split /\n/, $out, -1], [(map { line_for($type, $_) } @vals), ''],
              "$tool->{name} $type consumer got every value, flags included");
    is($q->size, 0, "$type queue empty afterwards");
    ($code, $out, $err) = run($tool->{consumer}->(path => $path, type => $type, count => 1));
    is($code, 1, "$tool->{name} $type consumer on an empty queue exits 1");
}

# The foreign producer pushes, Perl pops.
sub tool_to_perl {
    my ($tool, $type) = @_;
    my ($path, $q) = fresh($type, 't2p');
    if ($type ne 'str') {
        my @vals = @{ $VALUES{$type} };
        my @trunc = @{ $TRUNCATED{$type} };
        my ($code, undef, $err) = run($tool->{producer}->(
            path => $path, type => $type, items => [@vals, map { $_->[0] } @trunc]));
        exit_ok($code, $err, "$tool->{name} $type producer exits 0");
        my @got = map { $q->pop } 1 .. @vals + @trunc;
        is_deeply(\@got, [@vals, map { $_->[1] } @trunc],
                  "Perl popped the $tool->{name} values ($type; wide ones truncated)");
    }
    else {
        my @bytes = ('plain', '', "\xff\xfe not utf-8 \x80");
        my ($code, undef, $err) = run($tool->{producer}->(
            path => $path, type => $type, items => \@bytes));
        exit_ok($code, $err, "$tool->{name} str producer (byte strings) exits 0");
        for my $want (@bytes) {
            my $got = $q->pop;
            is(describe($got), describe($want), "Perl popped byte string " . describe($want));
            ok(!utf8::is_utf8($got), '... without the UTF-8 flag');
        }
        my @chars = ("h\x{e9}llo \x{263a}", 'ascii', "\x{1F600}");
        my @args = map { my $b = $_; utf8::encode($b); $b } @chars;
        ($code, undef, $err) = run($tool->{producer}->(
            path => $path, type => $type, items => \@args, utf8 => 1));
        exit_ok($code, $err, "$tool->{name} str producer (UTF-8) exits 0");
        for my $want (@chars) {
            my $got = $q->pop;
            ok(defined $got && $got eq $want, "Perl popped character string " . describe($want));
            ok(utf8::is_utf8($got), '... with the UTF-8 flag');
        }
    }
    is($q->pop, undef, "$type queue empty afterwards");
    # A full queue: the non-blocking producer fails with exit 1.
    my ($fpath, $full) = fresh($type, 'full', 2);
    $full->push($type eq 'str' ? 'x' : 1) for 1 .. 2;
    my ($code, undef, $err) = run($tool->{producer}->(path => $fpath, type => $type,
                                                        items => ['7']));
    is($code, 1, "$tool->{name} $type producer on a full queue exits 1");
    like($err, qr/full/, '... saying the queue is full');
}

sub one_value { $_[0] eq 'str' ? "\x{263a} wake" : -12345 }

sub arg_for {
    my ($v) = @_;
    my $b = $v;
    utf8::encode($b) if utf8::is_utf8($b);
    return $b;
}

# Perl blocks in pop_wait; the foreign producer's push wakes it.
sub perl_waits_tool_pushes {
    my ($tool, $type) = @_;
    my ($path, $q) = fresh($type, 'pw');
    my $v = one_value($type);
    my $argv = $tool->{producer}->(path => $path, type => $type, items => [arg_for($v)],
                                   utf8 => $type eq 'str');
    my $job = { out => "$DIR/pw.out", err => "$DIR/pw.err" };
    # The child waits until this process sleeps in pop_wait, then becomes
    # the producer.
    my $pid = spawn(sub {
        DQSTest::wait_for(sub { $q->stats->{pop_waiters} >= 1 }, 30) or die "nobody waited\n";
        open STDOUT, '>', $job->{out} or die;
        open STDERR, '>', $job->{err} or die;
        exec @$argv;
        die "exec: $!";
    }, timeout => 60);
    my $got = $q->pop_wait(30);
    ok(defined $got && $got eq $v, "Perl pop_wait ($type) woken by the $tool->{name} producer");
    $job->{pid} = $pid;
    my ($code, undef, $err) = finish($job);
    exit_ok($code, $err, "$tool->{name} $type producer exits 0");
    is($q->stats->{pop_waiters}, 0, 'no waiter left');
}

# The foreign consumer blocks in pop_wait; a Perl push wakes it.
sub tool_waits_perl_pushes {
    my ($tool, $type) = @_;
    my ($path, $q) = fresh($type, 'tw');
    my $v = one_value($type);
    my $job = start($tool->{consumer}->(path => $path, type => $type, count => 1, wait => 30));
    ok(DQSTest::wait_for(sub { $q->stats->{pop_waiters} >= 1 }, 30),
       "$tool->{name} $type consumer is blocked in pop_wait");
    ok($q->push($v), 'Perl pushes');
    my ($code, $out, $err) = finish($job);
    exit_ok($code, $err, "$tool->{name} $type consumer woken, exits 0");
    is($out, line_for($type, $v) . "\n", '... with the value Perl pushed');
}

# The foreign producer blocks on a full queue; a Perl pop wakes it.
sub tool_push_waits_perl_pops {
    my ($tool, $type) = @_;
    my ($path, $q) = fresh($type, 'tpw', 2);
    my @fill = $type eq 'str' ? ('a', 'b') : (1, 2);
    $q->push($_) for @fill;
    my $v = one_value($type);
    my $job = start($tool->{producer}->(path => $path, type => $type, items => [arg_for($v)],
                                        utf8 => $type eq 'str', wait => 30));
    ok(DQSTest::wait_for(sub { $q->stats->{push_waiters} >= 1 }, 30),
       "$tool->{name} $type producer is blocked on the full queue");
    is($q->pop, $fill[0], 'Perl pops one');
    my ($code, undef, $err) = finish($job);
    exit_ok($code, $err, "$tool->{name} $type producer woken, exits 0");
    my @rest = ($q->pop, $q->pop);
    ok($rest[0] eq $fill[1] && defined $rest[1] && $rest[1] eq $v,
       '... and its item follows the others');
}

# Perl blocks in push_wait on a full queue; the foreign consumer's pop
# wakes it.
sub perl_push_waits_tool_pops {
    my ($tool, $type) = @_;
    my ($path, $q) = fresh($type, 'ppw', 2);
    my @fill = $type eq 'str' ? ('a', 'b') : (1, 2);
    $q->push($_) for @fill;
    my $argv = $tool->{consumer}->(path => $path, type => $type, count => 1);
    my $job = { out => "$DIR/ppw.out", err => "$DIR/ppw.err" };
    my $pid = spawn(sub {
        DQSTest::wait_for(sub { $q->stats->{push_waiters} >= 1 }, 30) or die "nobody waited\n";
        open STDOUT, '>', $job->{out} or die;
        open STDERR, '>', $job->{err} or die;
        exec @$argv;
        die "exec: $!";
    }, timeout => 60);
    my $v = one_value($type);
    ok($q->push_wait($v, 30), "Perl push_wait ($type) woken by the $tool->{name} consumer");
    $job->{pid} = $pid;
    my ($code, $out, $err) = finish($job);
    exit_ok($code, $err, "$tool->{name} $type consumer exits 0");
    is($out, line_for($type, $fill[0]) . "\n", '... having popped the oldest item');
    is_deeply([$q->pop, $q->pop], [$fill[1], $v], 'the queue holds the rest in order');
}

sub run_all {
    my ($tool) = @_;
    for my $type (qw(int int32 int16 str)) {
        note("---- $tool->{name}, $type ----");
        perl_to_tool($tool, $type);
        tool_to_perl($tool, $type);
        perl_waits_tool_pushes($tool, $type);
        tool_waits_perl_pushes($tool, $type);
        tool_push_waits_perl_pops($tool, $type);
        perl_push_waits_tool_pops($tool, $type);
    }
}

1;
