# Object lifetime: DESTROY is idempotent and never touches shared state,
# methods croak on destroyed or foreign objects, children destroying their
# copy leave the parent's queue alone, CLONE_SKIP, global destruction.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Files qw(fd_count maps_count);
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(60);

my $dir = tmpdir();
my $seq = 0;

for my $class (@INT_CLASSES) {
    subtest "$class: DESTROY is idempotent; methods croak afterwards" => sub {
        for my $kind (qw(anon file memfd)) {
            my $q = $kind eq 'anon' ? $class->new(undef, 4)
                  : $kind eq 'file' ? $class->new("$dir/d" . $seq++ . '.shm', 4)
                  :                   $class->new_memfd('dqs-destroy', 4);
            $q->push(1);
            $q->DESTROY;
            ok(eval { $q->DESTROY; 1 }, "$kind: a second DESTROY is harmless");
            for my $call ([push => 1], ['pop'], ['size'], ['stats'], [pop_wait => 0],
                          [push_multi => 1, 2], ['capacity'], ['clear'], ['memfd']) {
                my ($m, @args) = @$call;
                my $ok = eval { $q->$m(@args); 1 };
                ok(!$ok && $@, "$kind: $m after DESTROY croaks");
            }
            undef $q;    # the real DESTROY from refcounting: still harmless
            pass("$kind: freeing a destroyed object is harmless");
        }
    };

    subtest "$class: methods croak on objects of the wrong type" => sub {
        no strict 'refs';
        my $push = \&{"${class}::push"};
        my $size = \&{"${class}::size"};
        my $type_re = qr/is not of type \Q$class\E\b/;

        eval { $push->(bless({}, 'Foo'), 1) };
        like($@, $type_re, 'a blessed hash of another class');
        eval { $size->(bless(\my $x, 'Foo')) };
        like($@, $type_re, 'a blessed scalar of another class');
        eval { $size->([]) };
        like($@, $type_re, 'an unblessed array ref');
        eval { $size->(\42) };
        like($@, $type_re, 'an unblessed scalar ref');
        eval { $size->($class) };
        like($@, $type_re, 'the class name');
        eval { $size->(undef) };
        like($@, $type_re, 'undef');
        for my $other (grep { $_ ne $class } @INT_CLASSES) {
            my $o = $other->new(undef, 4);
            eval { $push->($o, 1) };
            like($@, $type_re, "an $other object");
            is($o->size, 0, '... which is untouched');
        }
        eval { $class->size };
        like($@, $type_re, 'a class method call of an instance method');
    };

    subtest "$class: DESTROY on foreign objects does nothing" => sub {
        no strict 'refs';
        my $destroy = \&{"${class}::DESTROY"};
        my $h = bless { a => 1 }, 'Foo';
        ok(eval { $destroy->($h); 1 }, 'DESTROY on a blessed hash of another class lives')
            or diag($@);
        is($h->{a}, 1, 'and leaves it alone');
        my $x = 7;
        ok(eval { $destroy->(bless(\$x, 'Foo')); 1 }, 'on a blessed scalar')
            or diag($@);
        is($x, 7, 'which keeps its value');
    };

    subtest "$class: DESTROY in a forked child does not affect the parent" => sub {
        for my $kind (qw(anon file memfd)) {
            my $path = "$dir/fork" . $seq++ . '.shm';
            my $q = $kind eq 'anon' ? $class->new(undef, 8)
                  : $kind eq 'file' ? $class->new($path, 8)
                  :                   $class->new_memfd('dqs-fork', 8);
            $q->push_multi(1, 2, 3);
            my $pid = spawn(sub {
                $q->push(4) or die "push\n";
                $q->DESTROY;
                undef $q;
            });
            reap_ok($pid, "$kind: child destroyed its handle and exited");

            # A child that exits normally, destroying its copy in global
            # destruction and running END blocks.
            my $pid2 = fork // die "fork: $!";
            if (!$pid2) {
                $q->push(5);
                exit 0;
            }
            waitpid($pid2, 0);
            is($?, 0, "$kind: child exiting normally");

            is($q->size, 5, "$kind: parent's queue keeps every item");
            is_deeply([$q->drain], [1 .. 5], "$kind: parent drains them in order");
            ok($q->push(6) && $q->pop == 6, "$kind: parent can still push and pop");
            ok(-e $path, "$kind: the child did not unlink the file") if $kind eq 'file';
            my $s = $q->stats;
            is($s->{push_ok}, 6, "$kind: stats survive");
        }
    };

    subtest "$class: CLONE_SKIP" => sub {
        is($class->CLONE_SKIP, 1, "$class->CLONE_SKIP is 1");
    };
}

subtest 'global destruction with live queues is clean' => sub {
    my @inc = map { "-I$_" } @INC;
    my $path = "$dir/global.shm";
    my $code = <<'PERL';
use strict; use warnings;
use Data::Queue::Shared::Int; use Data::Queue::Shared::Int32; use Data::Queue::Shared::Int16;
our @keep;
my $path = shift;
for my $c (qw(Data::Queue::Shared::Int Data::Queue::Shared::Int32 Data::Queue::Shared::Int16)) {
    my $q = $c->new(undef, 4); $q->push(1);
    my $cycle = { q => $q }; $cycle->{self} = $cycle;      # freed only in global destruction
    push @keep, $c->new_memfd('g', 4), $cycle;
}
our $file = Data::Queue::Shared::Int->new($path, 4);
$file->push(9);
print "done\n";
PERL
    my $script = "$dir/global.pl";
    open my $fh, '>', $script or die;
    print {$fh} $code;
    close $fh or die;
    my $out = qx{$^X @inc $script $path 2>&1};
    is($?, 0, 'exit status 0');
    is($out, "done\n", 'no output besides ours (no warnings, no crash)');
    my $q = Data::Queue::Shared::Int->new($path, 4);
    is($q->pop, 9, 'the file queue written before global destruction is intact');
};

subtest 'creating and destroying many handles leaks no fds or mappings' => sub {
    my $path = "$dir/many.shm";
    for my $class (@INT_CLASSES) { my $q = $class->new($path . $class, 4) }    # warm up
    my ($f0, $m0) = (fd_count(), maps_count());
    for my $class (@INT_CLASSES) {
        for (1 .. 100) {
            my @q = ($class->new(undef, 16), $class->new($path . $class, 4),
                     $class->new_memfd('many', 16));
            $q[0]->push(1);
            $q[1]->DESTROY;
        }
    }
    is(fd_count(), $f0, 'no fd leaked');
    ok(maps_count() <= $m0 + 2, 'no mapping leaked') or diag(maps_count() . " maps, was $m0");
};

done_testing;
