use strict;
use warnings;
use Test::More;
use Config;
use File::Temp qw(tempdir);
use POSIX ();

# The method short cut (xs/fastcall.h) must be invisible: a call compiled where
# `use Data::Queue::Shared` is in effect behaves exactly as the same call
# compiled without it, and takes the short cut only when the invocant is an
# object of exactly one of our classes whose method is still our XSUB.
#
# This file loads the classes without the hint; each probe is compiled
# twice from the same text by string eval, once with `use
# Data::Queue::Shared;` (fast) and once without (slow), with the same
# `#line`, so croak texts and line numbers can be compared exactly.
use Data::Queue::Shared ();

alarm 120;

my @CLASSES = map "Data::Queue::Shared::$_", qw(Int Int32 Int16 Str);

sub hits  { Data::Queue::Shared::_fastcall_hits() }
sub sites { Data::Queue::Shared::_fastcall_sites($_[0]) }

# $code is the body of a sub; returns (fast, slow) code refs.
sub pair {
    my ($code) = @_;
    my @subs;
    for my $use ('use Data::Queue::Shared;', '') {
        my $sub = eval "$use\n#line 1 \"probe\"\nsub {\n$code\n}";
        die $@ unless $sub;
        push @subs, $sub;
    }
    return @subs;
}

# Run $sub on a fresh queue of $class (made by $make->($class) when given)
# and describe everything observable: results in list and scalar context,
# the error, and what is left in the queue.
sub observe {
    my ($sub, $class, $make) = @_;
    my $q = $make ? $make->($class) : $class->new(undef, 8);
    my (@list, $scalar);
    my $ok_list = eval { @list = $sub->($q); 1 };
    my $err_list = $@;
    my $ok_scalar = eval { $scalar = $sub->($q); 1 };
    my $err_scalar = $@;
    my @left = eval { $q->drain };
    s/0x[0-9a-f]+/0xADDR/g for grep defined, $err_list, $err_scalar;
    return {
        list => [ $ok_list ? @list : () ], err_list => $err_list,
        scalar => $scalar, err_scalar => $err_scalar, left => \@left,
    };
}

# The fast and the slow build of $code agree on every class; the fast one
# took the short cut at least $min_hits times per class.
sub same {
    my ($name, $code, %o) = @_;
    my ($fast, $slow) = pair($code);
    for my $class (@{ $o{classes} || \@CLASSES }) {
        my $h = hits();
        my $f = observe($fast, $class, $o{make});
        my $got_hits = hits() - $h;
        my $s = observe($slow, $class, $o{make});
        is_deeply $f, $s, "$name: $class: fast and slow agree"
            or diag explain { fast => $f, slow => $s };
        if (defined $o{hits}) {
            if ($o{hits}) { cmp_ok $got_hits, '>=', $o{hits}, "$name: $class: short cut taken" }
            else          { is $got_hits, 0, "$name: $class: short cut not taken" }
        }
    }
    return ($fast, $slow);
}

my $dir = tempdir(CLEANUP => 1);

# Run perl on $code (-e) with our @INC and @opts; what it prints, stderr too.
sub run_perl {
    my ($code, @opts) = @_;
    my $file = "$dir/probe.pl";
    open my $fh, '>', $file or die "$file: $!";
    print $fh $code;
    close $fh;
    my $pid = open my $out, '-|';
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        open STDERR, '>&', \*STDOUT or die;
        open STDIN, '<', '/dev/null' or die;
        exec $^X, (map "-I$_", @INC), @opts, '-e', $code;
        die "exec: $!";
    }
    local $/;
    my $text = <$out>;
    close $out;
    return $text;
}

