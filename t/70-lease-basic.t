# Leased pops on all four classes: pop_lease / ack / release (nack), items
# back at the front in pop order, a full lease table that refuses leases
# while plain pops go on, the per-lease timeout and its late ack (false,
# item back), a forked child as another holder, a dead holder's leases
# returned to the next look, a stopped holder left alone, lease_stats and
# leases, the create options, and clear croaks for bad arguments.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(120);
my $dir = tmpdir();

for my $class (@INT_CLASSES, 'Data::Queue::Shared::Str') {
    my $str = $class =~ /Str$/;
    my @items = $str ? map { "job-$_" } 1 .. 6 : 1 .. 6;
    my $path = "$dir/basic.shm";

    subtest "$class: ack, release, order, size" => sub {
        unlink $path;
        my $q = $class->new($path, 8);
        $q->push($_) for @items[0 .. 3];
        my ($a, $la) = $q->pop_lease;
        my ($b, $lb) = $q->pop_lease;
        is_deeply([$a, $b], [@items[0, 1]], 'leased in order');
        is($q->size, 2, 'leased items are not in the queue');
        my $s = $q->lease_stats;
        is($s->{open}, 2, 'two open');
        is($s->{max_leases}, 64, 'the default lease table has 64 records');
        my @l = $q->leases;
        is(scalar @l, 2, 'leases lists two');
        is($l[0]{pid}, $$, 'held by this process');
        is($l[0]{state}, 'held', 'state held');
        ok($q->release($lb), 'release the second');
        ok($q->nack($la), 'nack (release) the first');
        is($q->size, 4, 'both back, in the size');
        ok(!$q->is_empty, 'and not empty');
        my ($v, $l0) = $q->pop_lease;
        is($v, $items[0], 'pop_lease: the older pop comes first');
        ($v, my $l) = $q->pop_lease;
        is($v, $items[1], 'then the other one');
        ok($q->ack($l), 'ack');
        ok(!$q->ack($l), 'a lease ends once: a second ack is false');
        ok(!$q->release($l), 'and so is a release after it');
        ok($q->release($l0), 'release the first again');
        if ($str) {
            is_deeply([$q->pop_multi(10)], [@items[0, 2, 3]], 'Str: back in the queue, at the front');
        }
        else {
            is($q->size, 3, 'Int: it waits beside the ring, in the size');
            is($q->peek, $items[0], 'Int: plain peek sees the returned item first');
            is_deeply([$q->pop_multi(10)], [@items[0, 2, 3]],
                      'Int: plain pops take the returned item first, then the ring');
        }
        is_deeply([$q->pop_lease], [], 'empty: an empty list');
        $s = $q->lease_stats;
        is_deeply([@$s{qw(open waiting acked released)}], [0, 0, 1, 3], 'counters');
        is($q->stats->{mmap_size}, -s $path, 'the file holds the lease table');
        $q->unlink;
    };

    subtest "$class: a full table refuses leases, plain pops go on" => sub {
        my $q = $class->new(undef, 8, $str ? (undef, { max_leases => 2 }) : ({ max_leases => 2 }));
        $q->push($_) for @items[0 .. 3];
        my (undef, $l1) = $q->pop_lease;
        my (undef, $l2) = $q->pop_lease;
        eval { $q->pop_lease };
        like($@, qr/^\Q$class\E->pop_lease: all 2 leases are taken .* at /, 'clear croak');
        is($q->pop, $items[2], 'plain pop still works');
        ok($q->ack($l1), 'ack frees a record');
        my ($v) = $q->pop_lease;
        is($v, $items[3], 'and leasing goes on');
        my $n = $class->new(undef, 8, $str ? (undef, { max_leases => 0 }) : ({ max_leases => 0 }));
        $n->push($items[0]);
        eval { $n->pop_lease };
        like($@, qr/^\Q$class\E->pop_lease: this queue has no lease table/, 'max_leases 0: none');
        is($n->lease_stats->{max_leases}, 0, 'lease_stats says so');
    };

    subtest "$class: pop_lease_multi" => sub {
        my $q = $class->new(undef, 8, $str ? (undef, { max_leases => 3 }) : ({ max_leases => 3 }));
        $q->push($_) for @items[0 .. 4];
        my @p = $q->pop_lease_multi(10, 60);
        is_deeply([map { $_->[0] } @p], [@items[0 .. 2]], 'up to the free leases, in order');
        is(scalar(grep { $_->[1] } @p), 3, 'each with its lease');
        eval { $q->pop_lease_multi(2) };
        like($@, qr/^\Q$class\E->pop_lease_multi: all 3 leases are taken/, 'none free: croaks');
        ok($q->ack($p[0][1]), 'ack one');
        ok($q->release($p[1][1]), 'release one');
        my @q = $q->pop_lease_multi(5);
        is_deeply([map { $_->[0] } @q], [@items[1, 3]],
                  'two leases free: the released item first, then the next');
        $q->ack($_->[1]) for @q, $p[2];
        @q = $q->pop_lease_multi(5);
        is_deeply([map { $_->[0] } @q], [$items[4]], 'stops when empty');
        is_deeply([$q->pop_lease_multi(0)], [], 'count 0: nothing');
        eval { $q->pop_lease_multi('x') };
        like($@, qr/->pop_lease_multi: count must be a number/, 'count checked');
    };

    subtest "$class: lease timeout and the late ack" => sub {
        my $q = $class->new(undef, 8);
        $q->push($items[0]);
        my ($v, $l) = $q->pop_lease(0.05);
        is($v, $items[0], 'leased for 50 ms');
        is($q->size, 0, 'gone from the queue');
        Time::HiRes::sleep(0.1);
        ok(!$q->ack($l), 'an ack after the deadline is false');
        is($q->size, 1, 'and the item is back, in the size');
        is($q->lease_stats->{returned_timeout}, 1, 'counted as a timeout');
        ($v, $l) = $q->pop_lease(30);
        ok($q->ack($l), 'an ack in time is true');
        $q->push($items[1]);
        ($v, $l) = $q->pop_lease(0.02);
        Time::HiRes::sleep(0.05);
        my ($w) = $q->pop_lease;
        is($w, $items[1], 'an expired lease comes back to the next pop_lease');
    };

    subtest "$class: fork: the child is another holder; its death returns its leases" => sub {
        my $q = $class->new(undef, 8);
        $q->push($_) for @items[0 .. 2];
        my (undef, $mine) = $q->pop_lease;
        pipe my $r, my $w or die;
        my $pid = spawn(sub {
            close $r;
            eval { $q->ack($mine) };
            die "child ack: $@" unless $@ =~ /->ack: lease \d+ is held by process $$\b|held by process \d+, not this one/;
            my ($v) = $q->pop_lease;
            die "child got $v" unless $v eq $items[1];
            syswrite $w, "x";
            sleep 60;
        });
        close $w;
        sysread $r, my $x, 1;
        is($q->lease_stats->{open}, 2, 'two open, one each');
        kill 'STOP', $pid;
        is($q->lease_stats->{open}, 2, 'a stopped holder keeps its lease');
        kill 'KILL', $pid;
        reap($pid);
        my $s = $q->lease_stats;
        is($s->{returned_dead}, 1, 'the dead child\'s lease came back');
        my ($back, $bl) = $q->pop_lease;
        is($back, $items[1], 'at the front');
        ok($q->ack($bl), 'ack it');
        is($q->pop, $items[2], 'then the rest');
        ok($q->ack($mine), 'the parent still holds its own');
    };

    subtest "$class: pop_lease_wait" => sub {
        my $q = $class->new(undef, 8);
        my $t0 = now();
        is_deeply([$q->pop_lease_wait(0.05)], [], 'times out empty');
        cmp_ok(now() - $t0, '>=', 0.04, 'after waiting');
        my $pid = spawn(sub { Time::HiRes::sleep(0.1); $q->push($items[4]) });
        my ($v, $l) = $q->pop_lease_wait(10, 5);
        is($v, $items[4], 'woken by a push');
        reap_ok($pid);
        # A holder that dies while another consumer waits: the waiter looks.
        my $h = spawn(sub { $q->push($items[5]); my @x = $q->pop_lease; sleep 60 });
        wait_for(sub { $q->lease_stats->{open} == 2 });
        kill 'KILL', $h;
        reap($h);
        my ($v2) = $q->pop_lease_wait(10);
        is($v2, $items[5], 'the waiter gets the dead holder\'s item');
        ok($q->ack($l), 'ack the first');
    };

    subtest "$class: bad arguments" => sub {
        my $q = $class->new(undef, 8);
        for my $bad ('abc', -1, 1.5, [1]) {
            eval { $q->ack($bad) };
            like($@, qr/^\Q$class\E->ack: '.*' is not a lease at /, "ack('$bad') croaks");
        }
        eval { $q->ack(undef) };
        like($@, qr/^\Q$class\E->ack: lease is undef/, 'ack(undef) croaks');
        eval { $q->release(5) };
        like($@, qr/^\Q$class\E->release: '5' is not a lease of this queue at /, 'not ours');
        eval { $q->pop_lease('soon') };
        like($@, qr/^\Q$class\E->pop_lease: lease timeout 'soon' is not a number at /,
             'lease timeout must be a number');
        eval { $q->pop_lease(-1) };
        like($@, qr/^\Q$class\E->pop_lease: lease timeout -1 is not a number of seconds/,
             'nor negative');
        eval { $class->new(undef, 8, $str ? (undef, { max_leases => 1 << 17 }) : ({ max_leases => 1 << 17 })) };
        like($@, qr/^\Q$class\E->new: max_leases 131072 is out of range/, 'max_leases range');
        eval { $class->new(undef, 8, $str ? (undef, { bogus => 1 }) : ({ bogus => 1 })) };
        like($@, qr/^\Q$class\E->new: unknown option 'bogus'/, 'unknown option');
        eval { $class->new(undef, 8, $str ? (undef, { max_leases => 'x' }) : ({ max_leases => 'x' })) };
        like($@, qr/^\Q$class\E->new: option max_leases 'x' is not a count/, 'option value');
        if (!$str) {
            eval { $class->new(undef, 8, { lease_bytes => 10 }) };
            like($@, qr/lease_bytes applies to Str queues only/, 'lease_bytes is Str only');
        }
        my $m = $class->new_memfd('lease', 8, $str ? (undef, { max_leases => 3 }) : ({ max_leases => 3 }));
        is($m->lease_stats->{max_leases}, 3, 'new_memfd takes the options');
        my $f = $class->new_from_fd($m->memfd);
        is($f->lease_stats->{max_leases}, 3, 'stored in the header');
    };
}

subtest 'Str: lease_bytes and the data area' => sub {
    my $q = Data::Queue::Shared::Str->new(undef, 8, undef, { max_leases => 4, lease_bytes => 16 });
    is($q->lease_stats->{lease_bytes}, 16, 'lease_bytes stored');
    $q->push('x' x 40);
    eval { $q->pop_lease };
    like($@, qr/->pop_lease: the front item \(40 bytes\) is larger than the lease data area \(16 bytes\)/,
         'an item larger than the area');
    is($q->size, 1, 'stays queued');
    my $u = Data::Queue::Shared::Str->new(undef, 8);
    $u->push("caf\x{e9}\x{263a}");
    my ($v, $l) = $u->pop_lease;
    ok(utf8::is_utf8($v) && $v eq "caf\x{e9}\x{263a}", 'UTF-8 kept');
    ok($u->release($l), 'release');
    ($v) = $u->pop;
    ok(utf8::is_utf8($v) && $v eq "caf\x{e9}\x{263a}", 'and kept through the return');
};

done_testing;
