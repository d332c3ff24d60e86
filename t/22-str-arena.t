# The Str arena: its size (default, minimum, exact, maximum), 8-byte
# aligned items with no header, wrap waste charged to the item that wrapped
# and given back when it leaves by either end, an exactly full arena, the
# reset when the queue empties, strings that can never fit, and push_multi
# stopping at the first item that does not fit now.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Backing;
use DQSTest::Files;
use Test::More;

use Data::Queue::Shared::Str;

watchdog(90);

my $CLASS = 'Data::Queue::Shared::Str';

sub used { $_[0]->stats->{arena_used} }

my $TOO_BIG = qr/string of (\d+) bytes exceeds the arena of (\d+) bytes/;

subtest 'arena size: default, minimum, exact, maximum' => sub {
    for my $kind (qw(anon file memfd)) {
        my %expect = (
            "cap 64, default"       => [[64],             16384],
            "cap 16, default"       => [[16],             4096],
            "cap 8, default raised" => [[8],              4096],
            "cap 2, default raised" => [[2],              4096],
            "requested 100"         => [[4, 100],         4096],
            "requested 1"           => [[4, 1],           4096],
            "requested 4095"        => [[4, 4095],        4096],
            "requested 4096"        => [[4, 4096],        4096],
            "requested 4100"        => [[4, 4100],        4100],
            "requested 5000"        => [[4, 5000],        5000],
            "requested 10000001"    => [[4, 10_000_001],  10_000_001],
            "requested as a string" => [[4, '65536'],     65536],
        );
        for my $name (sort keys %expect) {
            my ($args, $want) = @{ $expect{$name} };
            my $q = new_on($kind, $CLASS, @$args);
            my $s = $q->stats;
            is($s->{arena_cap}, $want, "$kind: $name -> arena_cap $want");
            is($s->{arena_used}, 0, "$kind: $name: nothing used");
            my $min = HEADER_SIZE + 16 * $s->{capacity} + $want;
            ok($s->{mmap_size} >= $min, "$kind: $name: mmap_size $s->{mmap_size} >= $min");
            is($s->{mmap_size}, -s $q->path, "$kind: $name: the file is exactly the mapping")
                if $kind eq 'file';
        }
    }
};

subtest 'the maximum arena is 4 GiB; larger croaks' => sub {
    for my $kind (qw(anon memfd file)) {
        my $q = eval { new_on($kind, $CLASS, 2, 2**32) };
        ok($q, "$kind: an arena of 2**32 bytes is accepted") or diag($@);
        next unless $q;
        is($q->stats->{arena_cap}, 2**32, "$kind: reported exactly");
        my $s = 'q' x 100_000;
        ok($q->push($s), "$kind: push into it");
        ok($q->pop eq $s, "$kind: pop from it");
        if ($kind eq 'file') { $q->unlink }
    }
    for my $bad (2**32 + 1, 2**32 + 8, 2**33, 2**40) {
        eval { $CLASS->new(undef, 4, $bad) };
        like($@, qr/^\Q$CLASS\E->new: .*arena/, "new(undef, 4, $bad) croaks");
        eval { $CLASS->new_memfd('big', 4, $bad) };
        like($@, qr/^\Q$CLASS\E->new_memfd: .*arena/, "new_memfd('big', 4, $bad) croaks");
        my $p = fresh_path('big');
        eval { $CLASS->new($p, 4, $bad) };
        like($@, qr/^\Q$CLASS\E->new: .*arena/, "new(\$path, 4, $bad) croaks");
        ok(!-e $p, 'no file left behind');
    }
    eval { $CLASS->new(undef, 4, -1) };
    ok($@, 'a negative arena croaks');
};

subtest 'items are 8-byte aligned with no header' => sub {
    my $q = $CLASS->new(undef, 16, 4096);
    my @steps = ([''      => 0], ['a' => 8], ['1234567' => 8], ['12345678' => 8],
                 ['123456789' => 16], ['x' x 100 => 104]);
    my $total = 0;
    for my $st (@steps) {
        my ($v, $charge) = @$st;
        ok($q->push($v), 'push ' . length($v) . ' bytes');
        $total += $charge;
        is(used($q), $total, length($v) . " bytes are charged $charge: arena_used $total");
    }
    for my $st (@steps) {
        my ($v, $charge) = @$st;
        is($q->pop, $v, 'pop ' . length($v) . ' bytes');
        $total -= $charge;
        is(used($q), $total, "... gives back $charge: arena_used $total");
    }
};