subtest 'the hint is lexical and only method_named calls of our names are marked' => sub {
    my ($fast, $slow) = pair(<<'CODE');
my $q = shift;
$q->push(1); $q->pop; $q->peek; $q->size; $q->push_multi(1, 2);
$q->pop_multi(2); $q->drain; $q->capacity; $q->is_empty; $q->is_full;
$q->push_wait(1, 0); $q->pop_wait(0); $q->push_wait_multi(0, 1); $q->pop_wait_multi(1, 0);
$q->stats; $q->path; my $m = 'pop'; $q->$m; $q->Data::Queue::Shared::Int::pop;
Data::Queue::Shared::Int->pop;
CODE
    is sites($fast), 15, 'use Data::Queue::Shared: our 15 names with a constant name';
    is sites($slow), 0, 'use Data::Queue::Shared (): nothing marked';

    my $class_mod = eval "use Data::Queue::Shared::Str;\nsub { \$_[0]->push(1); \$_[0]->pop }" or die $@;
    is sites($class_mod), 2, 'use of a class module enables it too';
    my $off = eval "use Data::Queue::Shared;\nsub { \$_[0]->push(1); { no Data::Queue::Shared; \$_[0]->pop } }"
        or die $@;
    is sites($off), 1, 'no Data::Queue::Shared turns it off for its block';
    my $after = eval "use Data::Queue::Shared;\n{ no Data::Queue::Shared; }\nsub { \$_[0]->pop }" or die $@;
    is sites($after), 1, '... and only there';
    my $none = eval "sub { \$_[0]->pop }" or die $@;
    is sites($none), 0, 'a scope that never asked for it';
};

subtest 'results, errors and what is left agree; the short cut is taken' => sub {
    same('push+pop', 'my $q = shift; ($q->push(7), $q->push(8), $q->pop, $q->size)', hits => 8);
    same('peek+size', 'my $q = shift; $q->push(3); ($q->peek, $q->size, $q->peek)', hits => 8);
    same('empty pop', 'my $q = shift; ($q->pop, $q->peek, $q->size)', hits => 6);
    same('scalar of a list', 'my $q = shift; $q->push_multi(1, 2, 3); my $n = () = $q->pop_multi(2); $n',
        hits => 4);
    # pp_entersub leaves exactly one value of an XSUB called in scalar
    # context: the last, or undef for none.
    same('list methods in scalar context', 'my $q = shift; $q->push_multi(1, 2, 3);'
        . ' my @a = (scalar($q->pop_multi(2)), "x", scalar($q->drain), "y", scalar($q->pop_multi(5)), "z",'
        . ' scalar($q->pop_wait_multi(2, 0)), "w"); @a', hits => 10);
    same('multi', 'my $q = shift; ($q->push_multi(1 .. 5), $q->pop_multi(2), $q->drain(2), $q->drain)',
        hits => 8);
    same('wait forms', 'my $q = shift; ($q->push_wait(4, 0), $q->push_wait_multi(0, 5, 6),'
        . ' $q->pop_wait(0), $q->pop_wait_multi(5, 0), $q->pop_wait(0))', hits => 10);
    same('full', 'my $q = shift; ($q->push_multi(1 .. 10), $q->push(1), $q->push_wait(1, 0),'
        . ' $q->is_full, $q->is_empty, $q->capacity)', hits => 12);
    same('void context', 'my $q = shift; $q->push(1); $q->push(2); $q->pop; $q->pop_multi(1); $q->size; 42',
        hits => 10);
    same('args of other subs', 'my $q = shift; $q->push(5); my @r = (sprintf("%s", $q->peek), '
        . 'join(",", $q->pop, $q->size)); @r', hits => 6);
    same('front and back', 'my $q = shift; ($q->push("a"), $q->push_front("b"), $q->pop_back, $q->pop,'
        . ' $q->push_front_wait("c", 0), $q->pop_back_wait(0))',
        classes => ['Data::Queue::Shared::Str'], hits => 12);
    same('pop_multi with a byte budget', 'my $q = shift; $q->push_multi(qw(aa bb cc));'
        . ' ($q->pop_multi(3, 4), $q->pop_wait_multi(3, 0, 1))',
        classes => ['Data::Queue::Shared::Str'], hits => 6);
    same('utf8', 'my $q = shift; $q->push("\x{263a}x"); my $v = $q->pop; (utf8::is_utf8($v) ? 1 : 0, $v)',
        classes => ['Data::Queue::Shared::Str'], hits => 4);
    same('values from expressions', 'my $q = shift; my $x = 20; ($q->push($x + 1), $q->push("2" . "2"),'
        . ' $q->pop + 0, $q->pop + 0)', hits => 8);
    # A returned TARG is reused by the next call of the same op: results
    # kept from the first call must not change.
    same('results kept across calls', 'my $q = shift; $q->push_multi(1, 2, 3); my @r;'
        . ' push @r, $q->pop for 1 .. 3; push @r, $q->size for 1 .. 2; @r', hits => 12);
};

