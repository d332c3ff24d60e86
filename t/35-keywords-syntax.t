# How the keywords parse inside larger expressions (named unary precedence
# for the one-argument keywords, two terms for push, optional parentheses),
# and that each compiles to its own op with no sub call or method lookup.
# Skipped when built without XS::Parse::Keyword.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use B ();

BEGIN {
    require Data::Queue::Shared;
    plan skip_all => 'built without the keyword API (XS::Parse::Keyword)'
        unless $Data::Queue::Shared::HAVE_KEYWORDS;
}

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(60);

my $q = Data::Queue::Shared::Int->new(undef, 16);
my $s = Data::Queue::Shared::Str->new(undef, 16);

subtest 'parsing inside expressions' => sub {
    $q->clear;
    ok(q_int_push($q, 1), 'with parentheses');
    is(q_int_size($q), 1, 'q_int_size($q)');
    is(q_int_pop($q) + 1, 2, 'q_int_pop($q) + 1: the parentheses end the argument');
    q_int_push $q, $_ for 1 .. 3;
    is(q_int_size $q, 3, 'statement modifier: three pushes');
    ok(q_int_size $q == 3, 'q_int_size $q == 3 compares the size (named unary precedence)');
    is(q_int_pop $q || 'none', 1, 'q_int_pop $q || ... applies || to the result');
    my @two = (q_int_pop $q, q_int_pop $q);
    is_deeply(\@two, [2, 3], 'two pops in one list');
    is(q_int_pop $q // 'empty', 'empty', '// on an empty pop');

    my %h = (q => $q);
    my $x = 20;
    q_int_push $h{q}, $x * 2 + 1;
    is(q_int_peek $h{q}, 41, 'any expression for the queue and the value');
    my $ok = q_int_push $q, 5 or die;
    ok($ok, 'my $ok = q_int_push $q, 5 or die: the result is assigned');
    my @got;
    while (defined(my $v = q_int_pop $q)) { push @got, $v }
    is_deeply(\@got, [41, 5], 'while (defined(my $v = q_int_pop $q))');

    my $q32 = Data::Queue::Shared::Int32->new(undef, 4);
    q_int_push $q, 9;
    q_int32_push $q32, q_int_pop $q;
    is(q_int32_pop $q32, 9, 'a keyword as the argument of another');

    q_str_push $s, 'a' . 'b' x 2;
    is(q_str_pop $s, 'abb', 'string expressions');
    my @list = map { q_int_push($q, $_); q_int_pop $q } 1 .. 3;
    is_deeply(\@list, [1, 2, 3], 'results are copied, not aliased, by map');
    is_deeply([q_int_pop $q], [undef], 'list context: one undef when empty');
};

# Every op name in a sub's tree.
sub op_names {
    my ($cv) = @_;
    my @names;
    my $walk;
    $walk = sub {
        my ($o) = @_;
        return unless $$o;
        push @names, $o->name;
        if ($o->flags & B::OPf_KIDS()) {
            for (my $k = $o->first; $$k; $k = $k->sibling) { $walk->($k) }
        }
    };
    $walk->(B::svref_2object($cv)->ROOT);
    return @names;
}

subtest 'each keyword is its own op: no sub call' => sub {
    my %subs = (
        int   => sub { q_int_push $_[0], 1;   q_int_pop $_[0];   q_int_peek $_[0];   q_int_size $_[0] },
        int32 => sub { q_int32_push $_[0], 1; q_int32_pop $_[0]; q_int32_peek $_[0]; q_int32_size $_[0] },
        int16 => sub { q_int16_push $_[0], 1; q_int16_pop $_[0]; q_int16_peek $_[0]; q_int16_size $_[0] },
        str   => sub { q_str_push $_[0], 1;   q_str_pop $_[0];   q_str_peek $_[0];   q_str_size $_[0] },
    );
    for my $tag (sort keys %subs) {
        my @names = op_names($subs{$tag});
        my %seen = map { $_ => 1 } @names;
        ok($seen{"q_${tag}_$_"}, "an op named q_${tag}_$_") for qw(push pop peek size);
        ok(!grep({ /^(?:entersub|method|method_named|gv)$/ } @names),
           "q_${tag}_*: no entersub, method lookup or glob") or diag("@names");
    }
    my @method = op_names(sub { $_[0]->push(1) });
    ok((grep { $_ eq 'entersub' } @method), 'fixture: a method call does have an entersub');
};

done_testing;