subtest 'two 2000-byte strings fit a 4096-byte arena; then only 96 bytes are left' => sub {
    for my $kind (qw(anon file memfd)) {
        my $q = new_on($kind, $CLASS, 16, 4096);
        ok($q->push('a' x 2000), "$kind: first 2000 bytes");
        ok($q->push('b' x 2000), "$kind: second 2000 bytes");
        is(used($q), 4000, "$kind: arena_used 4000: no per-item header");
        my $pf = $q->stats->{push_full};
        my $c = 'c' x 97;    # 104 bytes aligned: one more than the 96 left
        ok(!$q->push($c), "$kind: a 97-byte push does not fit: false");
        ok(!$q->push_front($c), "$kind: push_front of 97 bytes: false");
        ok(!$q->push_wait($c, 0), "$kind: push_wait(v, 0): false");
        is($q->push_multi($c), 0, "$kind: push_multi: 0");
        is($q->stats->{push_full}, $pf + 4, "$kind: each failed push counted in push_full");
        is($q->size, 2, "$kind: still 2 items");
        ok(!$q->is_full, "$kind: is_full is about the slot count: not full");
        is(used($q), 4000, "$kind: arena_used unchanged");
        ok($q->push('d' x 96), "$kind: 96 bytes fit exactly");
        is(used($q), 4096, "$kind: arena exactly full");
        ok(!$q->push('e'), "$kind: now not even one byte fits");
        is($q->pop, 'a' x 2000, "$kind: pop the first");
        ok($q->push($c), "$kind: now the 97 bytes fit");
        is_deeply([$q->drain], ['b' x 2000, 'd' x 96, $c], "$kind: contents");
    }
};

subtest 'an exactly full arena' => sub {
    my $q = $CLASS->new(undef, 16, 4096);
    ok($q->push('x' x 2048), 'first half');
    ok($q->push('y' x 2048), 'second half');
    is(used($q), 4096, 'arena_used 4096: exactly full');
    ok(!$q->push('z'), 'nothing more fits at the back');
    ok(!$q->push_front('z'), 'nor at the front');
    is($q->peek, 'x' x 2048, 'peek is right');
    is($q->pop_back, 'y' x 2048, 'pop_back the second half');
    is(used($q), 2048, 'half used');
    ok($q->push('w' x 2048), 'the second half fits again');
    is(used($q), 4096, 'full again');
    is($q->pop, 'x' x 2048, 'pop the first half');
    ok($q->push_front('v' x 2048), 'push_front into the freed half');
    is(used($q), 4096, 'full again');
    is_deeply([$q->drain], ['v' x 2048, 'w' x 2048], 'contents intact');
    is(used($q), 0, 'empty');

    ok($q->push('f' x 4096), 'a single string of the whole arena fits');
    is(used($q), 4096, 'and fills it');
    ok(!$q->push('g'), 'nothing else fits');
    is($q->pop, 'f' x 4096, 'it comes back intact');
};

subtest 'wrap waste is charged to the item that wrapped (back push)' => sub {
    # A (2000) and B (1000) occupy [0, 3000). After A leaves, C (1504
    # bytes) does not fit in [3000, 4096) (1096 bytes) but does in [0, 2000):
    # it goes to 0 and the 1096 bytes it skipped are charged to it.
    my $q = $CLASS->new(undef, 16, 4096);
    my ($A, $B, $C) = ('A' x 2000, 'B' x 1000, 'C' x 1500);
    $q->push($A);
    $q->push($B);
    is(used($q), 3000, 'A + B');
    is($q->pop, $A, 'pop A');
    is(used($q), 1000, 'only B');
    ok($q->push($C), 'C fits by wrapping to the start');
    is(used($q), 1000 + 1504 + 1096, 'arena_used = B + C (1504) + the 1096 bytes skipped');
    is($q->peek, $B, 'B is still the front');
    is($q->pop_back, $C, 'pop_back returns C');
    is(used($q), 1000, 'pop_back gives back C and its waste');

    ok($q->push($C), 'C wraps again');
    is(used($q), 3600, 'same charge');
    is($q->pop, $B, 'pop B');
    is(used($q), 2600, 'C alone holds 1504 + its 1096 bytes of waste');
    ok($q->push('D' x 400), 'D goes after C');
    is(used($q), 3000, 'D charged 400');
    is($q->pop, $C, 'pop C');
    is(used($q), 400, 'C gave back its bytes and its waste');
    is($q->pop, 'D' x 400, 'pop D');
    is(used($q), 0, 'empty: 0');
};

