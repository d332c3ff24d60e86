# What a Str queue stores: exact bytes (empty strings, NULs, every byte
# value, long strings), the UTF-8 flag of each item through every way out,
# and the byte budget of pop_multi / pop_wait_multi.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

use Data::Queue::Shared::Str;

watchdog(60);

my $CLASS = 'Data::Queue::Shared::Str';

# Byte length of a string as stored (its UTF-8 encoding if flagged).
sub byte_len {
    my ($s) = @_;
    utf8::encode($s) if utf8::is_utf8($s);
    return length $s;
}

# ok() that $got is exactly $want: defined-ness, bytes/characters and the
# UTF-8 flag.
sub same_str {
    my ($got, $want, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $ok = defined $got && !ref $got && $got eq $want
          && (utf8::is_utf8($got) ? 1 : 0) == (utf8::is_utf8($want) ? 1 : 0);
    ok($ok, $name) or diag(describe('got', $got) . "\n" . describe('expected', $want));
}

sub describe {
    my ($label, $s) = @_;
    return "$label: undef" unless defined $s;
    my $shown = length $s > 40 ? substr($s, 0, 40) . '...' : $s;
    $shown =~ s/([^\x20-\x7e])/sprintf '\\x{%x}', ord $1/ge;
    return sprintf '%s: "%s" (length %d, utf8 flag %s)', $label, $shown, length $s,
        utf8::is_utf8($s) ? 'on' : 'off';
}

my $all_bytes = join '', map { chr } 0 .. 255;
my $upgraded  = "caf\xe9 \xff";
utf8::upgrade($upgraded);
my $downgraded = "na\x{ef}ve \xe0 la carte";
utf8::upgrade($downgraded);
utf8::downgrade($downgraded);

my @cases = (
    [ 'empty string'                 => '' ],
    [ 'one NUL'                      => "\0" ],
    [ 'NULs inside'                  => "a\0b\0\0c" ],
    [ 'trailing NULs'                => "abc\0\0\0\0\0" ],
    [ 'all 256 byte values'          => $all_bytes ],
    [ 'all 256 byte values reversed' => scalar reverse $all_bytes ],
    [ 'a run of 0xFF'                => "\xff" x 300 ],
    [ 'a run of NUL'                 => "\0" x 64 ],
    [ 'latin-1 bytes'                => "caf\xe9" ],
    [ 'a downgraded latin-1 string'  => $downgraded ],
    [ 'an upgraded latin-1 string'   => $upgraded ],
    [ 'wide characters'              => "\x{263a} smile \x{1F600}" ],
    [ 'UTF-8 with a NUL'             => "\x{100}\0\x{101}" ],
    [ 'exactly 8 bytes'              => '12345678' ],
    [ '7 and 9 bytes'                => '1234567' ],
    [ '9 bytes'                      => '123456789' ],
    [ 'newlines'                     => "line1\nline2\r\n" ],
    [ 'the string "0"'               => '0' ],
);
my @values = map { $_->[1] } @cases;

ok(utf8::is_utf8($upgraded),    'fixture: the upgraded string has the flag');
ok(!utf8::is_utf8($downgraded), 'fixture: the downgraded string has no flag');

subtest 'each value round-trips through push/pop, peek and pop_back' => sub {
    my $q = $CLASS->new(undef, 4, 65536);
    for my $c (@cases) {
        my ($name, $v) = @$c;
        ok($q->push($v), "push: $name");
        same_str($q->peek, $v, "peek: $name");
        same_str($q->pop, $v, "pop: $name");
        ok($q->push_front($v), "push_front: $name");
        same_str($q->pop_back, $v, "pop_back: $name");
        ok($q->push_wait($v, 1), "push_wait: $name");
        same_str($q->pop_wait(1), $v, "pop_wait: $name");
        ok($q->push_front_wait($v, 1), "push_front_wait: $name");
        same_str($q->pop_back_wait(1), $v, "pop_back_wait: $name");
        is($q->size, 0, "queue empty after $name");
    }
};

subtest 'the empty string is defined, not undef' => sub {
    my $q = $CLASS->new(undef, 4);
    ok($q->push(''), 'push ""');
    is($q->size, 1, 'it counts as an item');
    ok(!$q->is_empty, 'the queue is not empty');
    my $v = $q->peek;
    ok(defined $v && $v eq '', 'peek returns a defined empty string');
    $v = $q->pop;
    ok(defined $v, 'pop returns a defined value');
    is(length $v, 0, '... of length 0');
    is($q->pop, undef, 'then the queue is empty: undef');
    $q->push_multi('', '', 'x', '');
    is_deeply([$q->drain], ['', '', 'x', ''], 'empty strings among others in a batch');
    is($q->stats->{arena_used}, 0, 'empty strings use no arena bytes');
};

subtest 'the batches keep every value and flag, in order' => sub {
    my $q = $CLASS->new(undef, 64, 65536);
    is($q->push_multi(@values), scalar @values, 'push_multi of every case');
    my @got = $q->pop_multi(scalar @values);
    is(scalar @got, scalar @values, 'pop_multi returns all of them');
    same_str($got[$_], $values[$_], "pop_multi: $cases[$_][0]") for 0 .. $#values;

    is($q->push_wait_multi(1, @values), scalar @values, 'push_wait_multi of every case');
    @got = $q->pop_wait_multi(scalar @values, 1);
    is(scalar @got, scalar @values, 'pop_wait_multi returns all of them');
    same_str($got[$_], $values[$_], "pop_wait_multi: $cases[$_][0]") for 0 .. $#values;

    $q->push_multi(@values);
    @got = $q->drain;
    is(scalar @got, scalar @values, 'drain returns all of them');
    same_str($got[$_], $values[$_], "drain: $cases[$_][0]") for 0 .. $#values;

    $q->push_front($_) for @values;
    @got = reverse map { $q->pop } @values;
    same_str($got[$_], $values[$_], "push_front then pop: $cases[$_][0]") for 0 .. $#values;
};

subtest 'the UTF-8 flag is per item' => sub {
    my $q = $CLASS->new(undef, 8);
    my $bytes = "\xc3\xa9";       # the UTF-8 encoding of e-acute, as two bytes
    my $chars = "\x{e9}";
    utf8::upgrade($chars);        # the character e-acute, flagged
    $q->push($bytes);
    $q->push($chars);
    $q->push($bytes);
    my ($x, $y, $z) = $q->drain;
    same_str($x, $bytes, 'the two bytes come back as two bytes');
    is(length $x, 2, '... of length 2');
    same_str($y, $chars, 'the flagged character comes back flagged');
    is(length $y, 1, '... of length 1');
    same_str($z, $bytes, 'the flag does not leak to the next item');
    is($q->stats->{arena_used}, 0, 'empty');

    $q->push("\x{263a}");
    is($q->stats->{arena_used}, 8, 'a 3-byte UTF-8 character uses 8 arena bytes');
    $q->push("\x{263a}" x 3);
    is($q->stats->{arena_used}, 8 + 16, 'nine bytes of UTF-8 use 16 arena bytes');
    $q->clear;
};

subtest 'long strings' => sub {
    my $q = $CLASS->new(undef, 8, 1 << 20);
    my $long = join '', map { chr(($_ * 7 + 3) % 256) } 0 .. 100_000 - 1;
    ok($q->push($long), 'push a 100 KB string');
    is($q->stats->{arena_used}, 100_000, 'arena_used is its length (a multiple of 8)');
    my $got = $q->peek;
    ok($got eq $long, 'peek returns it exactly');
    $got = $q->pop;
    is(length $got, 100_000, 'pop returns 100000 bytes');
    ok($got eq $long, '... exactly the bytes pushed');

    my $wide = "\x{1F600}" x 30_000;    # 120000 bytes of UTF-8
    ok($q->push($wide), 'push a long wide-character string');
    is($q->stats->{arena_used}, 120_000, 'counted in bytes, not characters');
    same_str($q->pop_back, $wide, 'pop_back returns it exactly, flagged');

    my @big = map { chr(65 + $_) x (200_000 + $_) } 0 .. 3;
    is($q->push_multi(@big), 4, 'push_multi of four ~200 KB strings');
    my @got = $q->drain;
    is(scalar @got, 4, 'drain returns four');
    ok($got[$_] eq $big[$_], "long string $_ intact") for 0 .. 3;

    my $ff = "\xff" x 65536;
    ok($q->push($ff), 'a 64 KB run of 0xFF');
    ok($q->pop eq $ff, 'comes back intact');
};

subtest 'pop_multi with a byte budget' => sub {
    my $q = $CLASS->new(undef, 16);
    my @ten = map { sprintf 'item-%05d', $_ } 1 .. 8;    # 10 bytes each
    is(length $ten[0], 10, 'fixture: 10-byte items');

    $q->push_multi(@ten);
    is_deeply([$q->pop_multi(5, 25)], [@ten[0, 1]], 'max_bytes 25: two 10-byte items');
    is_deeply([$q->pop_multi(5, 30)], [@ten[2 .. 4]], 'max_bytes 30: exactly three fit');
    is_deeply([$q->pop_multi(5, 5)], [$ten[5]], 'max_bytes 5: still one item');
    is_deeply([$q->pop_multi(1, 1000)], [$ten[6]], 'the count limits too');
    is_deeply([$q->pop_multi(5, 1)], [$ten[7]], 'max_bytes 1: one item');
    is_deeply([$q->pop_multi(5, 100)], [], 'empty queue: empty list');

    $q->push_multi('', '', 'abc', '', 'defgh');
    is_deeply([$q->pop_multi(10, 3)], ['', '', 'abc', ''],
              'empty items cost nothing: they join the batch while the total stays within budget');
    is_deeply([$q->pop_multi(10, 3)], ['defgh'], 'an item over the budget comes alone');

    my $u = "\x{263a}\x{263a}";    # 2 characters, 6 bytes
    $q->push_multi($u, $u, $u);
    my @got = $q->pop_multi(10, 12);
    is(scalar @got, 2, 'the budget counts bytes, not characters (6 + 6 <= 12)');
    same_str($got[0], $u, 'flag kept under a budget');
    $q->clear;

    $q->push_multi(@ten);
    is_deeply([$q->pop_multi(100, 1e9)], \@ten, 'a huge budget takes everything');
    $q->push_multi(@ten);
    is_deeply([$q->pop_multi(3)], [@ten[0 .. 2]], 'no budget: the count alone');
    $q->clear;
};

subtest 'pop_wait_multi with a byte budget' => sub {
    my $q = $CLASS->new(undef, 16);
    my @ten = map { sprintf 'item-%05d', $_ } 1 .. 6;
    $q->push_multi(@ten);
    is_deeply([$q->pop_wait_multi(5, 1, 25)], [@ten[0, 1]], 'max_bytes 25: two items');
    is_deeply([$q->pop_wait_multi(5, 0, 5)], [$ten[2]], 'max_bytes 5: one item');
    is_deeply([$q->pop_wait_multi(5, undef, 40)], [@ten[3 .. 5]],
              'undef timeout with a budget: the rest (30 bytes)');
    my $t0 = now();
    is_deeply([$q->pop_wait_multi(5, 0.2, 100)], [], 'timeout on empty: empty list');
    ok(now() - $t0 >= 0.15, 'it waited');
};

done_testing;
