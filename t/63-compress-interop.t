# One Str queue file, compressed items written and read by Perl, the Rust
# example programs, the C example programs (built against the staticlib)
# and dqs: every reader gets the exact bytes and UTF-8 flag with no
# setting of its own, and a scribbled compressed item is an error in each
# language (the item is gone, the queue goes on). Skips only when cargo
# or the C compiler is not available.
use strict;
use warnings;

use Config;
use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSInterop;
use DQSCli;
use Test::More;
use Data::Queue::Shared::Str;

my $cargo = find_cargo() or plan skip_all => 'cargo is not available';
my @cc = split ' ', $Config{cc};
plan skip_all => "C compiler '$Config{cc}' is not available"
    unless @cc && `$Config{cc} --version 2>/dev/null`;

build_cargo($cargo, '--examples');
build_cargo($cargo, '--lib');
my $root = root_dir();
my $rs = "$root/target/release/examples";
my $dir = tmpdir();
for my $prog (qw(producer consumer)) {
    my @cmd = (@cc, '-std=c99', '-D_POSIX_C_SOURCE=200809L', '-Wall', '-Wextra', '-Werror',
               "-I$root/include", "$root/examples/c/$prog.c",
               "$root/target/release/libdata_queue_shared.a", qw(-lpthread -ldl -lm), '-o',
               "$dir/c-$prog");
    is(system({ $cmd[0] } @cmd), 0, "examples/c/$prog.c compiles") or diag("@cmd");
}
watchdog(300);

my $seed = 777;
sub rnd { $seed = ($seed * 1103515245 + 12345) % 2**31; ($seed >> 15) % $_[0] }
sub doc {
    my ($n) = @_;
    my $s = '[';
    $s .= sprintf('{"id":%d,"user":"u%d","ok":%s},', rnd(1e6), rnd(500), rnd(2) ? 'true' : 'false')
        while length $s < $n;
    return $s . '{}]';
}

my $path = "$dir/shared.q";
my $q = Data::Queue::Shared::Str->new($path, 64, 1 << 16);
my $line = \&DQSInterop::line_for;
my $wide = "\x{263a} caf\x{e9} " . doc(2000);
my @docs = (doc(3000), $wide, 'short', doc(6000));

subtest 'Perl compresses; Rust, C and dqs read' => sub {
    $q->compress(100);
    for my $reader (['Rust', "$rs/consumer"], ['C', "$dir/c-consumer"]) {
        my ($name, $prog) = @$reader;
        my $c0 = $q->stats->{compressed};
        $q->push($_) for @docs;
        is($q->stats->{compressed} - $c0, 3, "three of four stored compressed (for $name)");
        my ($code, $out, $err) = DQSInterop::run([$prog, '--', $path, 'str', scalar @docs]);
        is($code, 0, "$name consumer exits 0") or diag($err);
        is_deeply([split /\n/, $out], [map { $line->('str', $_) } @docs],
                  "$name gets every item's bytes and flag");
    }
    $q->push($_) for @docs;
    my $r = dqs(['pop', '-0', '-n', scalar @docs, $path]);
    is($r->{code}, 0, 'dqs pop exits 0') or diag($r->{err});
    my @want = map { my $b = $_; utf8::encode($b) if utf8::is_utf8($b); $b } @docs;
    is_deeply([split /\0/, $r->{out}], \@want, 'dqs pop prints every item decoded');
    $q->push($docs[0]);
    $r = dqs(['peek', '--raw', $path]);
    is($r->{out}, $docs[0], 'dqs peek decodes');
    $q->pop;
    $q->compress(0);
};

subtest 'Rust, C and dqs compress; Perl reads' => sub {
    my $d = doc(4000);
    my $c0 = $q->stats->{compressed};
    my ($code, undef, $err) = DQSInterop::run(["$rs/producer", '--compress', 100, '--', $path, 'str', $d, 'tiny']);
    is($code, 0, 'Rust producer --compress exits 0') or diag($err);
    ($code, undef, $err) = DQSInterop::run(["$dir/c-producer", '-u', '-z', 100, '--', $path, 'str', $d]);
    is($code, 0, 'C producer -z exits 0') or diag($err);
    my $r = dqs(['push', '--compress', '100:5', $path, $d]);
    is($r->{code}, 0, 'dqs push --compress exits 0') or diag($r->{err});
    is($q->stats->{compressed} - $c0, 3, 'each stored its document compressed');
    my @got = map { $q->pop } 1 .. 4;
    is($got[0], $d, 'Rust\'s document pops whole');
    is($got[1], 'tiny', 'an item under MIN stays plain');
    ok($got[2] eq $d && utf8::is_utf8($got[2]), 'C\'s document pops whole, flagged UTF-8');
    is($got[3], $d, 'dqs\'s document pops whole');
    $r = dqs(['push', '--compress', '0', $path, 'x']);
    isnt($r->{code}, 0, 'dqs push --compress 0 is refused');
    like($r->{err}, qr/'0' is not a positive number of bytes/, '... saying why');
    $r = dqs(['push', '--compress', '10:99', $path, 'x']);
    like($r->{err}, qr/compression level 99 is out of range/, 'a bad level is refused');
    is($q->size, 0, 'nothing pushed by the refused commands');
};

# Scribble over the frame of the compressed item in slot 0 (the queue
# empty before, so it is the only item: slot 0, arena offset 0).
sub scribbled {
    $q->clear;
    $q->compress(100);
    $q->push(doc(3000));
    $q->push('next');
    $q->compress(0);
    my $cap = 64;
    open my $fh, '+<:raw', $path or die "$path: $!";
    sysseek($fh, 320 + 16 * $cap + 40, 0) or die;
    syswrite($fh, "\xAA" x 12) == 12 or die;
    close $fh;
}

subtest 'a scribbled compressed item is an error in every language; the queue goes on' => sub {
    scribbled();
    my ($code, $out, $err) = DQSInterop::run(["$dir/c-consumer", '--', $path, 'str', 2]);
    is($code, 3, 'the C consumer gets DQS_ERROR (exit 3)');
    like($err, qr/compressed item of \d+ bytes is corrupt/, '... and dqs_str_error says why');
    is($q->pop, 'next', 'the item after it is still there');

    scribbled();
    ($code, $out, $err) = DQSInterop::run(["$rs/consumer", '--', $path, 'str', 2]);
    is($code, 3, 'the Rust consumer gets Error::Corrupt from pop_checked');
    like($err, qr/compressed item of \d+ bytes is corrupt/, '... with the message');
    is($q->pop, 'next', 'the item after it is still there');

    scribbled();
    my $r = dqs(['pop', $path]);
    is($r->{code}, 2, 'dqs pop exits 2');
    like($r->{err}, qr/compressed item of \d+ bytes is corrupt/, '... naming the problem');
    is($q->pop, 'next', 'the item after it is still there');
};

unlink $path;
done_testing;
