# Int crash repair at deterministic points (format 7: counters are
# authoritative, repair waits for the owner's death). A process SIGKILLs
# itself (DQS_TEST_KILL_POINT, read when an Int handle is opened):
#
#   int_push_recorded  a push wrote its intent record, before its tail CAS
#   int_push_claimed   a push reserved its positions, stored no value
#   int_push_mid_run   a batch push published the first of its run only
#   int_pop_recorded   a pop wrote its intent record, before its head CAS
#   int_pop_claimed    a pop claimed its positions, freed no slot
#   int_pop_mid_run    a batch pop freed the first slot of its run only
#
# each for single and batch operations where both reach it. Afterwards the
# queue is not wedged and leaves exactly what the POD promises: a push's
# published items come out and its unpublished ones never do (each
# unpublished position is given up, one recovery); a pop's claimed items
# never come out (each slot it left unfreed is freed by a producer, one
# recovery); every other item comes out exactly once and in order, the
# whole capacity is usable again. Then the same points with ":stop": a live
# (stopped) owner's positions are NOT repaired; they wait for it, a signal
# handler still runs during such a wait, and after SIGCONT (sent by that
# handler) its operation completes. Fails at once if the kill points do not
# work.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Files;
use Test::More;
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(300);
my $CAP = 16;    # the capacity doomed_at opens with

my $push1 = sub { $_[0]->push(100) };
my $pushm = sub { $_[0]->push_multi(100, 101, 102) };
my $pop1  = sub { $_[0]->pop };
my $popm  = sub { $_[0]->pop_multi(3) };

# [point, operation name, operation, items that must come out, items that
# must never come out, recoveries]
my @CASES = (
    ['int_push_recorded', 'push',       $push1, [],    [100],           0],
    ['int_push_recorded', 'push_multi', $pushm, [],    [100, 101, 102], 0],
    ['int_push_claimed',  'push',       $push1, [],    [100],           1],
    ['int_push_claimed',  'push_multi', $pushm, [],    [100, 101, 102], 3],
    ['int_push_mid_run',  'push_multi', $pushm, [100], [101, 102],      2],
    ['int_pop_recorded',  'pop',        $pop1,  [],    [],              0],
    ['int_pop_recorded',  'pop_multi',  $popm,  [],    [],              0],
    ['int_pop_claimed',   'pop',        $pop1,  [],    [1],             1],
    ['int_pop_claimed',   'pop_multi',  $popm,  [],    [1, 2, 3],       3],
    ['int_pop_mid_run',   'pop_multi',  $popm,  [],    [1, 2, 3],       2],
);

# Fork a child that attaches to $path with the kill point set and runs the
# operation; returns its wait status.
sub doomed {
    my ($class, $path, $point, $op) = @_;
    return reap(doomed_at($class, $path, $point, $op));
}

# Probe once that the hook works. Every build has the kill points (they
# cost one load of a field set when the handle is made), so a child that
# finishes its push instead of dying is a failure, not a reason to skip.
{
    my $p = fresh_path('probe');
    my $q = Data::Queue::Shared::Int->new($p, $CAP);
    my $st = doomed('Data::Queue::Shared::Int', $p, 'int_push_claimed', $push1);
    unless (is($st & 127, 9, 'DQS_TEST_KILL_POINT=int_push_claimed makes the child SIGKILL itself')) {
        diag(sprintf 'exit %d, signal %d: are the Int kill points missing from this build?',
             $st >> 8, $st & 127);
        done_testing;
        exit;
    }
    unlink $p;
}

# A queue a few laps round (positions and sequence numbers are not the ones
# of a fresh queue), holding 1 .. 5.
sub prepared {
    my ($class, $p) = @_;
    my $q = $class->new($p, $CAP);
    for my $lap (1 .. 3) {
        $q->push($_) for 1 .. $CAP - 3;
        $q->pop for 1 .. $CAP - 3;
    }
    ok($q->push($_), "prefill $_") for 1 .. 5;
    return $q;
}

