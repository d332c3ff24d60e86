# Every method of Data::Queue::Shared::Str on all three kinds of backing
# (file, anonymous, memfd), in one process: the FIFO surface, the deque ends,
# batches, status, management, stats, lifetime and type checks.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Backing;
use DQSTest::Files;
use Test::More;

use Data::Queue::Shared::Str;
use Data::Queue::Shared::Int;

watchdog(60);

my $CLASS = 'Data::Queue::Shared::Str';
my $dir   = scratch_dir();

my @STATS_KEYS = sort qw(size capacity mmap_size push_ok pop_ok push_full pop_empty
                         recoveries push_waiters pop_waiters arena_cap arena_used
                         lock_acquired lock_contended compressed compressed_saved);

subtest 'capacity rounds up to a power of two, minimum 2' => sub {
    my %round = (1 => 2, 2 => 2, 3 => 4, 4 => 4, 5 => 8, 17 => 32,
                 1000 => 1024, 1024 => 1024, 1025 => 2048);
    for my $kind (@KINDS) {
        for my $cap (sort { $a <=> $b } keys %round) {
            my $q = new_on($kind, $CLASS, $cap);
            is($q->capacity, $round{$cap}, "$kind: capacity $cap -> $round{$cap}");
            is($q->stats->{capacity}, $round{$cap}, "$kind: stats capacity $cap -> $round{$cap}");
        }
    }
    is($CLASS->new(undef, '8')->capacity, 8, 'capacity given as a string is numified');
};

subtest 'bad capacities croak naming the class and method' => sub {
    for my $bad (0, -1, -1024, 2**50, undef) {
        my $label = defined $bad ? $bad : 'undef';
        eval { $CLASS->new(undef, $bad) };
        like($@, qr/^\Q$CLASS\E->new: .*capacity/, "new(undef, $label) croaks");
        eval { $CLASS->new(fresh_path('bad'), $bad) };
        like($@, qr/^\Q$CLASS\E->new: .*capacity/, "new(\$path, $label) croaks");
        eval { $CLASS->new_memfd('bad', $bad) };
        like($@, qr/^\Q$CLASS\E->new_memfd: .*capacity/, "new_memfd(\$name, $label) croaks");
    }
    unlike($@, qr/\n./, 'croak message is one line');
    my @left = glob("$dir/bad*");
    is(scalar @left, 0, 'no file is left behind by a refused capacity') or diag("left: @left");
};

