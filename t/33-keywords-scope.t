# Turning the keywords on and off: $HAVE_KEYWORDS, the classes' import and
# unimport, and lexical scoping (use enables, no disables, the end of a
# block ends either, one class's use enables only its own keywords). Every
# keyword use here is compiled by a string eval, so this file runs (and
# checks the imports) without the keyword API as well.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

# Loaded without import: no keyword is enabled in this file until a `use`
# below.
BEGIN {
    require Data::Queue::Shared::Int;
    require Data::Queue::Shared::Str;
}

watchdog(60);

my $HAVE = $Data::Queue::Shared::HAVE_KEYWORDS;

subtest '$HAVE_KEYWORDS' => sub {
    ok(defined $HAVE && ($HAVE eq '1' || $HAVE eq '0'), "is 0 or 1 ($HAVE)");
};

subtest 'the classes import nothing' => sub {
    for my $class (qw(Int Int32 Int16 Str)) {
        ok(!eval "use Data::Queue::Shared::$class qw(push); 1", "use ...::$class qw(push) fails");
        like($@, qr/Data::Queue::Shared::$class does not export anything/, '... saying why');
        ok(!eval "no Data::Queue::Shared::$class qw(push); 1", "no ...::$class qw(push) fails");
        ok(eval "use Data::Queue::Shared::$class; no Data::Queue::Shared::$class; 1",
           'use and no without arguments compile') or diag($@);
    }
};

if (!$HAVE) {
    pass('built without the keyword API: nothing to scope');
    done_testing;
    exit 0;
}

# Ordinary subs with the keywords' names: what the names mean wherever the
# keywords are not enabled.
sub q_int_pop { 'the sub q_int_pop' }
sub q_str_pop { 'the sub q_str_pop' }

my $q = Data::Queue::Shared::Int->new(undef, 16);
my $s = Data::Queue::Shared::Str->new(undef, 16);

subtest 'lexical scoping' => sub {
    $q->clear;
    $q->push(5);
    is(eval 'q_int_pop($q)', 'the sub q_int_pop', 'before any use: an ordinary sub call');
    is($q->size, 1, '... which left the queue alone');
    {
        use Data::Queue::Shared::Int;
        is(eval 'q_int_pop($q)', 5, 'after use: the keyword') or diag($@);
        is(eval 'q_str_pop($s)', 'the sub q_str_pop', "use of Int does not enable Str's keywords");
        {
            no Data::Queue::Shared::Int;
            $q->push(6);
            is(eval 'q_int_pop($q)', 'the sub q_int_pop', 'after no: an ordinary sub call again');
            {
                use Data::Queue::Shared::Int;
                is(eval 'q_int_pop($q)', 6, 'use again in an inner block: the keyword');
            }
            is(eval 'q_int_pop($q)', 'the sub q_int_pop', 'the inner block ended: off');
        }
        $q->push(7);
        is(eval 'q_int_pop($q)', 7, 'the block with no ended: on again');
        is(eval 'no strict "refs"; q_int_pop $q; 1', 1, 'compiles without parentheses too');
    }
    is(eval 'q_int_pop($q)', 'the sub q_int_pop', 'after the block: an ordinary sub call');
    is(eval 'package Elsewhere; main::q_int_pop($q)', 'the sub q_int_pop',
       'a fully qualified name is never the keyword');
    ok(!eval 'use strict; my $v = q_int_peek $q; 1',
       'where not enabled, q_int_peek $q is not a keyword (no such method)');
    {
        use Data::Queue::Shared::Str;
        $s->push('x');
        is(eval 'q_str_pop $s', 'x', 'use of Str enables q_str_pop');
        is(eval 'q_int_pop($q)', 'the sub q_int_pop', "but not Int's keywords");
    }
};

done_testing;
