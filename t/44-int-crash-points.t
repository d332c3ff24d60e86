# Int crash repair at deterministic points: a process that SIGKILLs itself
# (DQS_TEST_KILL_POINT, read when an Int handle is opened) right after
# claiming a position for a push (int_push_claimed), after reserving a
# batch (int_push_reserved, push_multi), or after claiming a pop
# (int_pop_claimed), must not wedge the queue, and leaves exactly what the
# POD promises: a claimed push's item comes out, a claimed pop's item never
# does, a dead batch's first (published) item comes out and its unfilled
# ones never do; every other item comes out exactly once and in order, new
# items go in and come out, the whole capacity is usable again, nothing
# waits for the dead process, and `recoveries` counts the positions a dead
# batch left unfilled. Fails at once if the kill points do not work.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Files;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(180);
my $CAP = 16;    # the capacity doomed_at opens with

# The operation each kill point interrupts, run by the doomed child.
my %OP = (
    int_push_claimed  => sub { $_[0]->push(100) },
    int_push_reserved => sub { $_[0]->push_multi(100, 101, 102) },
    int_pop_claimed   => sub { $_[0]->pop },
);
# What the POD (CRASH SAFETY, DQS_TEST_KILL_POINT) promises of each point:
# the items of the killed operation that must come out (published before
# the kill) and the items that must never come out (the pop took it; the
# batch never filled those positions).
my %MUST = (
    int_push_claimed  => [100],
    int_push_reserved => [100],
    int_pop_claimed   => [],
);
my %GONE = (
    int_push_claimed  => [],
    int_push_reserved => [101, 102],
    int_pop_claimed   => [1],
);

# Fork a child that attaches to $path with the kill point set and runs the
# operation; returns its wait status.
sub doomed {
    my ($class, $path, $point) = @_;
    return reap(doomed_at($class, $path, $point, $OP{$point}));
}

# Probe once that the hook works. Every build has the kill points (they
# cost one load of a field set when the handle is made), so a child that
# finishes its push instead of dying is a failure, not a reason to skip.
{
    my $p = fresh_path('probe');
    my $q = Data::Queue::Shared::Int->new($p, $CAP);
    my $st = doomed('Data::Queue::Shared::Int', $p, 'int_push_claimed');
    unless (is($st & 127, 9, 'DQS_TEST_KILL_POINT=int_push_claimed makes the child SIGKILL itself')) {
        diag(sprintf 'exit %d, signal %d: are the Int kill points missing from this build?',
             $st >> 8, $st & 127);
        done_testing;
        exit;
    }
    unlink $p;
}

for my $class (@INT_CLASSES) {
    for my $point (sort keys %OP) {
        subtest "$class: killed at $point" => sub {
            my $p = fresh_path('q');
            my $q = $class->new($p, $CAP);
            # Go round the ring a few laps first, so positions and sequence
            # numbers are not the ones of a fresh queue.
            for my $lap (1 .. 3) {
                $q->push($_) for 1 .. $CAP - 3;
                $q->pop for 1 .. $CAP - 3;
            }
            my @before = (1 .. 5);
            ok($q->push($_), "prefill $_") for @before;

            my $st = doomed($class, $p, $point);
            is($st & 127, 9, 'the child died by SIGKILL at the kill point')
                or diag(sprintf 'exit %d, signal %d', $st >> 8, $st & 127);

            my @after = (200 .. 204);
            my $pushed = 0;
            for my $v (@after) {
                $pushed++ if $q->push_wait($v, 5);
            }
            is($pushed, scalar @after, 'new pushes succeed');

            # Exactly this comes out, in this order: what was there (less
            # the item a killed pop took), the killed push's published item,
            # the new items. Nothing lost, nothing twice, nothing else.
            my %gone = map { $_ => 1 } @{ $GONE{$point} };
            my @want = ((grep { !$gone{$_} } @before), @{ $MUST{$point} }, @after);
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
            is_deeply([grep { $count{$_} } @{ $GONE{$point} }], [],
                      'nothing the killed operation took or never filled comes out');
            is_deeply([grep { !$count{$_} } @{ $MUST{$point} }], [],
                      'what the killed operation published comes out');
            is($q->size, 0, 'the queue is empty');
            # The two positions the dead batch reserved and never filled
            # are given up, one recovery each; nothing else is repaired.
            my $rec = $point eq 'int_push_reserved' ? 2 : 0;
            is($q->stats->{recoveries}, $rec, "recoveries counts $rec given-up positions");

            my $in = 0;
            for my $v (1 .. $CAP) {
                $in++ if $q->push_wait(1000 + $v, 5);
            }
            is($in, $CAP, 'the whole capacity is usable');
            ok($q->is_full, 'and full then');
            ok(!$q->push(9999), 'one more does not fit');
            is_deeply([$q->pop_multi($CAP)], [map { 1000 + $_ } 1 .. $CAP], 'and it all comes out');
            ok($q->push(7) && $q->pop == 7, 'and the queue goes on working');
            unlink $p;
        };
    }
}

done_testing;
