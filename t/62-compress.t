# Compressed strings (Str->compress): every push form stores what this
# handle compresses as a zstd frame, every pop form (on any handle, with
# no setting) gives back the exact bytes and UTF-8 flag, the stats count
# it exactly, a scribbled frame croaks on the pop that meets it and the
# queue goes on, and one file is shared compressed across Perl, the Rust
# and C example programs and dqs.
use strict;
use warnings;

use Config;
use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use Data::Queue::Shared::Str;

my $CLASS = 'Data::Queue::Shared::Str';
watchdog(300);

# JSON-like documents from a fixed seed (compress about 3x at level 3).
my $seed = 12345;
sub rnd { $seed = ($seed * 1103515245 + 12345) % 2**31; ($seed >> 15) % $_[0] }
sub doc {
    my ($bytes) = @_;
    my @words = qw(alpha beta gamma delta status ok error pending user id name tags);
    my $s = '{"items":[';
    my $i = 0;
    while (length $s < $bytes - 80) {
        $s .= sprintf('{"id":%d,"name":"%s %s","score":%d,"ok":%s},', $i++,
                      $words[rnd(12)], $words[rnd(12)], rnd(100000), rnd(2) ? 'true' : 'false');
    }
    chop $s;
    $s .= ']}';
    return $s . ' ' x ($bytes - length $s);               # exactly $bytes
}
sub align8 { ($_[0] + 7) & ~7 }

# What a fresh empty queue charges for one item: its stored length, aligned.
sub stored_charge {
    my ($q, $item) = @_;
    my $before = $q->stats->{arena_used};
    $q->push($item) or die 'push failed';
    return $q->stats->{arena_used} - $before;
}

subtest 'compress: settings, return values and argument errors' => sub {
    my $q = $CLASS->new(undef, 8);
    is($q->compress(100), 0, 'first call returns 0 (it was off)');
    is($q->compress(200, 9), 100, 'returns the previous min_bytes');
    is($q->compress(0), 200, 'compress(0) turns it off');
    is($q->compress(0), 0, 'and it stays off');
    is($q->compress(64, -5), 0, 'negative (fast) levels are zstd levels');
    for my $bad (['-1', qr/min_bytes must be a non-negative integer, got -1 /],
                 ['abc', qr/min_bytes must be a non-negative integer, got 'abc'/],
                 ['1.5', qr/min_bytes must be a non-negative integer, got 1.5 /]) {
        eval { $q->compress($bad->[0]) };
        like($@, qr/^\Q$CLASS\E->compress: /, "min_bytes '$bad->[0]' croaks naming the method");
        like($@, $bad->[1], '... and the value');
    }
    eval { $q->compress(10, 99) };
    like($@, qr/^\Q$CLASS\E->compress: compression level 99 is out of range/, 'level 99 croaks');
    eval { $q->compress(10, 0) };
    like($@, qr/compression level 0 is out of range/, 'level 0 croaks');
    eval { $q->compress(10, 'x') };
    like($@, qr/level must be an integer, got 'x'/, 'a non-numeric level croaks');
    is($q->compress(0), 64, 'a refused call changes nothing');
};

