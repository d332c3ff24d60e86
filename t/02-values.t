# The values a queue stores: the int64 range, C-cast truncation for Int32 and
# Int16, numification of strings and floats, and get-magic (ties, overloading)
# honoured exactly once per value.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Magic;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(60);

# [ input, expected output ] per class.
my %cases = (
    'Data::Queue::Shared::Int' => [
        [0, 0], [1, 1], [-1, -1],
        [9223372036854775807, '9223372036854775807'],
        [-9223372036854775808, '-9223372036854775808'],
        [9223372036854775806, '9223372036854775806'],
        [-9223372036854775807, '-9223372036854775807'],
        [2**31, 2147483648], [2**32 + 5, 4294967301], [-(2**40), -1099511627776],
        [4294967296, 4294967296],
    ],
    'Data::Queue::Shared::Int32' => [
        [0, 0], [1, 1], [-1, -1],
        [2147483647, 2147483647], [-2147483648, -2147483648],
        [2**31, -2147483648], [2**31 + 1, -2147483647],
        [2**32 + 5, 5], [2**32, 0], [-2147483649, 2147483647],
        [4294967295, -1],
    ],
    'Data::Queue::Shared::Int16' => [
        [0, 0], [1, 1], [-1, -1],
        [32767, 32767], [-32768, -32768],
        [32768, -32768], [65536 + 7, 7], [70000, 4464], [65535, -1],
        [-32769, 32767], [2**32 + 5, 5],
    ],
);

