# Str commit protocol: a process killed at each deterministic point of a
# push, pop or clear (DQS_TEST_KILL_POINT: after writing the bytes, half way
# through writing the new state copy, after making it current) leaves a
# queue in which, after the next caller takes the lock over, the operation
# either happened wholly or not at all, arena_used matches the items, the
# exact counters match, and everything keeps working.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Files;
use Test::More;

use Data::Queue::Shared::Str;

watchdog(120);

my $CLASS = 'Data::Queue::Shared::Str';

sub ceil8 { my $n = shift; ($n + 7) & ~7 }

sub item { my ($tag, $len) = @_; substr("$tag:" . ('abcdefghij' x (1 + $len / 10)), 0, $len) }

# An arena of 4096 bytes with the write cursor near the end, so that the
# doomed push wraps (its waste must be accounted for exactly, or not at all).
sub prepared {
    my ($path) = @_;
    my $q = $CLASS->new($path, 16, 4096);
    my @items = map { item("i$_", 900) } 1 .. 4;
    $q->push($_) for @items;
    $q->pop;
    shift @items;
    return ($q, \@items);
}

sub consistent {
    my ($q, $want, $name) = @_;
    my $s = $q->stats;
    is($s->{size}, scalar @$want, "$name: size");
    # (clear removes items without counting pops)
    is($s->{push_ok} - $s->{pop_ok}, scalar @$want, "$name: counters match the size")
        unless $name =~ /^clear/;
    my $need = 0;
    $need += ceil8(length $_) for @$want;
    ok($s->{arena_used} >= $need && $s->{arena_used} <= $need + 4096 - 900,
       "$name: arena_used covers the items (and at most one wrap gap)")
        or diag("arena_used $s->{arena_used}, items need $need");
    my @got;
    while (defined(my $v = $q->pop)) { push @got, $v }
    is_deeply(\@got, $want, "$name: contents, whole and in order");
    is($q->stats->{arena_used}, 0, "$name: empty arena accounts 0 bytes");
    ok($q->push(item('big', 4096)), "$name: the whole arena is usable again");
    is($q->pop, item('big', 4096), "$name: and holds the item");
}

my $NEW = item('new', 700);
my @cases = (
    # point, operation, expected contents after recovery (from @items)
    [str_after_bytes   => push       => sub { [@_] }],
    [str_after_bytes   => push_front => sub { [@_] }],
    [str_mid_commit    => push       => sub { [@_] }],
    [str_mid_commit    => push_front => sub { [@_] }],
    [str_after_commit  => push       => sub { [@_, $NEW] }],
    [str_after_commit  => push_front => sub { [$NEW, @_] }],
    [str_mid_commit    => pop        => sub { [@_] }],
    [str_mid_commit    => pop_back   => sub { [@_] }],
    [str_after_commit  => pop        => sub { [@_[1 .. $#_]] }],
    [str_after_commit  => pop_back   => sub { [@_[0 .. $#_ - 1]] }],
    [str_mid_commit    => clear      => sub { [@_] }],
    [str_after_commit  => clear      => sub { [] }],
);

for my $case (@cases) {
    my ($point, $op, $expect) = @$case;
    subtest "$op killed at $point" => sub {
        my $path = fresh_path('c');
        my ($q, $items) = prepared($path);
        my $st = reap(doomed_at($CLASS, $path, $point, sub {
            my ($c) = @_;
            $op =~ /^push/ ? $c->$op($NEW) : $c->$op;
        }));
        is($st & 127, 9, 'the child died of SIGKILL at the kill point')
            or diag("exit " . ($st >> 8));
        my $want = $expect->(@$items);
        my $peek = $q->peek;
        is($peek, $want->[0], 'peek after the takeover');
        consistent($q, $want, "$op at $point");
        # Format 7 has two locks: push and pop take one each, the other
        # operations both; each lock the dead process held is taken over
        # once (consistent() has taken both).
        my $held = $op =~ /^(push|pop)$/ ? 1 : 2;
        is($q->stats->{recoveries}, $held, "each lock it held was taken over once ($held)");
        $q->unlink;
    };
}

# Format 7: a push at the front into an arena holding no bytes first
# commits the back's write offset moved to 0 (changing nothing anybody can
# tell), then itself. Killed between the two commits the push did not
# happen; killed after the second it did; either way the queue is whole
# and its whole arena usable.
for my $case ([str_after_reset => []], [str_after_commit => [$NEW]]) {
    my ($point, $want) = @$case;
    subtest "push_front into an emptied arena killed at $point" => sub {
        my $path = fresh_path('r');
        my $q = $CLASS->new($path, 16, 4096);
        $q->push(item("e$_", 900)) for 1 .. 2;
        $q->pop for 1 .. 2;    # empty, the write offset left at 1800
        my $st = reap(doomed_at($CLASS, $path, $point, sub { $_[0]->push_front($NEW) }));
        is($st & 127, 9, 'the child died of SIGKILL at the kill point')
            or diag("exit " . ($st >> 8));
        consistent($q, $want, "push_front at $point");
        is($q->stats->{recoveries}, 2, 'both locks it held were taken over');
        $q->unlink;
    };
}

done_testing;