subtest 'every push form and every pop form round-trip bytes and the UTF-8 flag' => sub {
    my $path = tmpdir() . '/forms.q';
    my $w = $CLASS->new($path, 64, 1 << 16);
    my $r = $CLASS->new($path, 64);                            # a reader with no setting
    $w->compress(256);
    my $doc = doc(3000);
    my $wide = "\x{263a} " . doc(1500);                            # UTF-8 flagged, compressible
    my $short = 'short item';
    my $bytes = join '', map { chr rnd(256) } 1 .. 2000;         # incompressible: stored plain

    my @items = ($doc, $wide, $short, $bytes, '');
    my $expect_packed = 2;                                       # $doc and $wide
    for my $form (
        [ push            => sub { $w->push($_[0]) } ],
        [ push_front      => sub { $w->push_front($_[0]) } ],
        [ push_wait       => sub { $w->push_wait($_[0], 1) } ],
        [ push_front_wait => sub { $w->push_front_wait($_[0], 1) } ],
        [ push_multi      => sub { $w->push_multi($_[0]) == 1 } ],
        [ push_wait_multi => sub { $w->push_wait_multi(1, $_[0]) == 1 } ],
    ) {
        my ($name, $push) = @$form;
        my $c0 = $w->stats->{compressed};
        ok($push->($_), "$name of a " . length($_) . '-character item') for @items;
        is($w->stats->{compressed} - $c0, $expect_packed, "$name: two items stored compressed");
        my @got;
        push @got, scalar $r->pop_back while $r->size;
        @got = reverse @got unless $name =~ /front/;
        is(scalar @got, scalar @items, "$name: all items back");
        ok(!grep({ $got[$_] ne $items[$_] } 0 .. $#items), "$name: every item equal (pop_back)")
            or diag(join ',', map { length } @got);
        is_deeply([map { utf8::is_utf8($_) ? 1 : 0 } @got], [0, 1, 0, 0, 0], "$name: UTF-8 flags");
    }

    # Pop forms, from the reader that set nothing.
    my %pop = (
        pop           => sub { $r->pop },
        pop_wait      => sub { $r->pop_wait(1) },
        peek_then_pop => sub { my $p = $r->peek; my $q = $r->pop; $p eq $q ? $q : "peek differs" },
        pop_multi     => sub { ($r->pop_multi(1))[0] },
        pop_wait_multi => sub { ($r->pop_wait_multi(1, 1))[0] },
        drain         => sub { ($r->drain(1))[0] },
    );
    for my $name (sort keys %pop) {
        $w->push_multi(@items);
        my @got = map { $pop{$name}->() } @items;
        ok(!grep({ $got[$_] ne $items[$_] } 0 .. $#items), "$name: every item equal");
        is_deeply([map { utf8::is_utf8($_) ? 1 : 0 } @got], [0, 1, 0, 0, 0], "$name: UTF-8 flags");
    }
    $w->push_multi(@items);
    my @all = $r->drain;
    ok(!grep({ $all[$_] ne $items[$_] } 0 .. $#items), 'drain of a mixed batch');
    $w->push_multi(@items);
    @all = $r->pop_multi(10);
    ok(!grep({ $all[$_] ne $items[$_] } 0 .. $#items), 'pop_multi of a mixed batch');
    is($r->size, 0, 'empty at the end');
    unlink $path;
};

subtest 'keywords' => sub {
    plan skip_all => 'keywords not built' unless $Data::Queue::Shared::HAVE_KEYWORDS;
    my $q = $CLASS->new(undef, 8, 1 << 15);
    $q->compress(100);
    my $doc = doc(4000);
    my $ok = eval q{
        use Data::Queue::Shared::Str;
        q_str_push $q, $doc;
        my $p = q_str_peek $q;
        my $g = q_str_pop $q;
        [$p, $g];
    } or die $@;
    is($q->stats->{compressed}, 1, 'q_str_push compresses');
    is($ok->[0], $doc, 'q_str_peek decodes');
    is($ok->[1], $doc, 'q_str_pop decodes');
};

subtest 'threshold, stats and the arena' => sub {
    my $q = $CLASS->new(undef, 16, 1 << 15);
    $q->compress(1000);
    my $small = doc(999);
    is(stored_charge($q, $small), align8(length $small), 'an item under min_bytes is stored plain');
    $q->pop;
    is($q->stats->{compressed}, 0, '... and not counted');
    my ($n, $saved) = (0, 0);
    for my $len (1001, 2503, 9005) {                       # lengths not multiples of 8
        my $d = doc($len);
        my $was = $q->stats->{compressed_saved};
        my $charge = stored_charge($q, $d);
        ok($charge < 0.55 * length $d, "a $len-byte document takes $charge arena bytes");
        is($q->stats->{compressed_saved} - $was, align8($len) - $charge,
           '... and saves its aligned length minus that');
        $saved += align8($len) - $charge;
        $n++;
        is($q->pop, $d, '... and pops back whole');
    }
    my $s = $q->stats;
    is($s->{compressed}, $n, 'compressed counts the items exactly');
    is($s->{compressed_saved}, $saved, 'compressed_saved is the arena bytes saved, exactly');

    # An item larger than the arena fits when compressed.
    my $tiny = $CLASS->new(undef, 4, 4096);
    $tiny->compress(64);
    my $big = doc(10_000);
    ok($tiny->push($big), 'a 10 KB document goes into a 4 KB arena');
    is($tiny->pop, $big, '... and comes back');
    my $noise = join '', map { chr rnd(256) } 1 .. 5000;
    eval { $tiny->push($noise) };
    like($@, qr/string of 5000 bytes exceeds the arena of 4096 bytes/,
         'an incompressible item too big croaks as before');
    my $huge = doc(400_000);
    eval { $tiny->push($huge) };
    like($@, qr/string of \d+ bytes \(\d+ compressed\) exceeds the arena of 4096 bytes/,
         'one still too big compressed names both sizes');

    # The budget of pop_multi counts decoded lengths.
    my $b = $CLASS->new(undef, 16, 1 << 15);
    $b->compress(100);
    my @docs = map { doc(2000) } 1 .. 3;
    $b->push_multi(@docs);
    my @got = $b->pop_multi(3, 4500);
    is(scalar @got, 2, 'a 4500-byte budget takes two 2000-byte items (compressed much smaller)');
    @got = $b->pop_multi(3, 0);
    is(scalar @got, 1, '... the first is always taken');
};

# Byte offsets of the item in slot $i of a Str queue file (format 5): the
# slot's off and len words, the arena offset, and the compressed flag.
# The slot of the item $k places behind the front (format 7: the front
# item's position is the high half of the front side's word at header
# offset 64; slot = position mod capacity).
sub front_slot {
    my ($path, $k) = @_;
    my $cap = unpack 'Q<', substr(slurp_file($path), 16, 8);
    return ((DQSTest::header_u32($path, 64 + 4) + ($k // 0)) & ($cap - 1), $cap);
}
sub slot_of {
    my ($path, $k) = @_;
    my $hdr = 320;
    my ($i, $cap) = front_slot($path, $k);
    my $off = DQSTest::header_u32($path, $hdr + 16 * $i);
    my $len = DQSTest::header_u32($path, $hdr + 16 * $i + 4);
    return ($hdr + 16 * $cap + $off, $len & 0x7fffffff, $len >> 31);
}
sub slurp_file { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; scalar <$fh> }
sub scribble {
    my ($path, $at, $bytes) = @_;
    open my $fh, '+<:raw', $path or die "$path: $!";
    sysseek($fh, $at, 0) or die "seek: $!";
    syswrite($fh, $bytes) == length $bytes or die "write: $!";
    close $fh;
}

subtest 'a scribbled compressed item croaks on the pop that meets it; the queue goes on' => sub {
    my $path = tmpdir() . '/scribble.q';
    my $q = $CLASS->new($path, 8, 1 << 15);
    $q->compress(100);
    my ($d1, $d2) = (doc(3000), doc(3000));
    $q->push($_) for 'before', $d1, 'after', $d2, 'last';
    my ($at, $len, $packed) = slot_of($path, 1);
    is($packed, 1, 'the slot len word has bit 31 set (the on-disk flag)');
    ok($len < 1500, "stored length $len");
    scribble($path, $at + $len - 20, 'XXXXXXXX');               # inside the last block
    my ($at3, $len3) = slot_of($path, 3);
    scribble($path, $at3 + 30, "\xff" x 16);

    is($q->pop, 'before', 'the item before pops normally');
    eval { $q->peek };
    like($@, qr/^\Q$CLASS\E->peek: compressed item of $len bytes is corrupt \(zstd: /,
         'peek croaks, naming the item and zstd\'s reason');
    is($q->size, 4, 'peek leaves it');
    eval { $q->pop };
    like($@, qr/^\Q$CLASS\E->pop: compressed item of $len bytes is corrupt/, 'pop croaks');
    like($@, qr/at \S+62-compress\.t line \d+\.$/, '... at the caller\'s line');
    is($q->size, 3, 'the bad item is removed');
    is($q->pop, 'after', 'the queue goes on');
    my @got = eval { $q->pop_multi(5) };
    like($@, qr/->pop_multi: compressed item of \d+ bytes is corrupt .*; the 1 other items taken with it are lost/,
         'pop_multi croaks and says what the batch lost');
    is($q->size, 0, 'the batch was taken');
    $q->push($d1);
    is($q->pop, $d1, 'a good compressed item pops after all that');

    # drain, pop_wait, pop_back and the keyword meet one too.
    for my $how (qw(drain pop_wait pop_back pop_wait_multi)) {
        $q->push($d1);
        my ($a, $l) = slot_of($path, 0);
        scribble($path, $a + 8, "\0" x 8);
        eval { $how eq 'pop_wait' ? $q->pop_wait(1) : $how eq 'pop_wait_multi' ? $q->pop_wait_multi(2, 1)
             : $how eq 'drain' ? $q->drain : $q->pop_back };
        like($@, qr/->\Q$how\E: compressed item of $l bytes is corrupt/, "$how croaks");
        is($q->size, 0, "$how removed it");
    }
    if ($Data::Queue::Shared::HAVE_KEYWORDS) {
        $q->push($d1);
        my ($a) = slot_of($path, 0);
        scribble($path, $a + 4, "\0\0\0\0");                    # the frame's magic
        eval q{ use Data::Queue::Shared::Str; my $x = q_str_pop $q; 1 } and fail('no croak');
        like($@, qr/->q_str_pop: compressed item of \d+ bytes is corrupt/, 'the keyword croaks');
    }
    # A plain item whose slot gains the compressed flag (bit 31 of len).
    $q->compress(0);
    $q->push('plain item, not a frame');
    $q->push('then this');
    my $len_at = 320 + 16 * (front_slot($path))[0] + 4;
    my $plain_len = DQSTest::header_u32($path, $len_at);
    scribble($path, $len_at, pack("V", $plain_len | 0x80000000));
    eval { $q->pop };
    like($@, qr/->pop: compressed item of 23 bytes is corrupt \(no zstd frame header/,
         'a slot flagged compressed over plain bytes croaks');
    is($q->pop, 'then this', 'and the queue goes on');
    $q->push('fine');
    is($q->pop, 'fine', 'still working');
    unlink $path;
};

done_testing;
