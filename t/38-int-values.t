# What an integer queue stores for each kind of value, and what it refuses.
# A value that cannot be stored as it is (NaN, an infinity, a number or
# numeric string outside int64, a string that is not a number) croaks
# naming the method, the value and the range, in every push form: the
# method (through the fast method call and as a plain XSUB call),
# push_wait, the batches (which croak before pushing anything) and the
# keywords. Fractions are cut off toward zero as int() cuts them; Int32 and
# Int16 keep the low 32 or 16 bits of any value within int64. After a
# croak of the core (a file that is not a queue) $! says why, and the
# open of a file that is not a queue says so whatever else would fail.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Files;
use Test::More;
use Errno qw(EINVAL ENOENT);
use POSIX ();
use Data::Queue::Shared;    # the fast method calls, in this file

watchdog(120);

my $RANGE = '(-9223372036854775808 .. 9223372036854775807)';

{
    package Num;
    use overload '0+' => sub { $_[0]{v} }, fallback => 1;
    sub new { bless { v => $_[1] }, $_[0] }
}

# [ value, what the croak shows, why ] for every class.
my @BAD = (
    [ 2**64,                  '1.84467440737096e+19',  'range' ],
    [ -2**64,                 '-1.84467440737096e+19', 'range' ],
    [ 2**63,                  '9.22337203685478e+18',  'range' ],
    [ 18446744073709551615,   '18446744073709551615',  'range' ],
    [ 9223372036854775808,    '9223372036854775808',   'range' ],
    [ INF,                    'Inf',                   'range' ],
    [ -(INF),                 '-Inf',                  'range' ],
    [ NAN,                    'NaN',                   'nan' ],
    [ 'abc',                  '"abc"',                 'nan' ],
    [ '12abc',                '"12abc"',               'nan' ],
    [ '0x10',                 '"0x10"',                'nan' ],
    [ '',                     '""',                    'nan' ],
    [ ' ',                    '" "',                   'nan' ],
    [ 'nan',                  '"nan"',                 'nan' ],
    [ 'inf',                  '"inf"',                 'range' ],
    [ '9223372036854775808',  '"9223372036854775808"', 'range' ],
    [ '-9223372036854775809', '"-9223372036854775809"', 'range' ],
    [ '1e19',                 '"1e19"',                'range' ],
    [ 'x' x 100, '"' . 'x' x 40 . '"...', 'nan' ],
    [ Num->new('abc'),        '"abc"',                 'nan' ],
    [ Num->new(2**64),        '1.84467440737096e+19',  'range' ],
);

# [ value, stored in Int ] for every class (Int32 and Int16 then wrap it).
my @GOOD = (
    [ 9223372036854775807,    9223372036854775807 ],
    [ -9223372036854775808,   -9223372036854775808 ],
    [ -2**63,                 -9223372036854775808 ],
    [ 2**62,                  4611686018427387904 ],
    [ '9223372036854775807',  9223372036854775807 ],
    [ '-9223372036854775808', -9223372036854775808 ],
    [ 1.9,                    1 ],
    [ -1.9,                   -1 ],
    [ '2.5',                  2 ],
    [ '-2.5',                 -2 ],
    [ '-0.5',                 0 ],
    [ '1e3',                  1000 ],
    [ ' 12 ',                 12 ],
    [ "12\n",                 12 ],
    [ '+7',                   7 ],
    [ '0 but true',           0 ],
    [ 9.2e18,                 9200000000000000000 ],
    [ Num->new(42),           42 ],
    [ Num->new('43'),         43 ],
    [ Num->new(4.7),          4 ],
);

my %WRAP = (
    'Data::Queue::Shared::Int'   => sub { $_[0] },
    'Data::Queue::Shared::Int32' => sub { unpack 'l', pack 'q', $_[0] },
    'Data::Queue::Shared::Int16' => sub { unpack 's', pack 'q', $_[0] },
);

