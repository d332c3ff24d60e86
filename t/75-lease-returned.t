# Items back from leases are part of the queue for every operation, on all
# four classes: size, is_empty and stats count them; every pop form (pop,
# pop_wait, pop_multi, drain) takes them first; a consumer that only pops
# finds the item of a holder that was killed (plain pops look for dead
# holders while leases are open); push_ok, pop_ok and compressed count each
# item once however often it was leased; leases() reports an item's real
# length and its stored size.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(120);

my @CLASSES = (@INT_CLASSES, 'Data::Queue::Shared::Str');

for my $class (@CLASSES) {
    my $str = $class =~ /Str$/;
    my @items = $str ? map { "job-$_" } 1 .. 4 : 11 .. 14;

    subtest "$class: size, is_empty and stats count a released item" => sub {
        my $q = $class->new(undef, 8);
        $q->push($items[0]);
        my ($v, $l) = $q->pop_lease;
        is($q->size, 0, 'leased: not in the queue');
        ok($q->is_empty, 'leased: empty');
        ok($q->release($l), 'released');
        is($q->size, 1, 'released: in the size');
        ok(!$q->is_empty, 'released: not empty');
        my $s = $q->stats;
        is($s->{size}, 1, 'stats size');
        is_deeply([@$s{qw(push_ok pop_ok)}], [1, 0], 'one push, its pop no longer counted');
        my @got;
        while (!$q->is_empty) {    # a drain loop on is_empty
            push @got, $q->pop;
        }
        is_deeply(\@got, [$items[0]], 'a loop on is_empty takes it');
        $s = $q->stats;
        is_deeply([@$s{qw(size push_ok pop_ok)}], [0, 1, 1], 'then one push, one pop');
    };

    subtest "$class: plain pops take a released item first" => sub {
        my $q = $class->new(undef, 8);
        $q->push($_) for @items[0 .. 2];
        my ($v, $l) = $q->pop_lease;
        is($v, $items[0], 'leased the front');
        ok($q->release($l), 'released');
        is($q->peek, $items[0], 'peek: the released item');
        is($q->pop, $items[0], 'pop: the released item first');
        (undef, $l) = $q->pop_lease;
        ok($q->release($l), 'leased and released the next');
        is_deeply([$q->pop_multi(10)], [@items[1, 2]], 'pop_multi: released first, then the rest');
        $q->push($_) for @items[0 .. 1];
        (undef, $l) = $q->pop_lease;
        ok($q->release($l), 'again');
        is($q->pop_wait(1), $items[0], 'pop_wait: the released item first');
        (undef, $l) = $q->pop_lease;
        ok($q->release($l), 'and again');
        is_deeply([$q->drain], [$items[1]], 'drain: it');
        $q->push($items[3]);
        (undef, $l) = $q->pop_lease;
        $q->push($items[2]);
        ok($q->release($l), 'released behind a newer push');
        is_deeply([$q->drain], [@items[3, 2]], 'drain: released first, then the ring');
    };

    # A holder killed while it holds a lease; the other consumer never
    # calls a lease method, only the pop form under test.
    for my $form (qw(pop pop_wait pop_multi drain)) {
        subtest "$class: holder killed, the other consumer only calls $form" => sub {
            my $q = $class->new(undef, 8);
            $q->push($items[1]);
            pipe my $r, my $w or die "pipe: $!";
            my $pid = spawn(sub {
                close $r;
                my ($v) = $q->pop_lease;
                die "child leased nothing" unless defined $v;
                syswrite $w, 'x';
                sleep 60;
            });
            close $w;
            sysread $r, my $x, 1;
            close $r;
            is($q->size, 0, 'the item is leased');
            kill 'KILL', $pid;
            reap($pid);
            my @got;
            if ($form eq 'pop_wait') {
                @got = ($q->pop_wait(3));
            }
            else {
                # Plain pops look when a look is due (every 2 ms, sooner on
                # an empty queue): a few calls at most.
                my @args = $form eq 'pop_multi' ? (10) : ();
                wait_for(sub { @got = grep { defined } $q->$form(@args); @got > 0 }, 3);
            }
            is_deeply(\@got, [$items[1]], "$form got the dead holder's item");
            is($q->size, 0, 'and the queue is empty');
        };
    }

    subtest "$class: push_ok, pop_ok count each item once" => sub {
        my $q = $class->new(undef, 64);
        my $n = 50;
        $q->push($str ? "item-$_" : $_) for 1 .. $n;
        my %seen;
        while (my ($v, $l) = $q->pop_lease) {
            # every fifth item is released once, then taken again
            my ($k) = $v =~ /(\d+)$/;
            if ($k % 5 == 0 && !$seen{$k}++) { $q->release($l) }
            else { $q->ack($l) }
        }
        my $s = $q->stats;
        is_deeply([@$s{qw(size push_ok pop_ok)}], [0, $n, $n], "$n items: $n pushes, $n pops");
        is($q->lease_stats->{released}, 10, 'ten of them came back once');
    };
}