subtest 'croak texts and line numbers agree' => sub {
    for my $call (
        '$q->push(undef)', '$q->push([])', '$q->push()', '$q->push(1, 2)', '$q->pop(1)',
        '$q->size(1)', '$q->peek(1, 2)', '$q->push_multi(1, undef, 2)', '$q->pop_multi("abc")',
        '$q->pop_multi()', '$q->push_wait(1, "soon")', '$q->drain("x")', '$q->push_wait_multi()',
        '$q->push({}); 1', '$q->nosuch',
    ) {
        same("croak $call", "my \$q = shift;\n\n$call", hits => undef);
    }
    # The croak happens after the guard, inside the short cut.
    same('croak inside the short cut', "my \$q = shift;\n\$q->push(undef)", hits => 2);
    same('destroyed', "my \$q = shift;\n\$q->DESTROY;\n(\$q->push(1), \$q->pop)",
        make => sub { $_[0]->new(undef, 4) }, hits => 2);
    same('not a queue of ours', "my \$q = shift;\n\$q->pop", make => sub { bless \(my $x = 'abc'), $_[0] },
        hits => 2);
    same('not a queue: hash', "my \$q = shift;\n\$q->size", make => sub { bless {}, $_[0] }, hits => 2);
    same('class name invocant', "my \$q = shift;\n(\$q->pop, \$q->push(1))", make => sub { $_[0] }, hits => 0);
    same('unblessed invocant', "my \$q = shift;\n\$q->pop", make => sub { [] }, hits => 0);
    same('undef invocant', "my \$q = shift;\n\$q->pop", make => sub { undef }, hits => 0);
};

{
    package My::Tie;
    our @log;
    sub TIESCALAR { my ($c, $v) = @_; bless { v => $v }, $c }
    sub FETCH {
        my $s = shift;
        push @log, join '|', map { defined ? $_ : 'undef' } (caller 0)[1, 2, 3], (caller 1)[3];
        return $s->{v};
    }
    sub STORE { }

    package My::Num;
    use overload '0+' => sub { push @My::Tie::log, join '|', (caller 0)[1, 2, 3], (caller 1)[3]; 9 },
        '""' => sub { push @My::Tie::log, join '|', (caller 0)[1, 2, 3], (caller 1)[3]; 'nine' },
        fallback => 1;
}

subtest 'caller inside a tied or overloaded argument, tied invocant' => sub {
    for my $class (@CLASSES) {
        my @logs;
        my ($fast, $slow) = pair(<<'CODE');
my ($q, $v) = @_;
tie my $t, 'My::Tie', $v;
my $o = bless {}, 'My::Num';
(
  $q->push($t),
  $q->push($o),
  $q->pop, $q->pop)
CODE
        for my $sub ($fast, $slow) {
            @My::Tie::log = ();
            my $h = hits();
            my @r = $sub->($class->new(undef, 4), 5);
            push @logs, [ [@r], [@My::Tie::log], hits() - $h ];
        }
        is_deeply $logs[0][0], $logs[1][0], "$class: results agree";
        is_deeply $logs[0][1], $logs[1][1], "$class: FETCH and overload saw the same callers";
        is scalar @{ $logs[0][1] }, 2, "$class: each ran once";
        cmp_ok $logs[0][2], '>=', 4, "$class: short cut taken";
    }
    my $q = Data::Queue::Shared::Int->new(undef, 4);
    my ($fast, $slow) = pair("tie my \$t, 'My::Tie', \$_[0];\n(\$t->push(1), \$t->pop)");
    @My::Tie::log = ();
    my $h = hits();
    my @f = $fast->($q);
    my @flog = @My::Tie::log;
    is hits() - $h, 0, 'tied invocant: short cut not taken';
    @My::Tie::log = ();
    my @s = $slow->($q);
    is_deeply [ \@f, \@flog ], [ \@s, [@My::Tie::log] ], 'tied invocant: same results and FETCHes';
};