my %KW;
if ($Data::Queue::Shared::HAVE_KEYWORDS) {
    for my $class (@INT_CLASSES) {
        (my $t = lc $class) =~ s/.*:://;
        $KW{$class} = eval "use $class; sub { q_${t}_push \$_[0], \$_[1] }" or die $@;
    }
}

# Every push form: [ name the croak gives, code pushing $v onto $q ].
sub forms {
    my ($class) = @_;
    my $xsub = $class->can('push');
    my @f = (
        [ push            => sub { $_[0]->push($_[1]) } ],
        [ push            => sub { $xsub->($_[0], $_[1]) } ],
        [ push_wait       => sub { $_[0]->push_wait($_[1], 0) } ],
        [ push_multi      => sub { $_[0]->push_multi(1, $_[1], 2) } ],
        [ push_wait_multi => sub { $_[0]->push_wait_multi(0, 1, $_[1], 2) } ],
    );
    (my $t = lc $class) =~ s/.*:://;
    push @f, [ "q_${t}_push" => $KW{$class} ] if $KW{$class};
    return @f;
}

for my $class (@INT_CLASSES) {
    subtest "$class: refused values" => sub {
        my $q = $class->new(undef, 16);
        for my $f (forms($class)) {
            my ($name, $code) = @$f;
            for my $b (@BAD) {
                my ($v, $shown, $why) = @$b;
                my $reason = $why eq 'nan' ? 'is not a number' : "is out of range $RANGE";
                ok !eval { $code->($q, $v); 1 }, "$name($shown) croaks";
                like $@, qr/^\Q$class->$name: value $shown $reason\E at /, "... naming method, value, range";
                is $q->size, 0, '... and nothing is pushed';
            }
        }
    };

    subtest "$class: accepted values" => sub {
        my $q = $class->new(undef, 64);
        my $wrap = $WRAP{$class};
        for my $f (forms($class)) {
            my ($name, $code) = @$f;
            my $batch = $name =~ /multi/;
            for my $g (@GOOD) {
                my ($v, $want) = @$g;
                ok $code->($q, $v), "$name('$v')";
                is_deeply [ $q->drain ], [ $batch ? (1, $wrap->($want), 2) : $wrap->($want) ],
                    "... stores " . $wrap->($want);
            }
        }
    };
}

subtest 'Int32 and Int16 wrap integers within int64' => sub {
    my @cases = (
        [ 'Data::Queue::Shared::Int32', 2**32 + 5,           5 ],
        [ 'Data::Queue::Shared::Int32', 2**31,               -2147483648 ],
        [ 'Data::Queue::Shared::Int32', '4294967301',        5 ],
        [ 'Data::Queue::Shared::Int32', 9223372036854775807, -1 ],
        [ 'Data::Queue::Shared::Int32', -2**63,              0 ],
        [ 'Data::Queue::Shared::Int32', 2**32 + 5.5,         5 ],
        [ 'Data::Queue::Shared::Int16', 65537,               1 ],
        [ 'Data::Queue::Shared::Int16', 32768,               -32768 ],
        [ 'Data::Queue::Shared::Int16', '-32769',            32767 ],
    );
    for my $c (@cases) {
        my ($class, $v, $want) = @$c;
        my $q = $class->new(undef, 4);
        ok $q->push($v), "$class push($v)";
        is $q->pop, $want, "... comes back as $want";
        is $q->push_multi($v, $v), 2, '... push_multi too';
        is_deeply [ $q->drain ], [ $want, $want ], '... both wrapped';
    }
};

subtest 'a batch refuses before pushing anything, wherever the bad value is' => sub {
    for my $class (@INT_CLASSES) {
        my $q = $class->new(undef, 300);
        $q->push(7);
        for my $at (0, 1, 127, 128, 199) {
            my @v = (1) x 200;
            $v[$at] = 'abc';
            ok !eval { $q->push_multi(@v); 1 }, "$class push_multi, bad value at $at";
            like $@, qr/\Qpush_multi: value "abc" is not a number\E/, '... croaks';
            ok !eval { $q->push_wait_multi(0, @v); 1 }, '... push_wait_multi too';
            is $q->size, 1, '... the queue is as it was';
        }
        is $q->pop, 7, 'the item there before is intact';
    }
};

