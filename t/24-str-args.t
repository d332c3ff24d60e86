# Argument safety of the Str queue: undef and plain references croak,
# overloaded and tied values are converted exactly once and before the lock
# is taken, an exception thrown while converting reaches the caller
# unchanged with nothing of the batch enqueued and the lock free, and
# argument magic that destroys the queue object makes the method croak
# instead of touching freed memory.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Magic;
use Test::More;
use Scalar::Util qw(refaddr);

use Data::Queue::Shared::Str;

watchdog(90);

my $CLASS = 'Data::Queue::Shared::Str';
my $dir   = tmpdir();

# Each pushing method, called with the value $v (and a timeout where it takes one).
my %PUSHERS = (
    push            => sub { my ($q, $v) = @_; $q->push($v) },
    push_front      => sub { my ($q, $v) = @_; $q->push_front($v) },
    push_wait       => sub { my ($q, $v) = @_; $q->push_wait($v, 1) },
    push_front_wait => sub { my ($q, $v) = @_; $q->push_front_wait($v, 1) },
    push_multi      => sub { my ($q, $v) = @_; $q->push_multi('first', $v, 'last') },
    push_wait_multi => sub { my ($q, $v) = @_; $q->push_wait_multi(1, 'first', $v, 'last') },
);
my @PUSHERS = sort keys %PUSHERS;