for my $class (@INT_CLASSES) {
    my @in  = map { $_->[0] } @{ $cases{$class} };
    my @out = map { $_->[1] } @{ $cases{$class} };
    my $n   = @in;

    subtest "$class: range and truncation through every push and pop" => sub {
        my $q = $class->new(undef, 16);
        for my $c (@{ $cases{$class} }) {
            my ($in, $out) = @$c;
            ok($q->push($in), "push $in");
            is($q->peek, $out, "peek $in -> $out");
            is($q->pop, $out, "pop $in -> $out");
        }

        is($q->push_multi(@in), $n, 'push_multi of every case');
        is_deeply([$q->pop_multi($n)], \@out, 'pop_multi returns them converted');

        is($q->push_wait_multi(1, @in), $n, 'push_wait_multi of every case');
        is_deeply([$q->pop_wait_multi($n, 1)], \@out, 'pop_wait_multi returns them converted');

        ok($q->push_wait($_, 1), "push_wait $_") for @in;
        is_deeply([$q->drain], \@out, 'drain returns them converted');

        $q->push($_) for @in;
        my @got = map { $q->pop_wait(1) } 1 .. $n;
        is_deeply(\@got, \@out, 'pop_wait returns them converted');
    };

    subtest "$class: values come back as integers" => sub {
        my $q = $class->new(undef, 4);
        $q->push(-5);
        my $v = $q->pop;
        ok(!ref $v, 'not a reference');
        is("$v", '-5', 'stringifies as an integer');
        is($v + 1, -4, 'numeric');
        $q->push(0);
        $v = $q->pop;
        ok(defined $v && !$v && "$v" eq '0', 'zero comes back as a defined 0, not undef or ""');
    };

    subtest "$class: strings and floats are numified" => sub {
        my $q = $class->new(undef, 16);
        my @pairs = (['42', 42], [3.7, 3], [-3.7, -3], ['-17', -17], ['1e3', 1000],
                     [0.5, 0], ['  12', 12], ['0', 0], ['+8', 8], [1.0, 1]);
        for my $p (@pairs) {
            ok($q->push($p->[0]), "push '$p->[0]'");
            is($q->pop, $p->[1], "'$p->[0]' -> $p->[1]");
        }
        is($q->push_multi(map { $_->[0] } @pairs), scalar @pairs, 'push_multi of strings and floats');
        is_deeply([$q->drain], [map { $_->[1] } @pairs], 'numified the same way');

        my $s = '77';
        $q->push($s);
        is($s, '77', 'the argument is not modified');
        is($q->pop, 77, 'string pushed');
    };

    subtest "$class: tied scalars are fetched exactly once" => sub {
        my $q = $class->new(undef, 16);
        my $fetches = 0;
        tie my $t, 'Counting::Scalar', \$fetches, 21;

        $q->push($t);
        is($fetches, 1, 'push fetches once');
        is($q->pop, 21, 'pushed the fetched value');

        $fetches = 0;
        $q->push_wait($t, 1);
        is($fetches, 1, 'push_wait fetches once');
        is($q->pop, 21, 'pushed the fetched value');

        $fetches = 0;
        tie my $u, 'Counting::Scalar', \$fetches, 5;
        is($q->push_multi($t, $u, $t), 3, 'push_multi of tied values');
        is($fetches, 3, 'push_multi fetches each argument once');
        is_deeply([$q->drain], [21, 5, 21], 'pushed the fetched values');

        $fetches = 0;
        is($q->push_wait_multi(1, $u, $t), 2, 'push_wait_multi of tied values');
        is($fetches, 2, 'push_wait_multi fetches each argument once');
        is_deeply([$q->drain], [5, 21], 'pushed the fetched values');

        my $cfetch = 0;
        tie my $count, 'Counting::Scalar', \$cfetch, 2;
        $q->push_multi(1 .. 5);
        is_deeply([$q->pop_multi($count)], [1, 2], 'a tied count is honoured');
        is($cfetch, 1, 'count fetched once');
        $cfetch = 0;
        is_deeply([$q->drain($count)], [3, 4], 'a tied drain max is honoured');
        is($cfetch, 1, 'max fetched once');
        $q->clear;

        my $tfetch = 0;
        tie my $timeout, 'Counting::Scalar', \$tfetch, 0;
        is($q->pop_wait($timeout), undef, 'a tied timeout is honoured');
        is($tfetch, 1, 'timeout fetched once');

        my $vfetch = 0;
        tie my $cap, 'Counting::Scalar', \$vfetch, 8;
        is($class->new(undef, $cap)->capacity, 8, 'a tied capacity is honoured');
        is($vfetch, 1, 'capacity fetched once');
    };

    subtest "$class: overloaded 0+ is called exactly once" => sub {
        my $q = $class->new(undef, 16);
        my $calls = 0;
        my $obj = Numish->new(\$calls, 13);
        ok($q->push($obj), 'push an object with 0+');
        is($calls, 1, '0+ called once');
        is($q->pop, 13, 'its numeric value was pushed');

        $calls = 0;
        is($q->push_multi($obj, $obj), 2, 'push_multi of objects');
        is($calls, 2, '0+ called once per argument');
        is_deeply([$q->drain], [13, 13], 'their numeric values were pushed');

        $calls = 0;
        ok($q->push_wait($obj, 0), 'push_wait of an object');
        is($calls, 1, '0+ called once');
        is($q->pop, 13, 'value');
    };

    subtest "$class: a value whose conversion dies pushes nothing" => sub {
        my $q = $class->new(undef, 8);
        my $bomb = Numish->new(\my $calls, sub { die "no number here\n" });
        eval { $q->push($bomb) };
        is($@, "no number here\n", 'push propagates the exception');
        is($q->size, 0, 'nothing pushed');
        eval { $q->push_multi(1, 2, $bomb, 4) };
        is($@, "no number here\n", 'push_multi propagates the exception');
        is($q->size, 0, 'nothing pushed by push_multi, not even the values before it');
        eval { $q->push_wait_multi(0, 1, $bomb) };
        is($@, "no number here\n", 'push_wait_multi propagates the exception');
        is($q->size, 0, 'nothing pushed');
        ok($q->push(3) && $q->pop == 3, 'queue works afterwards');
        is($q->stats->{push_ok}, 1, 'push_ok counts only the real push');
    };
}

done_testing;