subtest 'wrap waste is charged to the item that wrapped (front push)' => sub {
    # X [0, 1000) and A [1000, 2000). After X leaves, F (1504 bytes) does
    # not fit before A in [0, 1000): it goes to the end of the arena and the
    # 1000 bytes before A become its waste.
    my $q = $CLASS->new(undef, 16, 4096);
    my ($X, $A, $F) = ('X' x 1000, 'A' x 1000, 'F' x 1500);
    $q->push($X);
    $q->push($A);
    is($q->pop, $X, 'pop X');
    is(used($q), 1000, 'only A');
    ok($q->push_front($F), 'push_front F wraps to the end of the arena');
    is(used($q), 1000 + 1504 + 1000, 'arena_used = A + F (1504) + the 1000 bytes before A');
    is($q->peek, $F, 'F is the front');
    is($q->pop, $F, 'pop F');
    is(used($q), 1000, 'F gave back its bytes and its waste');

    ok($q->push_front($F), 'push_front F again');
    is(used($q), 3504, 'same charge');
    is($q->pop_back, $A, 'pop_back A');
    is(used($q), 2504, 'F alone holds 1504 + 1000');
    is($q->pop_back, $F, 'pop_back F');
    is(used($q), 0, 'empty: 0');
};

subtest 'the arena starts over when the queue becomes empty' => sub {
    my $q = $CLASS->new(undef, 16, 4096);
    my $whole = 'W' x 4096;
    my %emptiers = (
        pop        => sub { $_[0]->pop while $_[0]->size },
        pop_back   => sub { $_[0]->pop_back while $_[0]->size },
        pop_multi  => sub { $_[0]->pop_multi(100) },
        drain      => sub { $_[0]->drain },
        clear      => sub { $_[0]->clear },
        pop_wait   => sub { $_[0]->pop_wait(1) while $_[0]->size },
    );
    for my $how (sort keys %emptiers) {
        $q->push('s' x 2000);
        $q->push('t' x 1000);
        $q->pop;
        ok($q->push('u' x 1500), "$how: an item that wraps");
        is(used($q), 3600, "$how: arena used, with waste");
        $emptiers{$how}->($q);
        is($q->size, 0, "$how: queue empty");
        is(used($q), 0, "$how: arena_used 0");
        ok($q->push($whole), "$how: a string of the whole arena fits right after: the arena starts at 0");
        is($q->pop, $whole, "$how: and comes back intact");
    }
};

subtest 'a string larger than the usable arena croaks, naming both sizes' => sub {
    my $q = $CLASS->new(undef, 8, 4096);
    $q->push('keep');
    my $before = $q->stats;
    my %tries = (
        push            => sub { $q->push('x' x 4097) },
        push_front      => sub { $q->push_front('x' x 4097) },
        push_wait       => sub { $q->push_wait('x' x 4097, 5) },
        push_front_wait => sub { $q->push_front_wait('x' x 4097) },
    );
    for my $m (sort keys %tries) {
        my $t0 = now();
        eval { $tries{$m}->() };
        my $err = $@;
        like($err, qr/^\Q$CLASS\E->\Q$m\E: .*$TOO_BIG/, "$m of 4097 bytes croaks");
        if ($err =~ $TOO_BIG) {
            is($1, 4097, "$m: the message names the string's size");
            is($2, 4096, "$m: and the arena's");
        }
        ok(now() - $t0 < 3, "$m: croaks at once, without waiting");
        unlike($err, qr/\n./, "$m: one-line message");
    }
    is($q->size, 1, 'nothing was pushed');
    is($q->peek, 'keep', 'the queue is intact');
    is(used($q), $before->{arena_used}, 'arena_used unchanged');
    is($q->stats->{push_ok}, $before->{push_ok}, 'push_ok unchanged');

    eval { $q->push("\x{100}" x 2049) };    # 2049 characters, 4098 bytes
    like($@, qr/string of 4098 bytes exceeds the arena of 4096 bytes/,
         'the size of a UTF-8 string is counted in bytes');

    my $odd = $CLASS->new(undef, 8, 4100);
    eval { $odd->push('y' x 4097) };
    like($@, qr/string of 4097 bytes exceeds the arena of 4096 bytes/,
         'an arena of 4100 bytes has 4096 usable bytes');
    ok($odd->push('y' x 4096), 'a string of the 4096 usable bytes fits');
    is($odd->stats->{arena_cap}, 4100, 'arena_cap still reports 4100');

    my $big = $CLASS->new(undef, 8, 100_000);
    eval { $big->push('z' x 100_001) };
    like($@, qr/string of 100001 bytes exceeds the arena of 100000 bytes/, 'a bigger arena');
    ok($big->push('z' x 100_000), 'exactly the arena fits');

    ok($q->push('after'), 'the queue is still usable');
    is_deeply([$q->drain], ['keep', 'after'], 'contents');
};

