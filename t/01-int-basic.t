# Every method of the three integer classes, on all three kinds of backing
# (file, anonymous, memfd), in one process.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Backing;
use DQSTest::Files;
use Test::More;
use Errno ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(60);

my $dir = scratch_dir();

for my $class (@INT_CLASSES) {
    subtest "$class: capacity rounds up to a power of two, minimum 2" => sub {
        my %round = (1 => 2, 2 => 2, 3 => 4, 4 => 4, 5 => 8, 17 => 32,
                     1000 => 1024, 1024 => 1024, 1025 => 2048);
        for my $kind (@KINDS) {
            for my $cap (sort { $a <=> $b } keys %round) {
                my $q = new_on($kind, $class, $cap);
                is($q->capacity, $round{$cap}, "$kind: capacity $cap -> $round{$cap}");
            }
        }
        my $q = $class->new(undef, '8');
        is($q->capacity, 8, 'capacity given as a string is numified');
        $q = $class->new(undef, 5.5);
        ok($q->capacity >= 4 && $q->capacity <= 8, 'fractional capacity is accepted');
    };

    subtest "$class: bad capacities croak naming class and method" => sub {
        my $new_re   = qr/^\Q$class\E->new: .*capacity/;
        my $memfd_re = qr/^\Q$class\E->new_memfd: .*capacity/;
        for my $bad (0, -1, -1024, 2**50, 2**31, 2**30 + 1, undef) {
            my $label = defined $bad ? $bad : 'undef';
            eval { $class->new(undef, $bad) };
            like($@, $new_re, "new(undef, $label) croaks");
            eval { $class->new(fresh_path('bad'), $bad) };
            like($@, $new_re, "new(\$path, $label) croaks");
            eval { $class->new_memfd('bad', $bad) };
            like($@, $memfd_re, "new_memfd(\$name, $label) croaks");
        }
        unlike($@, qr/\n.+/, 'croak message is one line');
        my @left = glob("$dir/bad*");
        is(scalar @left, 0, 'no file is left behind by a refused capacity')
            or diag("left: @left");
    };

    for my $kind (@KINDS) {
        subtest "$class ($kind): push, pop, peek, size, is_empty, is_full" => sub {
            my $q = new_on($kind, $class, 4);
            is($q->capacity, 4, 'capacity');
            is_plain($q->size, 0, 'new queue has size 0');
            ok($q->is_empty, 'new queue is empty');
            ok(!$q->is_full, 'new queue is not full');

            is($q->pop, undef, 'pop on empty returns undef');
            my @list = $q->pop;
            is(scalar @list, 1, 'pop on empty in list context returns one element');
            is($list[0], undef, '... which is undef');
            is($q->peek, undef, 'peek on empty returns undef');
            @list = $q->peek;
            is_deeply(\@list, [undef], 'peek on empty in list context: (undef)');

            ok($q->push(10), 'push returns true');
            is_plain($q->size, 1, 'size 1');
            ok(!$q->is_empty, 'no longer empty');
            is($q->peek, 10, 'peek returns the front');
            is($q->peek, 10, 'peek again: not removed');
            is_plain($q->size, 1, 'peek does not change the size');

            ok($q->push($_), "push $_") for 11, 12, 13;
            ok($q->is_full, 'full at capacity');
            is_plain($q->size, 4, 'size 4');
            ok(!$q->push(14), 'push on a full queue returns false');
            is_plain($q->size, 4, 'failed push changed nothing');

            is($q->pop, $_, "pop returns $_ (FIFO)") for 10 .. 13;
            is($q->pop, undef, 'empty again');
            ok($q->is_empty, 'is_empty');
            ok(!$q->is_full, 'not full');

            $q->push(7);
            @list = $q->pop;
            is_deeply(\@list, [7], 'pop in list context returns one value');
        };

        subtest "$class ($kind): FIFO across many wrap-arounds" => sub {
            my $q = new_on($kind, $class, 8);
            my ($next_in, $next_out, $bad) = (0, 0, 0);
            for my $round (1 .. 200) {
                my $n = 1 + $round % 8;
                for (1 .. $n) { $q->push($next_in++) or $bad++ }
                for (1 .. $n) {
                    my $v = $q->pop;
                    $bad++ unless defined $v && $v == $next_out;
                    $next_out++;
                }
            }
            is($bad, 0, "$next_in items went through in order");
            ok($q->is_empty, 'empty at the end');
        };

        subtest "$class ($kind): push_wait and pop_wait without waiting" => sub {
            my $q = new_on($kind, $class, 2);
            ok($q->push_wait(1), 'push_wait with no timeout on a non-full queue');
            ok($q->push_wait(2, 5), 'push_wait with a timeout');
            ok(!$q->push_wait(3, 0), 'push_wait(v, 0) on full returns false');
            is($q->pop_wait, 1, 'pop_wait with no timeout returns the front');
            is($q->pop_wait(5), 2, 'pop_wait with a timeout');
            is($q->pop_wait(0), undef, 'pop_wait(0) on empty returns undef');
            my @list = $q->pop_wait(0);
            is_deeply(\@list, [undef], 'pop_wait(0) in list context: (undef)');
        };

        subtest "$class ($kind): push_multi and pop_multi" => sub {
            my $q = new_on($kind, $class, 8);
            is_plain($q->push_multi(), 0, 'push_multi() returns 0');
            is_plain($q->push_multi(1, 2, 3), 3, 'push_multi of 3 returns 3');
            is_plain($q->push_multi(4 .. 10), 5, 'push_multi stops when full: 5 pushed');
            ok($q->is_full, 'full');
            is_plain($q->push_multi(11), 0, 'push_multi on full returns 0');
            is_deeply([$q->pop_multi(3)], [1, 2, 3], 'pop_multi(3)');
            is_deeply([$q->pop_multi(100)], [4 .. 8], 'pop_multi(100) returns what there is');
            is_deeply([$q->pop_multi(5)], [], 'pop_multi on empty returns an empty list');
            is_plain(scalar(my @x = $q->pop_multi(1)), 0, 'really empty');

            # more than any internal chunk size, through a large queue
            my $big = new_on($kind, $class, 1024);
            is_plain($big->push_multi(0 .. 999), 1000, 'push_multi of 1000');
            is_deeply([$big->pop_multi(1000)], [0 .. 999], 'pop_multi of 1000 in order');
        };

        subtest "$class ($kind): push_wait_multi and pop_wait_multi without waiting" => sub {
            my $q = new_on($kind, $class, 4);
            is_plain($q->push_wait_multi(0), 0, 'push_wait_multi(0) with no values returns 0');
            is_plain($q->push_wait_multi(5, 1, 2), 2, 'push_wait_multi(5, 1, 2) returns 2');
            is_plain($q->push_wait_multi(0, 3, 4, 5), 2,
                         'push_wait_multi(0, ...) pushes what fits: 2');
            is_plain($q->push_wait_multi(0, 6), 0, 'push_wait_multi(0, ...) on full returns 0');
            is_deeply([$q->pop_wait_multi(3, 0)], [1, 2, 3], 'pop_wait_multi(3, 0)');
            is_deeply([$q->pop_wait_multi(10, 5)], [4], 'pop_wait_multi(10, 5) returns what there is');
            is_deeply([$q->pop_wait_multi(10, 0)], [], 'pop_wait_multi(10, 0) on empty: empty list');
            $q->push(9);
            is_deeply([$q->pop_wait_multi(2)], [9], 'pop_wait_multi without a timeout');
        };

        subtest "$class ($kind): drain" => sub {
            my $q = new_on($kind, $class, 16);
            is_deeply([$q->drain], [], 'drain on empty returns an empty list');
            $q->push_multi(1 .. 10);
            is_deeply([$q->drain(3)], [1, 2, 3], 'drain(3)');
            is_deeply([$q->drain], [4 .. 10], 'drain returns all the rest in order');
            ok($q->is_empty, 'empty after drain');
            $q->push_multi(1 .. 16);
            is_deeply([$q->drain(100)], [1 .. 16], 'drain(100) on a full queue');
        };

        subtest "$class ($kind): clear" => sub {
            my $q = new_on($kind, $class, 8);
            $q->push_multi(1 .. 8);
            $q->pop;
            my $before = $q->stats;
            $q->clear;
            is_plain($q->size, 0, 'size 0 after clear');
            ok($q->is_empty, 'empty after clear');
            is($q->pop, undef, 'pop after clear returns undef');
            is($q->stats->{pop_ok}, $before->{pop_ok} + 7,
               'cleared items are counted in pop_ok (as in the C implementation)');
            is($q->stats->{push_ok} - $q->stats->{pop_ok}, 0, 'push_ok - pop_ok is the size');
            is_plain($q->push_multi(20 .. 30), 8, 'all capacity available after clear');
            is_deeply([$q->drain], [20 .. 27], 'FIFO works after clear');
            $q->clear;
            ok($q->is_empty, 'clear on an empty queue is harmless');
        };

        subtest "$class ($kind): sync, path, memfd" => sub {
            my $q = new_on($kind, $class, 4);
            $q->push(1);
            backing_ok($q, $kind);
        };

        subtest "$class ($kind): stats" => sub {
            my $q = new_on($kind, $class, 4);
            my $s = $q->stats;
            is(ref $s, 'HASH', 'stats returns a hashref');
            is_deeply([sort keys %$s],
                      [sort qw(size capacity mmap_size push_ok pop_ok push_full pop_empty
                               recoveries push_waiters pop_waiters)],
                      'exactly the documented keys');
            is($s->{capacity}, 4, 'capacity');
            is($s->{mmap_size}, mmap_size_for($class, 4), 'mmap_size: header, slots, intent records, lease table');
            is($class->new(undef, 2, { max_leases => 0 })->stats->{mmap_size}, 2432,
               'capacity 2 without leases maps 2432 bytes, as the manual says');
            is($s->{$_}, 0, "$_ starts at 0")
                for qw(size push_ok pop_ok push_full pop_empty recoveries push_waiters pop_waiters);

            $q->push_multi(1 .. 4);    # 4 ok
            $q->push(5);               # full
            $q->push_wait(5, 0);       # full
            $q->push_multi(6, 7);      # full
            $q->pop;                   # 1 ok
            $q->pop_multi(2);          # 2 ok
            $q->peek;                  # no count
            $q->drain;                 # 1 ok
            $q->pop;                   # empty
            $q->pop_wait(0);           # empty
            $s = $q->stats;
            is($s->{push_ok}, 4, 'push_ok counts every pushed item');
            is($s->{pop_ok}, 4, 'pop_ok counts every popped item');
            ok($s->{push_full} >= 3, "push_full counts failed pushes ($s->{push_full})");
            ok($s->{pop_empty} >= 2, "pop_empty counts empty pops ($s->{pop_empty})");
            is($s->{size}, 0, 'size');
            is($s->{$_}, 0, "$_ is 0") for qw(recoveries push_waiters pop_waiters);

            my $pf = $s->{push_full};
            $q->push_multi(1 .. 4);
            ok(!$q->push(9), 'push on full');
            is($q->stats->{push_full}, $pf + 1, 'one failed push adds one to push_full');
            $q->drain;
            my $pe = $q->stats->{pop_empty};
            is($q->pop, undef, 'pop on empty');
            is($q->stats->{pop_empty}, $pe + 1, 'one empty pop adds one to pop_empty');
            is($q->stats->{size}, 0, 'stats size matches');
            $q->push(1);
            is($q->stats->{size}, 1, 'stats size follows the queue');
        };
    }

    subtest "$class: unlink" => sub { unlink_ok($class, 5) };

    subtest "$class: two handles on one file share the queue; stored geometry wins" => sub {
        my $path = fresh_path('shared');
        my $h1 = $class->new($path, 8);
        my $h2 = $class->new($path, 8);
        $h1->push(1);
        $h1->push(2);
        is($h2->size, 2, 'second handle sees the size');
        is($h2->pop, 1, 'second handle pops what the first pushed');
        $h2->push(3);
        is_deeply([$h1->drain], [2, 3], 'and the other way round');

        my $c = $class->new($path, 64);
        is($c->capacity, 8, 'reopening with another capacity uses the stored one');
        is($c->stats->{mmap_size}, mmap_size_for($class, 8), 'and the stored size');
        my $d = $class->new($path, 2);
        is($d->capacity, 8, 'also when the requested capacity is smaller');
        is(-s $path, mmap_size_for($class, 8), 'file size is header + cap * slot size');
    };

    subtest "$class: a subclass works" => sub {
        my $sub = "My::Sub::" . ($class =~ /(\w+)$/)[0];
        { no strict 'refs'; @{"${sub}::ISA"} = ($class); }
        my $q = $sub->new(undef, 4);
        isa_ok($q, $sub);
        isa_ok($q, $class);
        ok($q->push(3), 'push through the subclass');
        is($q->pop, 3, 'pop through the subclass');
    };
}

done_testing;
