# The keyword API behaves exactly like the methods: every assertion below
# runs twice per class, once through push/pop/peek/size and once through
# the q_<type>_push/pop/peek/size keywords (custom ops), from a table of
# subs. Then a random sequence of operations is run both ways side by side
# and every result compared. Skipped when built without XS::Parse::Keyword.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Backing;
use DQSTest::Files;
use DQSTest::Magic;
use Test::More;

BEGIN {
    require Data::Queue::Shared;
    plan skip_all => 'built without the keyword API (XS::Parse::Keyword)'
        unless $Data::Queue::Shared::HAVE_KEYWORDS;
}

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(120);

my $STR = 'Data::Queue::Shared::Str';
my @CLASSES = (@INT_CLASSES, $STR);

my %METHODS = (
    push => sub { $_[0]->push($_[1]) },
    pop  => sub { $_[0]->pop },
    peek => sub { $_[0]->peek },
    size => sub { $_[0]->size },
);

my %KEYWORDS = (
    'Data::Queue::Shared::Int' => {
        push => sub { q_int_push $_[0], $_[1] },
        pop  => sub { q_int_pop $_[0] },
        peek => sub { q_int_peek $_[0] },
        size => sub { q_int_size $_[0] },
    },
    'Data::Queue::Shared::Int32' => {
        push => sub { q_int32_push $_[0], $_[1] },
        pop  => sub { q_int32_pop $_[0] },
        peek => sub { q_int32_peek $_[0] },
        size => sub { q_int32_size $_[0] },
    },
    'Data::Queue::Shared::Int16' => {
        push => sub { q_int16_push $_[0], $_[1] },
        pop  => sub { q_int16_pop $_[0] },
        peek => sub { q_int16_peek $_[0] },
        size => sub { q_int16_size $_[0] },
    },
    'Data::Queue::Shared::Str' => {
        push => sub { q_str_push $_[0], $_[1] },
        pop  => sub { q_str_pop $_[0] },
        peek => sub { q_str_peek $_[0] },
        size => sub { q_str_size $_[0] },
    },
);

# The two ways of calling a class: a label, the subs, the name each
# operation has in croak messages, and the subs bound to the class (a
# method call on a foreign object would dispatch elsewhere or die in
# perl's method lookup; the class's own sub is what a keyword is).
sub ways {
    my ($class) = @_;
    my ($tag) = lc(($class =~ /(\w+)$/)[0]);
    no strict 'refs';
    my %bound = map { $_ => \&{"${class}::$_"} } keys %METHODS;
    return (
        [method  => \%METHODS,          { map { $_ => $_ } keys %METHODS }, \%bound],
        [keyword => $KEYWORDS{$class}, { map { $_ => "q_${tag}_$_" } keys %METHODS },
         $KEYWORDS{$class}],
    );
}

sub item { $_[0] eq $STR ? "s$_[1]" : $_[1] }