subtest 'overloading without a conversion is a reference, not its address' => sub {
    {
        package NoConv;
        use overload '+' => sub { 1 }, fallback => 1;
    }
    for my $class (@INT_CLASSES) {
        my $q = $class->new(undef, 4);
        my $o = bless {}, 'NoConv';
        ok !eval { $q->push($o); 1 }, "$class push croaks";
        like $@, qr/^\Q$class->push: cannot push a reference (NoConv=HASH(\E/, '... as a reference';
        ok !eval { $q->push_multi(1, $o); 1 }, '... push_multi too';
        is $q->size, 0, '... nothing pushed';
    }
};

subtest '$! after a croak of the core' => sub {
    my $dir = tmpdir();
    my $junk = "$dir/junk.shm";
    spew($junk, 'x' x 4096);
    $! = 0;
    ok !eval { Data::Queue::Shared::Int->new($junk, 4); 1 }, 'a file that is not a queue croaks';
    like $@, qr/invalid or incompatible queue file/, '... as not a queue';
    is $! + 0, EINVAL, '... with $! EINVAL (not EEXIST from the create attempt)';

    $! = 0;
    ok !eval { Data::Queue::Shared::Str->new($junk, 4); 1 }, 'Str too';
    is $! + 0, EINVAL, '... $! EINVAL';

    $! = 0;
    ok !eval { Data::Queue::Shared::Int->new("$dir/no/such/dir/q.shm", 4); 1 }, 'a missing directory';
    is $! + 0, ENOENT, '... $! is the system error, ENOENT';

    $! = ENOENT;
    ok !eval { Data::Queue::Shared::Int->new(undef, 4)->push('abc'); 1 }, 'an argument croak';
    is $! + 0, ENOENT, '... leaves $! as it was';

    my @inc = map { "-I$_" } grep { !ref } @INC;
    open my $olderr, '>&', \*STDERR or die "dup: $!";
    open STDERR, '>', '/dev/null' or die "reopen: $!";
    system $^X, @inc, '-MData::Queue::Shared', '-e', 'Data::Queue::Shared::Int->new($ARGV[0], 4)', $junk;
    open STDERR, '>&', $olderr or die "restore: $!";
    is $? >> 8, EINVAL, 'die on it exits with EINVAL (22), not 17';
};

subtest 'a file whose size is 0 but has content is not a queue' => sub {
    ok !eval { Data::Queue::Shared::Int->new('/proc/self/status', 4); 1 }, '/proc/self/status croaks';
    like $@, qr{^\QData::Queue::Shared::Int->new: /proc/self/status: invalid or incompatible queue file (its size is 0 bytes, yet reading it gives content: a /proc or /sys file, not a queue)\E},
        '... saying it is not a queue';
    is $! + 0, EINVAL, '... $! EINVAL';
    ok !eval { Data::Queue::Shared::Str->new('/proc/self/status', 4); 1 }, 'Str too';
    like $@, qr/invalid or incompatible queue file/, '... not a queue';

  SKIP: {
        skip 'needs root to drop to another uid', 2 if $> != 0;
        # A user that may not open it for writing: the error is still that
        # it is not a queue, not the permission refused.
        my $pid = spawn(sub {
            POSIX::setgid(65534);
            POSIX::setuid(65534) or die "setuid: $!";
            die "still root\n" if $> == 0;
            eval { Data::Queue::Shared::Int->new('/proc/self/status', 4) };
            die "wrong error: $@" unless $@ =~ /invalid or incompatible queue file \(its size is 0/;
            eval { Data::Queue::Shared::Int->new('/etc/passwd', 4) };
            die "wrong error: $@" unless $@ =~ /invalid or incompatible queue file/;
        });
        reap_ok($pid, 'as another user, the open refused, it still says "not a queue"');
        ok 1, 'child checked /proc/self/status and /etc/passwd';
    }
};

done_testing;