for my $kind (@KINDS) {
    subtest "$kind: push, pop, peek, size, is_empty, is_full" => sub {
        my $q = new_on($kind, $CLASS, 4);
        isa_ok($q, $CLASS);
        is($q->capacity, 4, 'capacity');
        is_plain($q->size, 0, 'new queue has size 0');
        ok($q->is_empty, 'new queue is empty');
        ok(!$q->is_full, 'new queue is not full');

        is($q->pop, undef, 'pop on empty returns undef');
        my @list = $q->pop;
        is_deeply(\@list, [undef], 'pop on empty in list context: (undef)');
        is($q->peek, undef, 'peek on empty returns undef');
        @list = $q->peek;
        is_deeply(\@list, [undef], 'peek on empty in list context: (undef)');

        ok($q->push('alpha'), 'push returns true');
        is_plain($q->size, 1, 'size 1');
        ok(!$q->is_empty, 'no longer empty');
        is($q->peek, 'alpha', 'peek returns the front');
        is($q->peek, 'alpha', 'peek again: not removed');
        is_plain($q->size, 1, 'peek does not change the size');

        ok($q->push($_), "push $_") for qw(beta gamma delta);
        ok($q->is_full, 'full at capacity');
        is_plain($q->size, 4, 'size 4');
        ok(!$q->push('epsilon'), 'push on a full queue returns false');
        ok(!$q->push_front('epsilon'), 'push_front on a full queue returns false');
        is_plain($q->size, 4, 'failed pushes changed nothing');
        is($q->peek, 'alpha', 'front unchanged');

        is($q->pop, $_, "pop returns $_ (FIFO)") for qw(alpha beta gamma delta);
        is($q->pop, undef, 'empty again');
        ok($q->is_empty, 'is_empty');
        ok(!$q->is_full, 'not full');

        $q->push('x');
        @list = $q->pop;
        is_deeply(\@list, ['x'], 'pop in list context returns one value');
    };

    subtest "$kind: push_front and pop_back" => sub {
        my $q = new_on($kind, $CLASS, 8);
        is($q->pop_back, undef, 'pop_back on empty returns undef');
        my @list = $q->pop_back;
        is_deeply(\@list, [undef], 'pop_back on empty in list context: (undef)');

        ok($q->push('m'), 'push m');
        ok($q->push_front('f1'), 'push_front f1 returns true');
        is($q->peek, 'f1', 'push_front puts the item at the head');
        ok($q->push_front('f2'), 'push_front f2');
        ok($q->push_front('f3'), 'push_front f3');
        ok($q->push('b'), 'push b');
        is($q->peek, 'f3', 'the last push_front is the front');
        is_plain($q->size, 5, 'size 5');
        is($q->pop_back, 'b', 'pop_back takes the tail');
        is($q->pop_back, 'm', 'pop_back again');
        is($q->pop, 'f3', 'push_fronts stack LIFO at the head: f3');
        is($q->pop, 'f2', 'then f2');
        is($q->pop_back, 'f1', 'pop_back of the last item');
        ok($q->is_empty, 'empty');

        $q->push('only');
        @list = $q->pop_back;
        is_deeply(\@list, ['only'], 'pop_back in list context returns one value');

        ok($q->push_front($_), "push_front $_") for 1 .. 8;
        ok($q->is_full, 'push_front fills to capacity');
        ok(!$q->push_front(9), 'push_front on full returns false');
        is_deeply([$q->drain], [reverse 1 .. 8], 'drain after push_fronts: reverse order');
    };

    subtest "$kind: wait variants without waiting" => sub {
        my $q = new_on($kind, $CLASS, 2);
        ok($q->push_wait('a'), 'push_wait with no timeout on a non-full queue');
        ok($q->push_front_wait('z', 5), 'push_front_wait with a timeout');
        ok(!$q->push_wait('c', 0), 'push_wait(v, 0) on full returns false');
        ok(!$q->push_front_wait('c', 0), 'push_front_wait(v, 0) on full returns false');
        is($q->pop_back_wait(5), 'a', 'pop_back_wait with a timeout takes the tail');
        is($q->pop_wait, 'z', 'pop_wait with no timeout returns the front');
        is($q->pop_wait(0), undef, 'pop_wait(0) on empty returns undef');
        is($q->pop_back_wait(0), undef, 'pop_back_wait(0) on empty returns undef');
        is_deeply([$q->pop_wait(0)], [undef], 'pop_wait(0) in list context: (undef)');
        is_deeply([$q->pop_back_wait(0)], [undef], 'pop_back_wait(0) in list context: (undef)');
        ok($q->push_front_wait('y'), 'push_front_wait with no timeout');
        is($q->pop_back_wait, 'y', 'pop_back_wait with no timeout');
    };

    subtest "$kind: push_multi and pop_multi" => sub {
        my $q = new_on($kind, $CLASS, 8);
        is_plain($q->push_multi(), 0, 'push_multi() returns 0');
        is_plain($q->push_multi(qw(a b c)), 3, 'push_multi of 3 returns 3');
        is_plain($q->push_multi(qw(d e f g h i j)), 5, 'push_multi stops when full: 5 pushed');
        ok($q->is_full, 'full');
        is_plain($q->push_multi('k'), 0, 'push_multi on full returns 0');
        is_deeply([$q->pop_multi(3)], [qw(a b c)], 'pop_multi(3)');
        is_deeply([$q->pop_multi(100)], [qw(d e f g h)], 'pop_multi(100) returns what there is');
        is_deeply([$q->pop_multi(5)], [], 'pop_multi on empty returns an empty list');

        my $big = new_on($kind, $CLASS, 1024);
        my @in = map { "item-$_" } 0 .. 999;
        is_plain($big->push_multi(@in), 1000, 'push_multi of 1000');
        is_deeply([$big->pop_multi(1000)], \@in, 'pop_multi of 1000 in order');
    };

    subtest "$kind: push_wait_multi and pop_wait_multi without waiting" => sub {
        my $q = new_on($kind, $CLASS, 4);
        is_plain($q->push_wait_multi(0), 0, 'push_wait_multi(0) with no values returns 0');
        is_plain($q->push_wait_multi(5, 'a', 'b'), 2, 'push_wait_multi(5, a, b) returns 2');
        is_plain($q->push_wait_multi(0, qw(c d e)), 2, 'push_wait_multi(0, ...) pushes what fits: 2');
        is_plain($q->push_wait_multi(0, 'f'), 0, 'push_wait_multi(0, ...) on full returns 0');
        is_deeply([$q->pop_wait_multi(3, 0)], [qw(a b c)], 'pop_wait_multi(3, 0)');
        is_deeply([$q->pop_wait_multi(10, 5)], ['d'], 'pop_wait_multi(10, 5) returns what there is');
        is_deeply([$q->pop_wait_multi(10, 0)], [], 'pop_wait_multi(10, 0) on empty: empty list');
        $q->push('g');
        is_deeply([$q->pop_wait_multi(2)], ['g'], 'pop_wait_multi without a timeout');
    };

    subtest "$kind: drain" => sub {
        my $q = new_on($kind, $CLASS, 16);
        is_deeply([$q->drain], [], 'drain on empty returns an empty list');
        $q->push_multi(1 .. 10);
        is_deeply([$q->drain(3)], [1, 2, 3], 'drain(3)');
        is_deeply([$q->drain], [4 .. 10], 'drain returns all the rest in order');
        ok($q->is_empty, 'empty after drain');
        $q->push_multi(1 .. 16);
        is_deeply([$q->drain(100)], [1 .. 16], 'drain(100) on a full queue');
        is($q->stats->{arena_used}, 0, 'arena_used 0 after drain');
    };

    subtest "$kind: clear" => sub {
        my $q = new_on($kind, $CLASS, 8);
        $q->push_multi(map { "v$_" } 1 .. 8);
        $q->pop;
        my $before = $q->stats;
        ok($before->{arena_used} > 0, 'arena in use before clear');
        $q->clear;
        is_plain($q->size, 0, 'size 0 after clear');
        ok($q->is_empty, 'empty after clear');
        is($q->pop, undef, 'pop after clear returns undef');
        is($q->pop_back, undef, 'pop_back after clear returns undef');
        is($q->peek, undef, 'peek after clear returns undef');
        my $after = $q->stats;
        is($after->{arena_used}, 0, 'arena_used 0 after clear');
        is($after->{pop_ok}, $before->{pop_ok}, 'cleared items are not counted in pop_ok');
        is_plain($q->push_multi(20 .. 30), 8, 'all capacity available after clear');
        is_deeply([$q->drain], [20 .. 27], 'FIFO works after clear');
        $q->clear;
        ok($q->is_empty, 'clear on an empty queue is harmless');
    };

    subtest "$kind: sync, path, memfd" => sub {
        my $q = new_on($kind, $CLASS, 4);
        $q->push('s');
        backing_ok($q, $kind);
        is($q->pop, 's', 'queue works after sync');
    };

    subtest "$kind: stats" => sub {
        my $q = new_on($kind, $CLASS, 4);
        my $s = $q->stats;
        is(ref $s, 'HASH', 'stats returns a hashref');
        is_deeply([sort keys %$s], \@STATS_KEYS, 'exactly the documented keys');
        is($s->{capacity}, 4, 'capacity');
        is($s->{arena_cap}, 4096, 'arena_cap: 4 * 256 is raised to the 4096 minimum');
        ok($s->{mmap_size} >= HEADER_SIZE + 4 * 16 + 4096,
           "mmap_size covers header, slots and arena ($s->{mmap_size})");
        if ($kind eq 'file') {
            is($s->{mmap_size}, -s $q->path, 'mmap_size is the file size');
        }
        is($s->{$_}, 0, "$_ starts at 0")
            for qw(size push_ok pop_ok push_full pop_empty recoveries push_waiters
                   pop_waiters arena_used lock_contended compressed compressed_saved);

        $q->push_multi(qw(a b c d));   # 4 ok
        $q->push('e');                 # full
        $q->push_front('e');           # full
        $q->push_wait('e', 0);         # full
        $q->push_multi('f', 'g');      # full
        $q->pop;                       # 1 ok
        $q->pop_back;                  # 1 ok
        $q->pop_multi(1);              # 1 ok
        $q->peek;                      # no count
        $q->drain;                     # 1 ok
        $q->pop;                       # empty
        $q->pop_back;                  # empty
        $q->pop_wait(0);               # empty
        $s = $q->stats;
        is($s->{push_ok}, 4, 'push_ok counts every pushed item');
        is($s->{pop_ok}, 4, 'pop_ok counts every popped item');
        ok($s->{push_full} >= 4, "push_full counts failed pushes ($s->{push_full})");
        ok($s->{pop_empty} >= 3, "pop_empty counts empty pops ($s->{pop_empty})");
        is($s->{size}, 0, 'size');
        is($s->{arena_used}, 0, 'arena_used back to 0');
        ok($s->{lock_acquired} >= 6, "lock_acquired counts the locked operations ($s->{lock_acquired})");
        is($s->{lock_contended}, 0, 'no contention in one process');
        is($s->{$_}, 0, "$_ is 0") for qw(recoveries push_waiters pop_waiters);

        my $pf = $s->{push_full};
        $q->push_multi(1 .. 4);
        ok(!$q->push(9), 'push on full');
        is($q->stats->{push_full}, $pf + 1, 'one failed push adds one to push_full');
        $q->drain;
        my $pe = $q->stats->{pop_empty};
        is($q->pop, undef, 'pop on empty');
        is($q->stats->{pop_empty}, $pe + 1, 'one empty pop adds one to pop_empty');
        $q->push('abc');
        is($q->stats->{size}, 1, 'stats size follows the queue');
        is($q->stats->{arena_used}, 8, 'a 3-byte item uses 8 arena bytes');
        my $la = $q->stats->{lock_acquired};
        $q->pop;
        ok($q->stats->{lock_acquired} > $la, 'a pop takes the lock (lock_acquired grows)');
    };

    subtest "$kind: numbers and other scalars are pushed as strings" => sub {
        my $q = new_on($kind, $CLASS, 16);
        my @in  = (42, -7, 0, 3.5, 1e21, '007', ' 1 ', '0 but true');
        my @out = map { "$_" } @in;
        ok($q->push($_), "push $_") for @in;
        my @got = $q->drain;
        is_deeply(\@got, \@out, 'each comes back as its string form');
        is($got[0], '42', '42 gives "42"');
        ok(!ref $got[0], 'not a reference');
        is($q->push_multi(@in), scalar @in, 'push_multi of numbers');
        is_deeply([$q->drain], \@out, 'same strings from push_multi');
        my $n = 5;
        $q->push($n);
        is($n, 5, 'the argument is not modified');
        is($q->pop, '5', 'pushed');
    };
}