for my $class (@INT_CLASSES) {
    for my $case (@CASES) {
        my ($point, $opname, $op, $must, $gone, $rec) = @$case;
        subtest "$class: killed at $point in $opname" => sub {
            my $p = fresh_path('q');
            my $q = prepared($class, $p);
            my @before = (1 .. 5);

            my $st = doomed($class, $p, $point, $op);
            is($st & 127, 9, 'the child died by SIGKILL at the kill point')
                or diag(sprintf 'exit %d, signal %d', $st >> 8, $st & 127);

            my @after = (200 .. 204);
            my $pushed = 0;
            for my $v (@after) {
                $pushed++ if $q->push_wait($v, 5);
            }
            is($pushed, scalar @after, 'new pushes succeed');

            # Exactly this comes out, in this order: what was there (less
            # what a killed pop claimed), the killed push's published items,
            # the new items. Nothing lost, nothing twice, nothing else.
            my %gone = map { $_ => 1 } @$gone;
            my @want = ((grep { !$gone{$_} } @before), @$must, @after);
            my @got;
            while (@got < @want) {
                my $v = $q->pop_wait(5);
                last unless defined $v;
                push @got, $v;
            }
            my $extra = $q->pop_wait(0.2);
            push @got, $extra if defined $extra;
            is_deeply(\@got, \@want, "exactly what $point promises comes out, in order")
                or diag("got @got");
            my %count;
            $count{$_}++ for @got;
            is_deeply([grep { $count{$_} } @$gone], [],
                      'nothing the killed operation took or never filled comes out');
            is($q->size, 0, 'the queue is empty');

            my $in = 0;
            for my $v (1 .. $CAP) {
                $in++ if $q->push_wait(1000 + $v, 5);
            }
            is($in, $CAP, 'the whole capacity is usable');
            ok($q->is_full, 'and full then');
            ok(!$q->push(9999), 'one more does not fit');
            is_deeply([$q->pop_multi($CAP)], [map { 1000 + $_ } 1 .. $CAP], 'and it all comes out');
            ok($q->push(7) && $q->pop == 7, 'and the queue goes on working');
            # Each position the dead push left unpublished and each slot the
            # dead pop left unfreed is repaired once; nothing else is.
            is($q->stats->{recoveries}, $rec, "recoveries counts $rec repaired positions");
            unlink $p;
        };
    }
}

# A stopped owner is alive: its positions are not repaired, they wait.
sub stopped_child {
    my ($class, $p, $point, $op) = @_;
    my $pid = doomed_at($class, $p, "$point:stop", sub { $op->($_[0]); POSIX::_exit(0) });
    my $r = waitpid($pid, POSIX::WUNTRACED());
    is($r, $pid, 'the child reported a state change');
    ok(POSIX::WIFSTOPPED(${^CHILD_ERROR_NATIVE}), "the child stopped itself at $point");
    return $pid;
}

for my $class (@INT_CLASSES) {
    subtest "$class: a stopped producer's reservation waits for it" => sub {
        my $p = fresh_path('stop');
        my $q = prepared($class, $p);
        my $pid = stopped_child($class, $p, 'int_push_claimed', $push1);
        is_deeply([map { $q->pop } 1 .. 5], [1 .. 5], 'what was there comes out');
        is($q->pop, undef, 'the stopped reservation is not given up (pop)');
        is($q->pop_wait(0.3), undef, 'nor by a waiting pop');
        is($q->stats->{recoveries}, 0, 'nothing repaired');
        # The position stays in flight while its owner is stopped, and a
        # signal handler still runs during the wait: this one continues
        # the owner, whose item then arrives. (Were the handler held back
        # to the deadline, the wait would end empty.)
        {
            local $SIG{ALRM} = sub { kill 'CONT', $pid };
            alarm 1;
            is($q->pop_wait(20), 100, 'a handler runs during the wait; after its SIGCONT the item arrives');
            alarm 0;
        }
        is(reap($pid) >> 8, 0, 'and the child finished its push');
        is($q->stats->{recoveries}, 0, 'still nothing repaired');
        unlink $p;
    };
    subtest "$class: a stopped consumer's claim waits for it" => sub {
        my $p = fresh_path('stop');
        my $q = prepared($class, $p);
        my $pid = stopped_child($class, $p, 'int_pop_claimed', $pop1);
        my $in = 0;
        $in++ while $in < 2 * $CAP && $q->push(500 + $in);
        is($in, $CAP - 5, 'the free slots fill; the unfreed one is not taken');
        ok(!$q->push_wait(999, 0.3), 'not by a waiting push either');
        is($q->stats->{recoveries}, 0, 'nothing repaired');
        {
            local $SIG{ALRM} = sub { kill 'CONT', $pid };
            alarm 1;
            ok($q->push_wait(999, 20), 'a handler runs during the wait; after its SIGCONT the slot is free');
            alarm 0;
        }
        is(reap($pid) >> 8, 0, 'and the child finished its pop');
        is_deeply([$q->pop_multi(2 * $CAP)], [2 .. 5, map({ 500 + $_ } 0 .. $CAP - 6), 999],
                  'everything else comes out in order');
        is($q->stats->{recoveries}, 0, 'still nothing repaired');
        unlink $p;
    };
}

done_testing;