subtest 'push_multi with a string that can never fit pushes nothing' => sub {
    my $q = $CLASS->new(undef, 8, 4096);
    my $la = $q->stats->{lock_acquired};
    eval { $q->push_multi('a', 'b', 'x' x 5000, 'c') };
    like($@, qr/^\Q$CLASS\E->push_multi: .*string of 5000 bytes exceeds the arena of 4096 bytes/,
         'push_multi croaks naming the sizes');
    is($q->size, 0, 'not even the items before it were pushed');
    is($q->stats->{lock_acquired}, $la, 'checked before the lock was taken');
    eval { $q->push_wait_multi(5, 'a', 'x' x 5000) };
    like($@, qr/^\Q$CLASS\E->push_wait_multi: .*$TOO_BIG/, 'push_wait_multi too');
    is($q->size, 0, 'nothing pushed');
    is($q->stats->{push_ok}, 0, 'push_ok 0');
    ok($q->push_multi('a', 'b') == 2 && $q->size == 2, 'the queue works afterwards');
    is_deeply([$q->drain], ['a', 'b'], 'contents');
};

subtest 'push_multi stops at the first item that does not fit now' => sub {
    my $q = $CLASS->new(undef, 16, 4096);
    my $pf = $q->stats->{push_full};
    my ($x, $y, $z) = ('x' x 3000, 'y' x 2000, 'z');
    is($q->push_multi($x, $y, $z), 1, 'y does not fit after x: 1 pushed');
    is_deeply([$q->drain], [$x], 'z was not pushed either, though it would have fitted');
    ok($q->stats->{push_full} > $pf, 'counted in push_full');

    is($q->push_wait_multi(0, $x, $y, $z), 1, 'push_wait_multi with timeout 0: the same');
    is_deeply([$q->drain], [$x], 'only x');

    my $t0 = now();
    is($q->push_wait_multi(0.2, $x, $y, $z), 1, 'push_wait_multi with a timeout: 1 before it expires');
    ok(now() - $t0 >= 0.15, 'it waited for room for y');
    is_deeply([$q->drain], [$x], 'only x');
};

subtest 'push_wait on a full arena times out' => sub {
    my $q = $CLASS->new(undef, 16, 4096);
    $q->push('a' x 4000);
    my $t0 = now();
    ok(!$q->push_wait('b' x 200, 0.3), 'push_wait returns false');
    between_ok(now() - $t0, 0.24, 5, 'after about the timeout');
    $t0 = now();
    ok(!$q->push_front_wait('b' x 200, 0.3), 'push_front_wait returns false');
    between_ok(now() - $t0, 0.24, 5, 'after about the timeout');
    is($q->stats->{push_waiters}, 0, 'no waiter left registered');
    is($q->size, 1, 'nothing pushed');
};

subtest 'FIFO through many wraps of a small arena' => sub {
    my $q = $CLASS->new(undef, 64, 4096);
    my ($in, $out, $bad) = (0, 0, 0);
    my $item = sub { my $i = shift; sprintf('%06d:', $i) . chr(97 + $i % 26) x (($i * 37) % 900) };
    for my $round (1 .. 300) {
        while ($q->push($item->($in))) { $in++ }
        my $n = 1 + $round % 5;
        for (1 .. $n) {
            my $v = $q->pop;
            last unless defined $v;
            $bad++ unless $v eq $item->($out);
            $out++;
        }
    }
    while (defined(my $v = $q->pop)) { $bad++ unless $v eq $item->($out); $out++ }
    is($bad, 0, "$in items through a 4096-byte arena, in order and intact");
    is($out, $in, 'every item came out');
    is(used($q), 0, 'arena_used 0 at the end');
    ok($in > 500, "many items went through ($in)");
};

done_testing;