subtest 'unlink' => sub { unlink_ok($CLASS, 'kept') };

subtest 'two handles on one file share the queue; stored geometry wins' => sub {
    my $path = fresh_path('shared');
    my $h1 = $CLASS->new($path, 8, 8192);
    my $h2 = $CLASS->new($path, 8, 8192);
    $h1->push('one');
    $h1->push_front('zero');
    is($h2->size, 2, 'second handle sees the size');
    is($h2->pop, 'zero', 'second handle pops what the first pushed');
    $h2->push('two');
    is_deeply([$h1->drain], [qw(one two)], 'and the other way round');

    my $c = $CLASS->new($path, 64, 65536);
    is($c->capacity, 8, 'reopening with another capacity uses the stored one');
    is($c->stats->{arena_cap}, 8192, 'and the stored arena');
    is($c->stats->{mmap_size}, -s $path, 'mapping covers the whole file');
    my $d = $CLASS->new($path, 2, 4096);
    is($d->capacity, 8, 'also when the requested capacity is smaller');
    is($d->stats->{arena_cap}, 8192, 'and the requested arena smaller');
    $d->push('x' x 5000);
    is(length $c->pop, 5000, 'a 5000-byte item fits the stored 8192-byte arena');
};

subtest 'a subclass works' => sub {
    { no strict 'refs'; @{'My::Sub::Str::ISA'} = ($CLASS); }
    my $q = My::Sub::Str->new(undef, 4);
    isa_ok($q, 'My::Sub::Str');
    isa_ok($q, $CLASS);
    ok($q->push('via sub'), 'push through the subclass');
    is($q->pop, 'via sub', 'pop through the subclass');
};

