# Documented behaviours no other test touches: lock_timeout on every Str
# call it governs (and across fork), $! after each kind of failure, a real
# ithread seeing CLONE_SKIP, Str->new with an undef arena and a mode, Str
# batch operations killed at the commit's kill points, and the usage
# message of pop_multi without a count.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use Config;
use Errno ();
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(120, process => 1);

my $CLASS = 'Data::Queue::Shared::Str';
my $dir   = tmpdir();
my $seq   = 0;



# Every call lock_timeout governs, with what it returns on a timeout.
my @GOVERNED = (
    [push       => sub { $_[0]->push('y') }],
    [push_front => sub { $_[0]->push_front('y') }],
    [pop        => sub { $_[0]->pop }],
    [pop_back   => sub { $_[0]->pop_back }],
    [peek       => sub { $_[0]->peek }],
    [push_multi => sub { $_[0]->push_multi('y', 'z') }],
    [pop_multi  => sub { my @l = $_[0]->pop_multi(2); scalar @l }],
    [drain      => sub { my @l = $_[0]->drain; scalar @l }],
    [clear      => sub { $_[0]->clear }],
);

subtest 'lock_timeout governs every call it names, here and in a forked child' => sub {
    my $path = "$dir/t" . $seq++ . '.shm';
    my $q = $CLASS->new($path, 16);
    $q->push('x');
    my $holder = doomed_at($CLASS, $path, 'str_lock_stop', sub { $_[0]->push_front('held') });
    ok(wait_for(sub { proc_state($holder) eq 'T' }, 10), 'a holder stopped with the lock');
    $q->lock_timeout(0.1);
    for my $call (@GOVERNED) {
        my ($name, $code) = @$call;
        $! = 0;
        my $r = $code->($q);
        ok(!$r, "$name returns false (or nothing) on a lock it cannot get");
        ok($!{ETIMEDOUT}, "$name sets \$! to ETIMEDOUT") or diag("\$! = $!");
    }
    # The child inherits the handle with its setting: it gives up too.
    my $out = "$dir/child" . $seq++;
    my $kid = spawn(sub {
        my @bad;
        for my $call (@GOVERNED) {
            my ($name, $code) = @$call;
            $! = 0;
            my $r = $code->($q);
            push @bad, $name if $r || !$!{ETIMEDOUT};
        }
        die "in the child: @bad did not time out\n" if @bad;
        $q->lock_timeout == 0.1 or die "the child's lock_timeout is " . ($q->lock_timeout // 'undef') . "\n";
    }, timeout => 30);
    reap_ok($kid, 'a forked child keeps the lock timeout: every call times out there too');
    kill 'KILL', $holder;
    reap($holder);
    is($q->pop, 'x', 'after the holder is killed the lock is taken over');
    $q->unlink;
};

subtest '$! after each kind of failure' => sub {
    my $q = $CLASS->new(undef, 2, 4096);
    $q->lock_timeout(5);
    $q->push_multi('a', 'b');
    $! = Errno::EINTR;
    ok(!$q->push('c'), 'push on a full queue fails');
    is($! + 0, 0, 'with a lock timeout set, a full queue sets $! to 0');
    $! = Errno::EINTR;
    ok(!$q->push_front('c'), 'push_front on a full queue fails');
    is($! + 0, 0, 'and sets $! to 0');
    $q->clear;
    $! = Errno::EINTR;
    is($q->pop, undef, 'pop on an empty queue');
    is($! + 0, 0, 'sets $! to 0');
    $! = Errno::EINTR;
    is($q->pop_back, undef, 'pop_back on an empty queue');
    is($! + 0, 0, 'sets $! to 0');
    $! = Errno::EINTR;
    is_deeply([$q->pop_multi(3)], [], 'pop_multi on an empty queue');
    is($! + 0, 0, 'sets $! to 0');

    my $path = "$dir/u" . $seq++ . '.shm';
    $! = 0;
    ok(!Data::Queue::Shared::Int->unlink($path), 'unlink of a missing file fails');
    ok($!{ENOENT}, 'with $! = ENOENT') or diag("\$! = $!");

    my $e = Data::Queue::Shared::Int->new(undef, 4);
    my $fd = $e->eventfd;
    POSIX::close($fd);
    $! = 0;
    ok(!$e->notify, 'notify on a closed eventfd fails');
    ok($!{EBADF}, 'with $! = EBADF') or diag("\$! = $!");
    $! = 0;
    is($e->eventfd_consume, undef, 'eventfd_consume on a closed eventfd fails');
    ok($!{EBADF}, 'with $! = EBADF') or diag("\$! = $!");
};

subtest 'Str->new($path, $cap, undef, $mode): default arena, given mode' => sub {
    my $path = "$dir/m" . $seq++ . '.shm';
    my $old = umask 0;
    my $q = $CLASS->new($path, 100, undef, 0640);
    umask $old;
    is((stat $path)[2] & 07777, 0640, 'the file has mode 0640');
    is($q->capacity, 128, 'capacity rounded to 128');
    is($q->stats->{arena_cap}, 128 * 256, 'the arena is the default: capacity x 256');
    $q->unlink;
};

subtest 'a real ithread sees CLONE_SKIP: the handle is undef there' => sub {
    plan skip_all => 'this perl has no ithreads' unless $Config{useithreads};
    require threads;
    my $q = $CLASS->new(undef, 4);
    my $i = Data::Queue::Shared::Int->new(undef, 4);
    $q->push('kept');
    my $t = threads->create(sub {
        # Perl skips an object by copying it as an unblessed undef.
        my @seen = map {
            my $h = $_;
            my $called = eval { $h->push(1); 1 } ? 'called' : 'died';
            join ' ', ref($h), (ref $h eq 'SCALAR' && !defined $$h ? 'undef' : 'defined'), $called;
        } $q, $i;
        \@seen;
    });
    my $seen = $t->join;
    is_deeply($seen, ['SCALAR undef died', 'SCALAR undef died'],
              'in the thread both handles are references to an unblessed undef, and a method call dies');
    is($q->pop, 'kept', 'and the parent\'s handle still works');
    ok($i->push(1) && $i->pop == 1, 'both of them');
};

# Str batches at the commit's kill points: the whole batch happened or
# none of it, and the next caller takes the lock over.
my @BATCH = (
    [str_mid_commit   => push_multi => sub { [@_] }],
    [str_after_commit => push_multi => sub { [@_, 'n1', 'n2', 'n3'] }],
    [str_mid_commit   => pop_multi  => sub { [@_] }],
    [str_after_commit => pop_multi  => sub { [@_[2 .. $#_]] }],
    [str_mid_commit   => drain      => sub { [@_] }],
    [str_after_commit => drain      => sub { [] }],
);
for my $case (@BATCH) {
    my ($point, $op, $expect) = @$case;
    subtest "Str $op killed at $point" => sub {
        my $path = "$dir/k" . $seq++ . '.shm';
        my $q = $CLASS->new($path, 16, 4096);
        my @items = map { "item$_" x 20 } 1 .. 4;
        $q->push_multi(@items);
        my $pid = doomed_at($CLASS, $path, $point, sub {
            my $c = shift;
            $op eq 'push_multi' ? $c->push_multi('n1', 'n2', 'n3')
          : $op eq 'pop_multi'  ? $c->pop_multi(2)
          :                       $c->drain;
        });
        my $st = reap($pid);
        is($st & 127, 9, 'the child died of SIGKILL at the kill point')
            or diag('exit ' . ($st >> 8));
        my $want = $expect->(@items);
        is_deeply([$q->drain], $want, 'all of the batch happened or none of it');
        # A push and a pop take both locks: the dead holder's (the back
        # one for push_multi, the front one otherwise) is taken over.
        ok($q->push('z') && $q->pop eq 'z', 'both ends work');
        my $s = $q->stats;
        is($s->{recoveries}, 1, 'the lock was taken over once');
        is($s->{arena_used}, 0, 'the arena is empty with the queue');
        is($s->{push_ok} - $s->{pop_ok}, 0, 'the exact counters match');
        $q->unlink;
    };
}

subtest 'pop_multi without a count croaks with the usage message' => sub {
    for my $class ($CLASS, 'Data::Queue::Shared::Int') {
        my $q = $class->new(undef, 4);
        eval { $q->pop_multi };
        like($@, qr/^Usage: \Q$class\E::pop_multi\(self, count_sv/, "$class: usage message");
    }
};

done_testing;