# Check, from another process, that the queue's lock is free: the child
# pushes and pops within its own short alarm.
sub lock_free_ok {
    my ($q, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $n = $q->size;
    my $pid = spawn(sub {
        $q->push('probe') or die "push failed\n";
        my @v = $q->pop_back;
        $v[0] eq 'probe' or die "pop_back returned '$v[0]'\n";
    }, timeout => 10);
    my $status = reap($pid);
    ok($status == 0 && $q->size == $n, "$name: another process can lock the queue at once")
        or diag(sprintf 'child exit %d, signal %d (SIGALRM = it blocked on the lock)',
                $status >> 8, $status & 127);
}

subtest 'undef croaks' => sub {
    my $q = $CLASS->new(undef, 8);
    for my $m (@PUSHERS) {
        eval { $PUSHERS{$m}->($q, undef) };
        like($@, qr/^\Q$CLASS\E->\Q$m\E: .*undef/, "$m(undef) croaks");
        unlike($@, qr/\n./, "$m: one-line message");
        is($q->size, 0, "$m: nothing pushed");
    }
    my $x;
    eval { $q->push($x) };
    like($@, qr/undef/, 'an undefined variable croaks too');
    ok($q->push('ok'), 'the queue still works');
    $q->clear;
};

subtest 'plain references croak' => sub {
    my $q = $CLASS->new(undef, 8);
    my %refs = (
        'array ref'  => [1, 2],
        'hash ref'   => { a => 1 },
        'scalar ref' => \'text',
        'code ref'   => sub { 1 },
        'ref ref'    => \\1,
        'blessed object without overloading' => bless({}, 'Plain::Object'),
    );
    for my $what (sort keys %refs) {
        for my $m (@PUSHERS) {
            eval { $PUSHERS{$m}->($q, $refs{$what}) };
            like($@, qr/^\Q$CLASS\E->\Q$m\E: .*reference/, "$m of a $what croaks");
            is($q->size, 0, "$m of a $what: nothing pushed");
        }
    }
};

subtest 'overloaded "" is pushed as its string, converted once' => sub {
    my $q = $CLASS->new(undef, 16);
    my $calls = 0;
    my $obj = Stringy->new(\$calls, 'I am a string');
    for my $m (@PUSHERS) {
        $calls = 0;
        ok($PUSHERS{$m}->($q, $obj), "$m of an object with \"\" overloading");
        is($calls, 1, "$m: \"\" called once");
        my @got = $q->drain;
        my ($s) = grep { $_ ne 'first' && $_ ne 'last' } @got;
        is($s, 'I am a string', "$m: its string was pushed");
        ok(!ref $s, "$m: a plain string comes back");
    }

    my $wide = Stringy->new(\$calls, "\x{263a} wide");
    $q->push($wide);
    my $v = $q->pop;
    ok($v eq "\x{263a} wide" && utf8::is_utf8($v), 'the UTF-8 flag of the overloaded string is kept');

    my $num = Numberish->new(17);
    $q->push($num);
    is($q->pop, '17', 'an object with only 0+ and fallback is pushed as its string form');
};

subtest 'tied scalars are fetched exactly once' => sub {
    my $q = $CLASS->new(undef, 16);
    my $fetches = 0;
    tie my $t, 'Counting::Scalar', \$fetches, 'tied value';
    for my $m (@PUSHERS) {
        $fetches = 0;
        ok($PUSHERS{$m}->($q, $t), "$m of a tied scalar");
        is($fetches, 1, "$m: fetched once");
        my @got = grep { $_ ne 'first' && $_ ne 'last' } $q->drain;
        is_deeply(\@got, ['tied value'], "$m: the fetched value was pushed");
    }

    my $cfetch = 0;
    tie my $count, 'Counting::Scalar', \$cfetch, 2;
    $q->push_multi(1 .. 5);
    is_deeply([$q->pop_multi($count)], [1, 2], 'a tied count is honoured');
    is($cfetch, 1, 'count fetched once');
    $cfetch = 0;
    is_deeply([$q->drain($count)], [3, 4], 'a tied drain max is honoured');
    is($cfetch, 1, 'max fetched once');
    my $bfetch = 0;
    tie my $budget, 'Counting::Scalar', \$bfetch, 1;
    $q->push_multi('aa', 'bb');
    is_deeply([$q->pop_multi(5, $budget)], [5], 'a tied byte budget is honoured');
    is($bfetch, 1, 'budget fetched once');
    $q->clear;

    my $tfetch = 0;
    tie my $timeout, 'Counting::Scalar', \$tfetch, 0;
    is($q->pop_wait($timeout), undef, 'a tied timeout is honoured');
    is($tfetch, 1, 'timeout fetched once');

    my $vfetch = 0;
    tie my $arena, 'Counting::Scalar', \$vfetch, 8192;
    is($CLASS->new(undef, 4, $arena)->stats->{arena_cap}, 8192, 'new: a tied arena size is honoured');
    is($vfetch, 1, 'new: arena fetched once');
    $vfetch = 0;
    is($CLASS->new_memfd('tied', 4, $arena)->stats->{arena_cap}, 8192,
       'new_memfd: a tied arena size is honoured');
    is($vfetch, 1, 'new_memfd: arena fetched once');

    my $capfetch = 0;
    tie my $cap, 'Counting::Scalar', \$capfetch, 8;
    is($CLASS->new(undef, $cap)->capacity, 8, 'a tied capacity is honoured');
    is($capfetch, 1, 'capacity fetched once');

    my $pfetch = 0;
    tie my $path, 'Counting::Scalar', \$pfetch, "$dir/tied.shm";
    my $pq = $CLASS->new($path, 4);
    is($pq->path, "$dir/tied.shm", 'a tied path is honoured');
    is($pfetch, 1, 'path fetched once');

    my $mfetch = 0;
    tie my $mode, 'Counting::Scalar', \$mfetch, 0640;
    $CLASS->new("$dir/tied-mode.shm", 4, 4096, $mode);
    is(sprintf('%04o', (stat "$dir/tied-mode.shm")[2] & 07777), sprintf('%04o', 0640 & ~umask),
       'a tied mode is honoured');
    is($mfetch, 1, 'mode fetched once');

    my $nfetch = 0;
    tie my $name, 'Counting::Scalar', \$nfetch, 'dqs-tied-name';
    my $nq = $CLASS->new_memfd($name, 4);
    like(readlink('/proc/self/fd/' . $nq->memfd) // '', qr/dqs-tied-name/, 'a tied memfd name is honoured');
    is($nfetch, 1, 'name fetched once');
};

subtest 'arguments are converted before the lock is taken' => sub {
    # The conversion itself uses the queue. If the lock were held while
    # converting, this would deadlock (the watchdog in the child catches
    # it); done first, the inner push lands before the whole batch.
    for my $m (@PUSHERS) {
        my $q = $CLASS->new(undef, 16);
        my $pid = spawn(sub {
            my $obj = Stringy->new(\my $calls, sub { $q->push('inner') or die "inner push\n"; 'outer' });
            $PUSHERS{$m}->($q, $obj) or die "$m returned false\n";
        }, timeout => 10);
        my $status = reap($pid);
        is($status, 0, "$m: a conversion that pushes to the same queue does not deadlock")
            or diag(sprintf 'child exit %d, signal %d', $status >> 8, $status & 127);
        my @got = $q->drain;
        my @want = $m =~ /multi/ ? qw(inner first outer last)
                 : $m =~ /front/ ? qw(outer inner)
                 :                 qw(inner outer);
        is_deeply(\@got, \@want, "$m: the conversion ran before the item was queued");
    }
};

subtest 'an exception while converting reaches the caller unchanged' => sub {
    my $q = $CLASS->new(undef, 16);
    $q->push('before');
    my %bombs = (
        'overloaded "" dying with a string' => sub { Stringy->new(\my $c, sub { die "no string here\n" }) },
        'tied FETCH dying with a string'    => sub { tie my $t, 'Dying::Scalar', "fetch failed\n"; \$t },
        'overloaded "" dying with an object' => sub {
            my $e = bless { why => 'object' }, 'My::Error';
            Stringy->new(\my $c, sub { die $e });
        },
    );
    for my $what (sort keys %bombs) {
        for my $m (@PUSHERS) {
            my $bomb = $bombs{$what}->();
            my $arg  = ref $bomb eq 'SCALAR' ? $bomb : \$bomb;
            my $want = $what =~ /object/ ? undef : $what =~ /FETCH/ ? "fetch failed\n" : "no string here\n";
            my $before = $q->stats;
            my $ok = eval { $PUSHERS{$m}->($q, $$arg); 1 };
            my $err = $@;
            ok(!$ok, "$what, $m: dies");
            if ($what =~ /object/) {
                ok(ref $err && ref $err eq 'My::Error' && $err->{why} eq 'object',
                   "$what, $m: the same exception object arrives")
                    or diag("got: $err");
            }
            else {
                is($err, $want, "$what, $m: the exception is unchanged");
            }
            my $after = $q->stats;
            is($q->size, 1, "$what, $m: nothing of the batch was queued");
            is($after->{push_ok}, $before->{push_ok}, "$what, $m: push_ok unchanged");
            is($after->{arena_used}, $before->{arena_used}, "$what, $m: arena_used unchanged");
            is($after->{lock_acquired}, $before->{lock_acquired},
               "$what, $m: the lock was never taken");
        }
    }
    lock_free_ok($q, 'after the exceptions');
    my $la = $q->stats->{lock_acquired};
    ok($q->push('after'), 'push works at once');
    ok($q->stats->{lock_acquired} > $la, 'and takes the lock (lock_acquired grows)');
    is_deeply([$q->drain], ['before', 'after'], 'contents');
};

subtest 'an exception in the middle of a long batch' => sub {
    my $q = $CLASS->new(undef, 256);
    my $bomb = Stringy->new(\my $c, sub { die "item 150 is bad\n" });
    my @batch = ((map { "x$_" } 1 .. 149), $bomb, (map { "y$_" } 1 .. 50));
    eval { $q->push_multi(@batch) };
    is($@, "item 150 is bad\n", 'push_multi of 200 with the 150th dying: exception unchanged');
    is($q->size, 0, 'none of the 149 items before it was queued');
    eval { $q->push_wait_multi(5, @batch) };
    is($@, "item 150 is bad\n", 'push_wait_multi: the same');
    is($q->size, 0, 'nothing queued');
    lock_free_ok($q, 'after the long batches');
    is($q->push_multi(map { "z$_" } 1 .. 200), 200, 'a full batch works afterwards');
};

subtest 'magic that destroys the queue object makes the method croak' => sub {
    # Each case runs in a child: a crash shows as a signal, not a lost test.
    my %cases = (
        'push: "" undefs the only reference' => sub {
            my $q = $CLASS->new(undef, 8);
            my $obj = Stringy->new(\my $c, sub { undef $q; 'x' });
            $q->push($obj);
        },
        'push: "" calls DESTROY' => sub {
            my $q = $CLASS->new(undef, 8);
            my $obj = Stringy->new(\my $c, sub { $q->DESTROY; 'x' });
            $q->push($obj);
        },
        'push_front: "" undefs the only reference' => sub {
            my $q = $CLASS->new_memfd('dqs-kill', 8);
            my $obj = Stringy->new(\my $c, sub { undef $q; 'x' });
            $q->push_front($obj);
        },
        'push_wait: "" undefs the only reference' => sub {
            my $q = $CLASS->new("$dir/kill1.shm", 8);
            my $obj = Stringy->new(\my $c, sub { undef $q; 'x' });
            $q->push_wait($obj, 1);
        },
        'push_front_wait: "" calls DESTROY' => sub {
            my $q = $CLASS->new(undef, 8);
            my $obj = Stringy->new(\my $c, sub { $q->DESTROY; 'x' });
            $q->push_front_wait($obj);
        },
        'push_multi: the third item undefs the only reference' => sub {
            my $q = $CLASS->new(undef, 8);
            my $obj = Stringy->new(\my $c, sub { undef $q; 'x' });
            $q->push_multi('a', 'b', $obj, 'd');
        },
        'push_multi: the last item calls DESTROY' => sub {
            my $q = $CLASS->new(undef, 8);
            my $obj = Stringy->new(\my $c, sub { $q->DESTROY; 'x' });
            $q->push_multi(('a') x 5, $obj);
        },
        'push_wait_multi: a tied FETCH undefs the only reference' => sub {
            my $q = $CLASS->new(undef, 8);
            tie my $t, 'Callback::Scalar', sub { undef $q; 'x' };
            $q->push_wait_multi(1, 'a', $t);
        },
        'push_wait_multi: the timeout calls DESTROY' => sub {
            my $q = $CLASS->new(undef, 8);
            tie my $t, 'Callback::Scalar', sub { $q->DESTROY; 1 };
            $q->push_wait_multi($t, 'a');
        },
        'pop_multi: the count undefs the only reference' => sub {
            my $q = $CLASS->new(undef, 8);
            $q->push_multi('a', 'b');
            tie my $t, 'Callback::Scalar', sub { undef $q; 2 };
            $q->pop_multi($t);
        },
        'pop_multi: the byte budget calls DESTROY' => sub {
            my $q = $CLASS->new(undef, 8);
            $q->push_multi('a', 'b');
            tie my $t, 'Callback::Scalar', sub { $q->DESTROY; 100 };
            $q->pop_multi(2, $t);
        },
        'pop_wait: the timeout undefs the only reference' => sub {
            my $q = $CLASS->new(undef, 8);
            $q->push('a');
            tie my $t, 'Callback::Scalar', sub { undef $q; 1 };
            $q->pop_wait($t);
        },
        'pop_back_wait: the timeout calls DESTROY' => sub {
            my $q = $CLASS->new(undef, 8);
            tie my $t, 'Callback::Scalar', sub { $q->DESTROY; 0.1 };
            $q->pop_back_wait($t);
        },
        'pop_wait_multi: the timeout calls DESTROY' => sub {
            my $q = $CLASS->new(undef, 8);
            $q->push('a');
            tie my $t, 'Callback::Scalar', sub { $q->DESTROY; 1 };
            $q->pop_wait_multi(2, $t);
        },
        'drain: the max undefs the only reference' => sub {
            my $q = $CLASS->new(undef, 8);
            $q->push_multi('a', 'b');
            tie my $t, 'Callback::Scalar', sub { undef $q; 5 };
            $q->drain($t);
        },
    );
    for my $name (sort keys %cases) {
        my $pid = spawn(sub {
            my $ok = eval { $cases{$name}->(); 1 };
            die "did not croak\n" if $ok;
            die "croaked with an empty message\n" unless $@;
            # the process is still sound: a fresh queue works
            my $q = $CLASS->new(undef, 4);
            $q->push('alive') && $q->pop eq 'alive' or die "a new queue does not work\n";
        }, timeout => 10);
        my $status = reap($pid);
        is($status, 0, "$name: croaks, no crash")
            or diag(sprintf 'child exit %d, signal %d', $status >> 8, $status & 127);
    }
};

subtest 'missing arguments croak' => sub {
    my $q = $CLASS->new(undef, 4);
    for my $m (qw(push push_front push_wait push_front_wait)) {
        eval { $q->$m() };
        ok($@, "$m with no value croaks");
    }
    eval { $q->push_wait_multi() };
    ok($@, 'push_wait_multi with no timeout croaks');
    eval { $q->pop_multi() };
    ok($@, 'pop_multi with no count croaks');
    eval { $CLASS->new() };
    ok($@, 'new with no arguments croaks');
    is($q->size, 0, 'nothing pushed');
};

done_testing;