subtest 'DESTROY is idempotent; methods croak afterwards' => sub {
    for my $kind (qw(anon file memfd)) {
        my $q = new_on($kind, $CLASS, 4);
        $q->push('d');
        $q->DESTROY;
        ok(eval { $q->DESTROY; 1 }, "$kind: a second DESTROY is harmless");
        for my $call ([push => 'a'], [push_front => 'a'], ['pop'], ['pop_back'], ['peek'],
                      ['size'], ['stats'], [pop_wait => 0], [pop_back_wait => 0],
                      [push_multi => 'a', 'b'], [pop_multi => 2], ['drain'], ['capacity'],
                      ['clear'], ['memfd'], ['is_empty']) {
            my ($m, @args) = @$call;
            my $ok = eval { $q->$m(@args); 1 };
            ok(!$ok && $@, "$kind: $m after DESTROY croaks");
        }
        undef $q;
        pass("$kind: freeing a destroyed object is harmless");
    }
};

subtest 'methods croak on objects of the wrong type' => sub {
    no strict 'refs';
    my $push = \&{"${CLASS}::push"};
    my $size = \&{"${CLASS}::size"};
    my $type_re = qr/is not of type \Q$CLASS\E\b/;

    eval { $push->(bless({}, 'Foo'), 'a') };
    like($@, $type_re, 'a blessed hash of another class');
    eval { $size->([]) };
    like($@, $type_re, 'an unblessed array ref');
    eval { $size->(undef) };
    like($@, $type_re, 'undef');
    eval { $CLASS->size };
    like($@, $type_re, 'a class method call of an instance method');

    my $iq = Data::Queue::Shared::Int->new(undef, 4);
    eval { $push->($iq, 5) };
    like($@, $type_re, 'an Int queue passed to Str::push');
    is($iq->size, 0, '... which is untouched');
    my $sq = $CLASS->new(undef, 4);
    eval { Data::Queue::Shared::Int::push($sq, 5) };
    like($@, qr/is not of type Data::Queue::Shared::Int\b/, 'a Str queue passed to Int::push');
    is($sq->size, 0, '... which is untouched');
};

subtest 'DESTROY on foreign objects does nothing' => sub {
    no strict 'refs';
    my $destroy = \&{"${CLASS}::DESTROY"};
    my $h = bless { a => 1 }, 'Foo';
    ok(eval { $destroy->($h); 1 }, 'DESTROY on a blessed hash of another class lives') or diag($@);
    is($h->{a}, 1, 'and leaves it alone');
};

subtest 'CLONE_SKIP' => sub {
    is($CLASS->CLONE_SKIP, 1, "$CLASS->CLONE_SKIP is 1");
};

subtest 'no fd or mapping leaks' => sub {
    my $path = "$dir/many.shm";
    { my $q = $CLASS->new($path, 4) }    # warm up
    my ($f0, $m0) = (fd_count(), maps_count());
    for (1 .. 100) {
        my @q = ($CLASS->new(undef, 16), $CLASS->new($path, 4), $CLASS->new_memfd('many', 16));
        push @q, $CLASS->new_from_fd($q[2]->memfd);
        $q[0]->push('x');
        $q[1]->DESTROY;
    }
    is(fd_count(), $f0, 'no fd leaked');
    ok(maps_count() <= $m0 + 2, 'no mapping leaked') or diag(maps_count() . " maps, was $m0");
};

done_testing;