{
    package My::Sub;
    our @ISA = ('Data::Queue::Shared::Int');
    our @pushed;
    sub push { my ($q, $v) = @_; CORE::push @pushed, $v; return $q->SUPER::push($v * 10) }

    package My::Plain;
    our @ISA = ('Data::Queue::Shared::Str');

    package My::Other;
    sub new  { bless { items => [] }, shift }
    sub push { my $s = shift; CORE::push @{ $s->{items} }, @_; 'other push' }
    sub pop  { my $s = shift; 'other pop: ' . (CORE::shift @{ $s->{items} } // 'none') }
    sub size { 'other size' }
}

subtest 'other classes, subclasses, can, dynamic names' => sub {
    my ($fast) = pair('my $q = shift; ($q->push(@_), $q->pop, $q->size)');
    my $h = hits();
    is_deeply [ $fast->(My::Other->new, 3) ], [ 'other push', 'other pop: 3', 'other size' ],
        'a same-named method of another class';
    is hits() - $h, 0, '... without the short cut';

    @My::Sub::pushed = ();
    $h = hits();
    is_deeply [ $fast->(My::Sub->new(undef, 4), 4) ], [ 1, 40, 0 ], 'a subclass that overrides push';
    is_deeply \@My::Sub::pushed, [4], '... its push ran';
    is hits() - $h, 0, '... without the short cut';
    is_deeply [ $fast->(My::Plain->new(undef, 4), 'x') ], [ 1, 'x', 0 ], 'a subclass that overrides nothing';

    $h = hits();
    is_deeply [ $fast->(Data::Queue::Shared::Int->new(undef, 4), 6) ], [ 1, 6, 0 ], 'the class itself';
    is hits() - $h, 3, '... with the short cut';

    my ($can) = pair(<<'CODE');
my $q = shift;
$q->push(8);
my $m = 'peek';
($q->can('pop')->($q), $q->push(9), $q->$m, $q->Data::Queue::Shared::Int::pop, $q->size)
CODE
    is_deeply [ $can->(Data::Queue::Shared::Int->new(undef, 4)) ], [ 8, 1, 9, 9, 0 ],
        '->can, $q->$name and a fully qualified method';
};

subtest 'local, redefinition, deletion' => sub {
    my ($fast) = pair('my $q = shift; ($q->push(@_), $q->size)');
    my $q = Data::Queue::Shared::Int->new(undef, 8);
    is_deeply [ $fast->($q, 1) ], [ 1, 1 ], 'before';
    {
        no warnings 'redefine';
        local *Data::Queue::Shared::Int::push = sub { 'localized' };
        my $h = hits();
        is_deeply [ $fast->($q, 2) ], [ 'localized', 1 ], 'local *...::push = sub {...}';
        is hits() - $h, 1, '... push without the short cut, size with it';
        is_deeply [ $fast->(Data::Queue::Shared::Int32->new(undef, 4), 2) ], [ 1, 1 ],
            '... another class is not affected';
    }
    is_deeply [ $fast->($q, 3) ], [ 1, 2 ], 'after the scope, ours again';

    my $orig = \&Data::Queue::Shared::Int::size;
    {
        no warnings 'redefine';
        *Data::Queue::Shared::Int::size = sub { 'redefined' };
    }
    is_deeply [ $fast->($q, 4) ], [ 1, 'redefined' ], 'glob assignment of another sub';
    {
        no warnings 'redefine';
        *Data::Queue::Shared::Int::size = \&Data::Queue::Shared::Int::capacity;
    }
    is_deeply [ $fast->($q, 5) ], [ 1, 8 ], 'glob assignment of another of our XSUBs';
    {
        no warnings 'redefine';
        *Data::Queue::Shared::Int::size = $orig;
    }
    is_deeply [ $fast->($q, 6) ], [ 1, 5 ], 'restored';

    my ($f2, $s2) = pair("my \$q = shift;\n\$q->size");
    my $glob = delete $Data::Queue::Shared::Int::{size};
    my @got = map { eval { $_->($q); 1 } ? 'lived' : $@ } $f2, $s2;
    like $got[0], qr/^Can't locate object method "size" via package "Data::Queue::Shared::Int" at probe line 3\.$/,
        'deleted from the stash: cannot be found';
    is $got[0], $got[1], '... as on the slow path';
    $Data::Queue::Shared::Int::{size} = $glob;
    is $f2->($q), 5, 'put back';

    # undef &sub cannot be undone: in a child perl.
    my $out = run_perl('use Data::Queue::Shared; my $q = Data::Queue::Shared::Int16->new(undef, 4);'
        . ' undef &Data::Queue::Shared::Int16::size; print eval { $q->size; 1 } ? "lived" : $@');
    like $out, qr/^Undefined subroutine &Data::Queue::Shared::Int16::size called at -e line 1\.$/,
        'undef &...::size';
};

subtest 'B::Deparse sees the same code' => sub {
    require B::Deparse;
    my $d = B::Deparse->new;
    my ($fast, $slow) = pair('my $q = shift; $q->push(1); my @r = $q->pop_multi(3); my $s = $q->size + $q->peek;'
        . ' Data::Queue::Shared::Int->pop; my $m = "pop"; $q->$m');
    is sites($fast), 5, 'the short cut is in the fast one';
    # Deparse shows the lexical hint the `use` set, as for any pragma; with
    # that declared as ambient, the text is the slow one's.
    my $text = $d->coderef2text($fast);
    like $text, qr/\$\^H\{'Data::Queue::Shared\/methods'\} = '1'/, 'the hint is shown';
    $d->ambient_pragmas('%^H' => { 'Data::Queue::Shared/methods' => 1 });
    is $d->coderef2text($fast), B::Deparse->new->coderef2text($slow), 'otherwise the same text';
};

subtest 'debugger' => sub {
    # A minimal debugger whose DB::sub records every call: the calls compiled
    # under it must reach it (OPpENTERSUB_DB), so never take the short cut.
    mkdir "$dir/Devel";
    open my $fh, '>', "$dir/Devel/DQSProbe.pm" or die $!;
    print $fh <<'PM';
package DB;
our (@calls, $sub);
sub DB { }
sub sub { push @calls, $sub; no strict 'refs'; &$sub }
1;
PM
    close $fh;
    my $code = 'use Data::Queue::Shared; my $q = Data::Queue::Shared::Int->new(undef, 4);'
        . ' $q->push(3); my $v = $q->pop; print "$v ", join(",", grep /Int::/, @DB::calls),'
        . ' " ", Data::Queue::Shared::_fastcall_hits()';
    is run_perl($code, "-I$dir", '-d:DQSProbe'),
        '3 Data::Queue::Shared::Int::new,Data::Queue::Shared::Int::push,Data::Queue::Shared::Int::pop 0',
        'DB::sub sees every method call';
    local $ENV{PERLDB_OPTS} = 'NonStop=1';
    is run_perl('use Data::Queue::Shared; my $q = Data::Queue::Shared::Str->new(undef, 4);'
        . ' $q->push("a"); print $q->pop, $q->size', '-d'), 'a0', 'perl -d (non-interactive) runs the calls';
};

SKIP: {
    skip 'Devel::NYTProf is not installed', 1 unless eval { require Devel::NYTProf::Data; 1 };
    subtest 'a profiler that replaced pp_entersub sees every call' => sub {
        local $ENV{NYTPROF} = "file=$dir/nytprof.out";
        is run_perl('use Data::Queue::Shared; my $q = Data::Queue::Shared::Int->new(undef, 4);'
            . ' for (1 .. 3) { $q->push($_); $q->pop } print Data::Queue::Shared::_fastcall_hits()',
            '-d:NYTProf'), '0', 'no short cut';
        my $p = Devel::NYTProf::Data->new({ filename => "$dir/nytprof.out", quiet => 1 });
        my $push = $p->subinfo_of('Data::Queue::Shared::Int::push');
        is $push && $push->calls, 3, 'the profiler counted the calls';
    };
}

subtest 'fork' => sub {
    my ($fast) = pair('my $q = shift; $q->push(@_)');
    my $q = Data::Queue::Shared::Int->new(undef, 8);
    my $pid = fork;
    die "fork: $!" unless defined $pid;
    if (!$pid) {
        my $h = hits();
        $fast->($q, $_) for 1 .. 3;
        POSIX::_exit(hits() - $h == 3 ? 0 : 1);
    }
    waitpid $pid, 0;
    is $? >> 8, 0, 'the child took the short cut';
    is_deeply [ $q->drain ], [ 1, 2, 3 ], 'and its pushes arrived';
};

SKIP: {
    skip 'no ithreads', 1 unless $Config{useithreads} && eval { require threads; 1 };
    subtest 'ithreads' => sub {
        my ($fast) = pair('my $q = shift; ($q->push(@_), $q->pop, $q->size)');
        my $t = threads->create(sub {
            my $q = Data::Queue::Shared::Str->new(undef, 4);
            my @r = $fast->($q, 'in thread');
            my @o = $fast->(My::Other->new, 1);
            return join ';', @r, @o;
        });
        is $t->join, '1;in thread;0;other push;other pop: 1;other size', 'a thread gets the same results';
        my $h = hits();
        is_deeply [ $fast->(Data::Queue::Shared::Int->new(undef, 4), 2) ], [ 1, 2, 0 ], 'main after the thread';
        is hits() - $h, 3, '... still takes the short cut';
    };
}

done_testing;