subtest 'Str: compressed counts each item once; leases() real length and stored size' => sub {
    my $q = Data::Queue::Shared::Str->new(undef, 16);
    $q->compress(64);
    my $big = 'abc' x 400;    # 1200 bytes, stored compressed
    $q->push($big) for 1 .. 3;
    is($q->stats->{compressed}, 3, 'three stored compressed');
    my ($v, $l) = $q->pop_lease;
    is($v, $big, 'leased');
    my @l = $q->leases;
    is($l[0]{length}, 1200, 'leases: the real length');
    cmp_ok($l[0]{stored}, '<', 1200, 'and the stored size beside it');
    cmp_ok($l[0]{stored}, '>', 0, 'which is not zero');
    ok($q->release($l), 'released');
    is($q->stats->{compressed}, 3, 'the return is not counted again');
    is($q->pop, $big, 'and it decodes');
    my $s = $q->stats;
    is_deeply([@$s{qw(push_ok pop_ok size)}], [3, 1, 2], 'counters');
    $q->push('short');
    ($v, $l) = $q->pop_lease;
    ($v, $l) = $q->pop_lease;
    ($v, $l) = $q->pop_lease;
    is($v, 'short', 'an item stored as it is');
    @l = grep { $_->{lease} == $l } $q->leases;
    is_deeply([@{ $l[0] }{qw(length stored)}], [5, 5], 'length and stored agree');
};

subtest 'Str: an item back while the queue is full is in the size' => sub {
    my $q = Data::Queue::Shared::Str->new(undef, 2);
    $q->push($_) for qw(a b);
    my ($v, $l) = $q->pop_lease;
    $q->push('c');
    ok($q->is_full, 'full again');
    ok($q->release($l), 'released: it waits for room');
    is($q->lease_stats->{waiting}, 1, 'waiting in the table');
    is($q->size, 3, 'and counted in the size');
    is($q->stats->{size}, 3, 'and in stats');
    is_deeply([@{ $q->stats }{qw(push_ok pop_ok)}], [3, 0], 'three pushes, no pop counted');
    my @got;
    while (!$q->is_empty) {
        push @got, $q->drain;
    }
    is_deeply([sort @got], [qw(a b c)], 'a drain loop on is_empty gets all three');
};

# An integer queue's returned items wait beside the ring: a full ring with
# one of them holds one more item than the capacity. (A Str item that
# finds the queue full waits for room; the subtest above drains that case.)
subtest 'drain of a full ring with a released item takes all of them, in one call' => sub {
    for my $class (@INT_CLASSES) {
        my $q = $class->new(undef, 2);
        my @v = (1, 2, 3);
        $q->push($_) for @v[0, 1];
        my ($v, $l) = $q->pop_lease;
        $q->push($v[2]);
        ok($q->is_full, "$class: full again");
        ok($q->release($l), "$class: released beside the full ring");
        is($q->size, 3, "$class: three items, one more than the capacity");
        is_deeply([$q->drain], [@v], "$class: one drain takes the three, released first");
        ok($q->is_empty, "$class: empty after it");
    }
};

done_testing;