# ok() that $got is exactly $want, UTF-8 flag included.
sub same_str {
    my ($got, $want, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    ok(defined $got && $got eq $want && (utf8::is_utf8($got) xor !utf8::is_utf8($want)), $name);
}

# A list of results as text: undef, references and values told apart.
sub show {
    return join ', ', map { !defined $_ ? 'undef' : ref $_ ? "ref $_" : "'$_'" } @_;
}

# ---- the assertions, each run both ways ------------------------------

sub basics {
    my ($class, $op) = @_;
    for my $kind (@KINDS) {
        my $q = new_on($kind, $class, 4);
        is_plain($op->{size}->($q), 0, "$kind: new queue has size 0");
        is($op->{pop}->($q), undef, "$kind: pop on empty returns undef");
        is_deeply([$op->{pop}->($q)], [undef], "$kind: pop on empty in list context: (undef)");
        is($op->{peek}->($q), undef, "$kind: peek on empty returns undef");
        is_deeply([$op->{peek}->($q)], [undef], "$kind: peek on empty in list context: (undef)");

        my $r = $op->{push}->($q, item($class, 10));
        ok($r, "$kind: push returns true");
        is($r, 1, "$kind: ... namely 1");
        is_plain($op->{size}->($q), 1, "$kind: size 1");
        is($op->{peek}->($q), item($class, 10), "$kind: peek returns the front");
        is($op->{peek}->($q), item($class, 10), "$kind: peek again: not removed");
        is_plain($op->{size}->($q), 1, "$kind: peek does not change the size");

        ok($op->{push}->($q, item($class, $_)), "$kind: push $_") for 11, 12, 13;
        is_plain($op->{size}->($q), 4, "$kind: size 4 (full)");
        $r = $op->{push}->($q, item($class, 14));
        ok(defined $r && !$r && $r eq '', "$kind: push on a full queue returns false ('')");
        is_plain($op->{size}->($q), 4, "$kind: the failed push changed nothing");

        is($op->{pop}->($q), item($class, $_), "$kind: pop returns $_ (FIFO)") for 10 .. 13;
        is($op->{pop}->($q), undef, "$kind: empty again");
        $op->{push}->($q, item($class, 7));
        is_deeply([$op->{pop}->($q)], [item($class, 7)], "$kind: pop in list context: one value");
        is_deeply([$op->{size}->($q)], [0], "$kind: size in list context: one value");
    }

    my $q = new_on('anon', $class, 8);
    my ($in, $out, $bad) = (0, 0, 0);
    for my $round (1 .. 100) {
        my $n = 1 + $round % 8;
        for (1 .. $n) { $op->{push}->($q, item($class, $in++)) or $bad++ }
        for (1 .. $n) {
            my $v = $op->{pop}->($q);
            $bad++ unless defined $v && $v eq item($class, $out);
            $out++;
        }
    }
    is($bad, 0, "$in items went through in order across wrap-arounds");

    my $path = fresh_path('share');
    my $h1 = $class->new($path, 4);
    my $h2 = $class->new($path, 4);
    $op->{push}->($h1, item($class, 1));
    is($op->{size}->($h2), 1, 'a second handle sees the size');
    is($op->{pop}->($h2), item($class, 1), 'and pops what the first pushed');
}

my %INT_CASES = (
    'Data::Queue::Shared::Int' => [
        [0, 0], [-1, -1], [9223372036854775807, '9223372036854775807'],
        [-9223372036854775808, '-9223372036854775808'], [2**32 + 5, 4294967301],
    ],
    'Data::Queue::Shared::Int32' => [
        [0, 0], [-1, -1], [2147483647, 2147483647], [-2147483648, -2147483648],
        [2**31, -2147483648], [2**32 + 5, 5], [-2147483649, 2147483647], [4294967295, -1],
    ],
    'Data::Queue::Shared::Int16' => [
        [0, 0], [-1, -1], [32767, 32767], [-32768, -32768], [32768, -32768],
        [65536 + 7, 7], [70000, 4464], [65535, -1], [-32769, 32767],
    ],
);

sub int_values {
    my ($class, $op) = @_;
    my $q = $class->new(undef, 16);
    for my $c (@{ $INT_CASES{$class} }) {
        my ($in, $out) = @$c;
        ok($op->{push}->($q, $in), "push $in");
        is($op->{peek}->($q), $out, "peek $in -> $out");
        is($op->{pop}->($q), $out, "pop $in -> $out");
    }
    $op->{push}->($q, 0);
    my $v = $op->{pop}->($q);
    ok(defined $v && !$v && "$v" eq '0', 'zero comes back as a defined 0');
    $op->{push}->($q, -5);
    $v = $op->{pop}->($q);
    ok(!ref $v && "$v" eq '-5' && $v + 1 == -4, 'values come back as plain integers');

    for my $p (['42', 42], [3.7, 3], [-3.7, -3], ['1e3', 1000], ['  12', 12], ['+8', 8]) {
        $op->{push}->($q, $p->[0]);
        is($op->{pop}->($q), $p->[1], "'$p->[0]' is numified to $p->[1]");
    }
    my $s = '77';
    $op->{push}->($q, $s);
    is($s, '77', 'the argument is not modified');
    is($op->{pop}->($q), 77, 'the string was pushed as a number');
}

sub str_values {
    my ($class, $op) = @_;
    my $upgraded = "caf\xe9 \xff";
    utf8::upgrade($upgraded);
    my @cases = ('', "\0", "a\0b", join('', map { chr } 0 .. 255), "caf\xe9", $upgraded,
                 "\x{263a} smile \x{1F600}", "\x{100}\0\x{101}", '0', 'x' x 5000);
    my $q = $class->new(undef, 4, 65536);
    for my $i (0 .. $#cases) {
        my $v = $cases[$i];
        ok($op->{push}->($q, $v), "push case $i");
        same_str($op->{peek}->($q), $v, "peek case $i: bytes and UTF-8 flag");
        same_str($op->{pop}->($q), $v, "pop case $i: bytes and UTF-8 flag");
    }
    my $bytes = "\xc3\xa9";
    my $chars = "\x{e9}";
    utf8::upgrade($chars);
    $op->{push}->($q, $_) for $bytes, $chars, $bytes;
    same_str($op->{pop}->($q), $bytes, 'two bytes stay two bytes');
    same_str($op->{pop}->($q), $chars, 'a flagged character stays flagged');
    same_str($op->{pop}->($q), $bytes, 'the flag does not leak to the next item');
    for my $n (42, -7, 3.5, 1e21, '007') {
        $op->{push}->($q, $n);
        is($op->{pop}->($q), "$n", "the number $n is pushed as its string");
    }
}

sub str_refusals {
    my ($class, $op, $name) = @_;
    my $q = $class->new(undef, 8);
    my $re = qr/^\Q$class\E->\Q$name->{push}\E: /;
    eval { $op->{push}->($q, undef) };
    like($@, qr/${re}cannot push undef/, 'undef croaks');
    unlike($@, qr/\n./, 'one-line message');
    for my $ref ([1], { a => 1 }, \'x', sub { 1 }, bless({}, 'Plain::Object')) {
        eval { $op->{push}->($q, $ref) };
        like($@, qr/${re}cannot push a reference/, 'a ' . ref($ref) . ' reference croaks');
    }
    my $small = $class->new(undef, 2, 4096);
    eval { $op->{push}->($small, 'x' x 100_000) };
    like($@, qr/$re\S.*/, 'a string that can never fit croaks');
    is($op->{size}->($q), 0, 'nothing pushed');
    is($op->{size}->($small), 0, 'nothing pushed');
    ok($op->{push}->($q, 'fine'), 'the queue works afterwards');
}

sub conversions {
    my ($class, $op) = @_;
    my $is_str = $class eq $STR;
    my $q = $class->new(undef, 16);

    my $fetches = 0;
    tie my $t, 'Counting::Scalar', \$fetches, $is_str ? 'tied' : 21;
    ok($op->{push}->($q, $t), 'push a tied value');
    is($fetches, 1, 'fetched once');
    is($op->{pop}->($q), $is_str ? 'tied' : 21, 'the fetched value was pushed');

    my $qfetches = 0;
    tie my $tq, 'Counting::Scalar', \$qfetches, $q;
    $op->{push}->($tq, item($class, 3));
    is($qfetches, 1, 'a tied invocant is fetched once by push');
    $qfetches = 0;
    is($op->{size}->($tq), 1, 'size through a tied invocant');
    is($op->{peek}->($tq), item($class, 3), 'peek through a tied invocant');
    is($op->{pop}->($tq), item($class, 3), 'pop through a tied invocant');
    is($qfetches, 3, '... each fetching it once');

    my $calls = 0;
    my $obj = $is_str ? Stringy->new(\$calls, 'from overload') : Numish->new(\$calls, 13);
    ok($op->{push}->($q, $obj), 'push an object with overloading');
    is($calls, 1, 'its conversion is called once');
    is($op->{pop}->($q), $is_str ? 'from overload' : 13, 'its value was pushed');

    my $bomb = $is_str ? Stringy->new(\$calls, sub { die "no value here\n" })
                       : Numish->new(\$calls, sub { die "no value here\n" });
    eval { $op->{push}->($q, $bomb) };
    is($@, "no value here\n", 'a dying conversion propagates its exception');
    is($op->{size}->($q), 0, 'and pushes nothing');
    ok($op->{push}->($q, item($class, 1)) && $op->{pop}->($q) eq item($class, 1),
       'the queue works afterwards');
}

sub wrong_objects {
    my ($class, $op, $name, $bound) = @_;
    my $type_re = sub { qr/^\Q$class\E->\Q$name->{$_[0]}\E: invocant is not of type \Q$class\E\b/ };
    my @bad = (
        ['a blessed hash of another class' => bless({}, 'Foo')],
        ['a blessed scalar of another class' => bless(\my $x, 'Foo')],
        ['an unblessed array ref' => []],
        ['an unblessed scalar ref' => \42],
        ['the class name' => $class],
        ['undef' => undef],
        ['a number' => 12],
    );
    for my $b (@bad) {
        my ($what, $obj) = @$b;
        eval { $bound->{push}->($obj, item($class, 1)) };
        like($@, $type_re->('push'), "push on $what croaks");
        for my $o (qw(pop peek size)) {
            eval { $bound->{$o}->($obj) };
            like($@, $type_re->($o), "$o on $what croaks");
        }
    }
    unlike($@, qr/\n./, 'one-line message');
    for my $other (grep { $_ ne $class } @CLASSES) {
        my $o = $other->new(undef, 4);
        $o->push(item($other, 1));
        for my $m (qw(pop peek size)) {
            eval { $bound->{$m}->($o) };
            like($@, $type_re->($m), "$m on a $other croaks");
        }
        eval { $bound->{push}->($o, item($class, 2)) };
        like($@, $type_re->('push'), "push on a $other croaks");
        is($o->size, 1, '... which is untouched');
    }

    my $sub = 'My::KW::' . ($class =~ /(\w+)$/)[0];
    { no strict 'refs'; @{"${sub}::ISA"} = ($class); }
    my $s = $sub->new(undef, 4);
    ok($op->{push}->($s, item($class, 5)), 'push on a subclass object');
    is($op->{size}->($s), 1, 'size on a subclass object');
    is($op->{peek}->($s), item($class, 5), 'peek on a subclass object');
    is($op->{pop}->($s), item($class, 5), 'pop on a subclass object');
}

sub destroyed {
    my ($class, $op, $name) = @_;
    for my $kind (qw(anon file memfd)) {
        my $q = new_on($kind, $class, 4);
        $q->push(item($class, 1));
        $q->DESTROY;
        for my $o (qw(push pop peek size)) {
            eval { $o eq 'push' ? $op->{push}->($q, item($class, 2)) : $op->{$o}->($q) };
            like($@, qr/^\Q$class\E->\Q$name->{$o}\E: the queue object has been destroyed/,
                 "$kind: $o after DESTROY croaks");
        }
    }
    # A conversion that destroys the queue: the handle is fetched after
    # the value, so this croaks instead of using freed memory. In a child,
    # so that a crash shows as a signal.
    my $pid = spawn(sub {
        my $q = $class->new(undef, 8);
        my $c = 0;
        my $obj = $class eq $STR ? Stringy->new(\$c, sub { $q->DESTROY; 'x' })
                                 : Numish->new(\$c, sub { $q->DESTROY; 1 });
        my $ok = eval { $op->{push}->($q, $obj); 1 };
        die "did not croak\n" if $ok;
        $@ =~ /has been destroyed/ or die "unexpected error: $@";
        my $q2 = $class->new(undef, 8);
        my $obj2 = $class eq $STR ? Stringy->new(\$c, sub { undef $q2; 'x' })
                                  : Numish->new(\$c, sub { undef $q2; 1 });
        $ok = eval { $op->{push}->($q2, $obj2); 1 };
        die "did not croak when the only reference went away\n" if $ok;
    }, timeout => 10);
    reap_ok($pid, 'a conversion that destroys the queue makes push croak, no crash');
}

for my $class (@CLASSES) {
    for my $way (ways($class)) {
        my ($label, $op, $name, $bound) = @$way;
        subtest "$class ($label): push, pop, peek, size" => sub { basics($class, $op) };
        if ($class eq $STR) {
            subtest "$class ($label): bytes and UTF-8 flags" => sub { str_values($class, $op) };
            subtest "$class ($label): undef, references, too big" => sub {
                str_refusals($class, $op, $name);
            };
        }
        else {
            subtest "$class ($label): range, truncation, numification" => sub {
                int_values($class, $op);
            };
        }
        subtest "$class ($label): magic, ties, overloading" => sub { conversions($class, $op) };
        subtest "$class ($label): wrong invocants croak" => sub {
            wrong_objects($class, $op, $name, $bound);
        };
        subtest "$class ($label): destroyed objects croak" => sub {
            destroyed($class, $op, $name);
        };
    }
}

# ---- both ways side by side ------------------------------------------

for my $class (@CLASSES) {
    subtest "$class: a random sequence gives identical results both ways" => sub {
        my ($m, $k) = map { $class->new(undef, 8) } 1 .. 2;
        my $kw = $KEYWORDS{$class};
        srand(42);
        my $diffs = 0;
        for my $i (1 .. 3000) {
            my $o = (qw(push push pop peek size))[int rand 5];
            my @arg = $o eq 'push' ? (item($class, int(rand 2**40) - 2**39)) : ();
            my $a = show($METHODS{$o}->($m, @arg));
            my $b = show($kw->{$o}->($k, @arg));
            next if $a eq $b;
            $diffs++ < 5 and diag("step $i: $o(@arg): method ($a), keyword ($b)");
        }
        is($diffs, 0, '3000 operations, no difference');
        is_deeply([$m->drain], [$k->drain], 'same contents at the end');
    };
}

done_testing;
