use strict;
use warnings;
use Test::More;
use Data::Queue::Shared;

# The batch methods read their values straight from the Perl stack and
# build their results straight onto it. What must hold whatever path a
# batch takes: every value is read exactly as it was when its turn came
# (even when reading a later one runs Perl code that changes or frees an
# earlier one), strings keep their bytes and UTF-8 flag, numbers their
# value, and every result is a fresh scalar of its own.

alarm 60;

my @INT = map "Data::Queue::Shared::$_", qw(Int Int32 Int16);
my $STR = 'Data::Queue::Shared::Str';

{
    package Stringy;
    use overload '""' => sub { $_[0]{cb}->() }, '0+' => sub { $_[0]{cb}->() }, fallback => 1;
    sub new { my ($c, $cb) = @_; bless { cb => $cb }, $c }

    package Fetchy;
    sub TIESCALAR { my ($c, $cb) = @_; bless { cb => $cb }, $c }
    sub FETCH { $_[0]{cb}->() }
    sub STORE { }
}

subtest 'Str: a later value changes or frees an earlier one' => sub {
    my $q = $STR->new(undef, 16, 1 << 20);
    my @v = ('a' x 10, 'b' x 10);
    my $o = Stringy->new(sub { $v[0] = 'z' x 100_000; $v[1] .= 'y' x 100_000; 'o' });
    is $q->push_multi(@v, $o, 'tail'), 4, 'overloaded value grows the earlier ones';
    is_deeply [ $q->drain ], [ 'a' x 10, 'b' x 10, 'o', 'tail' ], '... the earlier ones as they were';

    @v = ('c' x 10, 'd' x 10);
    $o = Stringy->new(sub { @v = (); 'o' });
    is $q->push_multi(@v, $o), 3, 'overloaded value frees the earlier ones';
    is_deeply [ $q->drain ], [ 'c' x 10, 'd' x 10, 'o' ], '... the earlier ones as they were';

    @v = ('e' x 10);
    tie my $t, 'Fetchy', sub { $v[0] = 'w'; 'fetched' };
    is $q->push_multi($v[0], $t, $v[0]), 3, 'tied value changes an earlier one';
    is_deeply [ $q->drain ], [ 'e' x 10, 'fetched', 'w' ], '... each read when its turn came';

    @v = ('f' x 10);
    tie my $u, 'Fetchy', sub { $v[0] = 'v' x 1000; 'fetched' };
    is $q->push_wait_multi(1, @v, $u), 2, 'push_wait_multi too';
    is_deeply [ $q->drain ], [ 'f' x 10, 'fetched' ], '... the earlier one as it was';

    my @many = map { "m$_" } 1 .. 200;
    $o = Stringy->new(sub { $_ = 'gone' for @many; 'o' });
    is $q->push_multi(@many[0 .. 9], $o), 11, 'small batch after a big one';
    is_deeply [ $q->drain ], [ (map { "m$_" } 1 .. 10), 'o' ], '... as they were';
};

subtest 'Str: bytes, flags, numbers, aliases, big batches' => sub {
    my $q = $STR->new(undef, 512, 1 << 20);
    my $n = 5;
    my $smile = "\x{263a}!";
    my $latin = "caf\xe9";
    is $q->push_multi($n, $n, 3.5, -7, '', $smile, $latin, "nul\0byte"), 8, 'mixed values';
    my @r = $q->drain;
    is_deeply \@r, [ '5', '5', '3.5', '-7', '', $smile, $latin, "nul\0byte" ], 'read as strings';
    ok utf8::is_utf8($r[5]), 'UTF-8 flag kept';
    ok !utf8::is_utf8($r[6]), 'byte string kept as bytes';
    is length $r[7], 8, 'a NUL byte inside is kept';
    ok defined $r[4] && !length $r[4], 'the empty string is defined';

    my @big = map { "item $_" } 1 .. 300;
    is $q->push_multi(@big), 300, 'a batch larger than the on-stack buffers';
    is_deeply [ $q->pop_multi(300) ], \@big, 'all of it back in order';
    is $q->push_wait_multi(0, @big), 300, 'push_wait_multi of 300';
    is_deeply [ $q->pop_wait_multi(300, 0) ], \@big, 'pop_wait_multi of 300';

    eval { $q->push_multi(@big[0 .. 199], undef, 'x') };
    like $@, qr/^Data::Queue::Shared::Str->push_multi: cannot push undef at /, 'undef in a big batch croaks';
    is $q->size, 0, '... nothing was pushed';
    eval { $q->push_multi('a', undef, Stringy->new(sub { die "not reached\n" })) };
    like $@, qr/cannot push undef/, 'undef before an overloaded value croaks first';
};

subtest 'Str: results are fresh scalars' => sub {
    my $q = $STR->new(undef, 8);
    $q->push_multi(qw(a b c));
    my @r = $q->pop_multi(3);
    $_ .= '!' for @r;
    is_deeply \@r, [ 'a!', 'b!', 'c!' ], 'each can be changed';
    $q->push_multi(qw(x y));
    my $ref = \($q->pop_multi(1))[0];
    $$ref = 'changed';
    is $q->pop, 'y', 'the queue is not affected';
    $q->push('p');
    my ($p) = $q->pop_wait_multi(2, 0);
    is $p, 'p', 'pop_wait_multi';
    $q->push_multi(('s') x 5);
    is scalar(() = $q->drain), 5, 'drain';
};

subtest 'Int: values read in turn, results fresh' => sub {
    for my $class (@INT) {
        my $q = $class->new(undef, 512);
        my @v = (1, 2);
        my $o = Stringy->new(sub { @v = (); $v[0] = 'x' x 100; 9 });
        is $q->push_multi(@v, $o), 3, "$class: overloaded value frees the earlier ones";
        is_deeply [ $q->drain ], [ 1, 2, 9 ], "$class: ... read as they were";

        my @big = map { $_ % 30000 - 15000 } 1 .. 300;
        is $q->push_multi(@big), 300, "$class: a batch larger than the on-stack buffer";
        my @r = $q->pop_multi(300);
        is_deeply \@r, \@big, "$class: all back in order";
        $r[0] .= 'x';
        $r[1] = 1.5;
        $r[2]++;
        is_deeply [ @r[0 .. 2] ], [ "$big[0]x", 1.5, $big[2] + 1 ], "$class: results are ordinary scalars";

        $q->push_multi('12', 3.0, ' 7 ');
        is_deeply [ $q->pop_wait_multi(3, 0) ], [ 12, 3, 7 ], "$class: strings and floats";
        eval { $q->push_multi(1 .. 200, undef) };
        is $q->size, 0, "$class: nothing pushed when a late value croaks" or diag $@;
    }
    my $q = Data::Queue::Shared::Int->new(undef, 8);
    $q->push_multi(-9223372036854775808, 9223372036854775807, 0);
    is_deeply [ $q->pop_multi(3) ], [ -9223372036854775808, 9223372036854775807, 0 ], 'Int: extremes';
};

done_testing;
