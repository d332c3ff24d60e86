# The work-queue methods of every class (delivery counts, dead letters,
# touch, delays, kick): what each returns, and the croaks and clamps for
# bad input. Single process; the crash and timing guarantees are in t/78
# to t/80.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use Time::HiRes ();
use Encode ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(120);
my $dir = tmpdir();
my $n   = 0;

sub fresh {
    my ($class, %o) = @_;
    my $path = "$dir/q" . $n++ . '.shm';
    return $class =~ /Str$/ ? $class->new($path, 16, undef, {%o}) : $class->new($path, 16, {%o});
}

sub croaks_like {
    my ($code, $re, $name) = @_;
    my $ok = eval { $code->(); 1 };
    ok(!$ok, "$name croaks") and like($@, $re, "... $name: message");
}

# A lease of another queue, in its 6th record: no lease of a queue with 2
# records.
sub foreign_lease {
    my ($class, @v) = @_;
    my $other = fresh($class);
    $other->push($v[$_ % @v]) for 0 .. 5;
    my @l = map { ($other->pop_lease)[1] } 0 .. 5;
    return $l[5];
}

for my $class (@INT_CLASSES, 'Data::Queue::Shared::Str') {
    my $str  = $class =~ /Str$/;
    my $name = (split /::/, $class)[-1];
    my @v    = $str ? ('a', "b\x{263a}", 'c', 'd', 'e') : (1 .. 5);

    subtest "$name: create options" => sub {
        my $q = fresh($class, max_deliveries => 3, max_dead => 5);
        my $s = $q->lease_stats;
        is $s->{max_deliveries}, 3, 'max_deliveries stored';
        is $s->{max_dead}, 5, 'max_dead stored';
        for my $k (qw(delivered dead buried kicked drained delayed touched dead_full dead_items)) {
            is $s->{$k}, 0, "lease_stats has $k, 0";
        }
        my $d = fresh($class);
        is $d->lease_stats->{max_deliveries}, 0, 'default max_deliveries 0 (unlimited)';
        is $d->lease_stats->{max_dead}, 64, 'default max_dead 64';
        my $path = "$dir/q" . $n++ . '.shm';
        for my $bad ([max_deliveries => -1], [max_deliveries => 2**32], [max_deliveries => 1.5],
                     [max_deliveries => 'x'], [max_dead => 65537], [max_dead => -2],
                     [max_dead => 'nan']) {
            croaks_like(sub { $str ? $class->new($path, 8, undef, {@$bad}) : $class->new($path, 8, {@$bad}) },
                        qr/\Q$bad->[0]\E/, "new with $bad->[0] => $bad->[1]");
        }
        ok !-e $path, 'nothing created by a refused option';
        my $zero = fresh($class, max_dead => 0);
        is $zero->lease_stats->{max_dead}, 0, 'max_dead 0: no dead area';
        my $m = $str ? $class->new_memfd('w', 8, undef, { max_deliveries => 2 })
                     : $class->new_memfd('w', 8, { max_deliveries => 2 });
        is $m->lease_stats->{max_deliveries}, 2, 'new_memfd takes the options';
    };

    subtest "$name: delivery counts" => sub {
        my $q = fresh($class);
        $q->push($_) for @v[0, 1];
        my ($x, $l, $d) = $q->pop_lease;
        is $x, $v[0], 'value';
        is $d, 1, 'first hand-out: deliveries 1';
        is $q->deliveries($l), 1, 'deliveries($lease)';
        ok $q->release($l), 'release';
        ($x, $l, $d) = $q->pop_lease_wait(1);
        is_deeply [$x, $d], [$v[0], 2], 'released item comes back counted 2 (pop_lease_wait)';
        my ($x2, $l2) = $q->pop_lease;
        is $x2, $v[1], 'two-value caller unchanged';
        ok $q->ack($l2), 'ack';
        is $q->deliveries($l2), undef, 'deliveries of an ended lease: undef';
        ok $q->release($l), 'release again';
        my $plain = $q->pop;
        is $plain, $v[0], 'a plain pop takes a returned item';
        $q->push($_) for @v;
        my @t = $q->pop_lease_multi(3);
        is scalar @t, 3, 'pop_lease_multi: 3';
        is scalar @{ $t[0] }, 3, '... each a [value, lease, deliveries] triple';
        is $t[0][2], 1, '... counted';
        $q->ack($_->[1]) for @t;
        my ($lv) = grep { $_->{state} eq 'held' } $q->leases;
        ok !defined $lv, 'none held';
        my ($y, $ly) = $q->pop_lease;
        my ($info) = grep { $_->{lease} == $ly } $q->leases;
        is $info->{deliveries}, 1, 'leases shows deliveries';
        $q->ack($ly);
        is $q->lease_stats->{delivered}, 7, 'delivered counts leased hand-outs';
        croaks_like(sub { $q->deliveries('junk') }, qr/deliveries: 'junk' is not a lease/, 'deliveries of garbage');
        croaks_like(sub { $q->deliveries(undef) }, qr/deliveries: lease is undef/, 'deliveries of undef');
        my $lo = foreign_lease($class, @v);
        my $small = fresh($class, max_leases => 2);
        croaks_like(sub { $small->deliveries($lo) }, qr/deliveries: '$lo' is not a lease of this queue/,
                    'deliveries of another queue\'s lease');
    };

    subtest "$name: max_deliveries and the dead area" => sub {
        my $q = fresh($class, max_deliveries => 2, max_dead => 2);
        $q->push($v[0]);
        my (undef, $l, $d) = $q->pop_lease;
        is $d, 1, '1st delivery';
        $q->release($l);
        (undef, $l, $d) = $q->pop_lease;
        is $d, 2, '2nd delivery';
        my $t0 = time;
        ok $q->release($l), 'release after the last delivery: true';
        is $q->size, 0, 'not back in the queue';
        is $q->dead_count, 1, 'in the dead area';
        my $p = $q->dead_peek;
        is $p->{value}, $v[0], 'dead_peek value';
        is $p->{deliveries}, 2, 'dead_peek deliveries';
        is $p->{reason}, 'released', 'reason released';
        cmp_ok abs($p->{when} - $t0), '<', 5, 'when: epoch seconds of the move';
        ok defined $p->{seq}, 'seq';
        if ($str) {
            is $p->{length}, length(Encode::encode_utf8($v[0])), 'Str: length';
            ok defined $p->{stored}, 'Str: stored';
        }
        # bury
        $q->push($v[1]);
        (undef, $l, $d) = $q->pop_lease;
        ok $q->bury($l), 'bury: true';
        ok !$q->bury($l), 'bury of an ended lease: false';
        is $q->dead_count, 2, 'two dead';
        my @all = $q->dead_list;
        is_deeply [map { $_->{reason} } @all], ['released', 'buried'], 'dead_list oldest first';
        is $all[1]{value}, $v[1], 'Str utf8 / value kept' if $str;
        ok utf8::is_utf8($all[1]{value}), 'utf8 flag kept' if $str;
        # full area: nothing dropped
        $q->push($v[2]);
        (undef, $l) = $q->pop_lease;
        croaks_like(sub { $q->bury($l) }, qr/bury: .*dead-letter area is full/, 'bury on a full area');
        ok defined $q->deliveries($l), '... the lease stays held';
        $q->release($l);
        (undef, $l) = $q->pop_lease;
        $q->release($l);
        is $q->size, 1, 'max reached, area full: back in the live queue';
        is $q->lease_stats->{dead_full}, 1, 'dead_full +1';
        is $q->pop, $v[2], '... and it is there';
        # kick
        is $q->kick(1), 1, 'kick 1';
        is $q->dead_count, 1, 'one left dead';
        my ($k, $lk, $dk) = $q->pop_lease;
        is_deeply [$k, $dk], [$v[0], 1], 'kicked to the front, count reset';
        $q->ack($lk);
        is $q->kick(100), 1, 'kick more than there are: clamped';
        is $q->kick, 0, 'kick of an empty area: 0';
        ($k, $lk) = $q->pop_lease;
        $q->bury($lk);
        my @dr = $q->dead_drain(5);
        is scalar @dr, 1, 'dead_drain more than there are: clamped';
        is $dr[0]{value}, $v[1], '... returns the items';
        is_deeply [$q->dead_drain], [], 'dead_drain of an empty area';
        is $q->dead_peek, undef, 'dead_peek of an empty area: undef';
        my $s = $q->lease_stats;
        is_deeply [@$s{qw(dead buried kicked drained dead_items)}], [1, 2, 2, 1, 0],
            'counters: dead buried kicked drained dead_items';
        for my $bad (-1, 1.5, 'x', 'nan', 'inf', '-inf') {
            croaks_like(sub { $q->kick($bad) }, qr/kick: count '\Q$bad\E' is not an integer >= 0/i, "kick($bad)");
            croaks_like(sub { $q->dead_drain($bad) }, qr/dead_drain: count/, "dead_drain($bad)");
        }
        my $none = fresh($class, max_dead => 0, max_deliveries => 1);
        $none->push($v[0]);
        (undef, $l) = $none->pop_lease;
        croaks_like(sub { $none->bury($l) }, qr/no dead-letter area/, 'bury with no dead area');
        $none->release($l);
        is $none->size, 1, 'max_dead 0: the item stays live';
    };

    subtest "$name: touch" => sub {
        my $q = fresh($class);
        $q->push($v[0]);
        my (undef, $l) = $q->pop_lease(0.3);
        Time::HiRes::sleep(0.2);
        ok $q->touch($l), 'touch: true';
        Time::HiRes::sleep(0.2);
        ok defined $q->deliveries($l), 'still held after its first deadline';
        ok $q->touch($l, 10), 'touch with a new length';
        my ($i) = grep { $_->{lease} == $l } $q->leases;
        cmp_ok $i->{left}, '>', 9, 'left ~10 s';
        ok $q->touch($l, undef), 'undef: the same length';
        is $q->lease_stats->{touched}, 3, 'touched counts';
        ok $q->ack($l), 'acked';
        ok !$q->touch($l), 'touch of an ended lease: false';
        $q->push($v[1]);
        (undef, $l) = $q->pop_lease;
        ok $q->touch($l), 'touch of a lease without deadline: true';
        ok !(grep { $_->{lease} == $l && $_->{left} } $q->leases), '... still none';
        for my $bad (-1, 'nan', 'inf', 'abc') {
            croaks_like(sub { $q->touch($l, $bad) }, qr/touch: lease timeout/, "touch(\$l, $bad)");
        }
        croaks_like(sub { $q->touch('junk') }, qr/touch: 'junk' is not a lease/, 'touch of garbage');
        croaks_like(sub { $q->touch(5) }, qr/touch: '5' is not a lease of this queue/, 'touch of a lease id that is not this queue\'s');
        my $lo = foreign_lease($class, @v);
        my $small = fresh($class, max_leases => 2);
        croaks_like(sub { $small->touch($lo) }, qr/touch: '$lo' is not a lease of this queue/, 'touch of another queue\'s lease');
        croaks_like(sub { $small->release($lo, 1) }, qr/release: '$lo' is not a lease of this queue/, 'delayed release of another queue\'s lease');
        croaks_like(sub { $small->bury($lo) }, qr/bury: '$lo' is not a lease of this queue/, 'bury of another queue\'s lease');
        $q->ack($l);
        croaks_like(sub { $q->bury(undef) }, qr/bury: lease is undef/, 'bury(undef)');
    };

    subtest "$name: delays" => sub {
        my $q = fresh($class);
        ok $q->push_delayed(0.3, $v[0]), 'push_delayed: true';
        is $q->size, 0, 'invisible to size';
        ok $q->is_empty, '... and is_empty';
        is $q->pop, undef, '... and pop';
        is_deeply [$q->pop_lease], [], '... and pop_lease';
        is $q->lease_stats->{delayed}, 1, 'lease_stats delayed 1';
        my ($d) = grep { $_->{state} eq 'delayed' } $q->leases;
        ok $d, 'leases shows it delayed';
        cmp_ok $d->{due}, '>', 0, '... with due';
        cmp_ok $d->{due}, '<=', 0.3, '... in seconds';
        $q->push($v[1]);
        my $t0 = now();
        my $got = $q->pop_wait(2);
        is $got, $v[1], 'plain items go first before it is due';
        $got = $q->pop_wait(2);
        my $t = now() - $t0;
        is $got, $v[0], 'the delayed item once due';
        cmp_ok $t, '>=', 0.2, 'after its delay';
        # release with a delay
        $q->push($v[2]);
        my (undef, $l) = $q->pop_lease;
        ok $q->release($l, 0.2), 'release with a delay: true';
        ok !$q->release($l, 0.2), 'again: false (ended)';
        is $q->size, 0, 'invisible while delayed';
        my ($x, $l2, $dl) = $q->pop_lease_wait(2);
        is_deeply [$x, $dl], [$v[2], 2], 'comes back, its count kept';
        ok $q->nack($l2, 0), 'nack with delay 0: at once';
        is $q->size, 1, '... back now';
        $q->pop;
        for my $bad (-1, 'nan', 'inf', '-inf', 'abc', undef) {
            my $shown = $bad // 'undef';
            croaks_like(sub { $q->push_delayed($bad, $v[0]) }, qr/push_delayed: delay/, "push_delayed($shown)");
            $q->push($v[0]);
            my (undef, $lb) = $q->pop_lease;
            croaks_like(sub { $q->release($lb, $bad) }, qr/release: delay/, "release(\$l, $shown)");
            ok defined $q->deliveries($lb), '... the lease stays held';
            $q->ack($lb);
        }
        croaks_like(sub { $q->ack(1, 1) }, qr/ack: too many arguments/, 'ack with a delay');
        unless ($str) {
            my $max = $class =~ /Int16/ ? 32767 : $class =~ /Int32/ ? 2147483647 : '9223372036854775807';
            croaks_like(sub { $q->push_delayed(1, '1e30') }, qr/push_delayed: value .* out of range/, 'push_delayed range check');
            croaks_like(sub { $q->push_delayed(1, 'x') }, qr/push_delayed: value "x" is not a number/, 'push_delayed not a number');
            croaks_like(sub { $q->push_delayed(1, undef) }, qr/push_delayed: /, 'push_delayed undef');
        }
        else {
            croaks_like(sub { $q->push_delayed(1, undef) }, qr/push_delayed: /, 'push_delayed undef');
        }
        is $q->size, 0, 'nothing pushed by the croaks';
        # no free record
        my $small = fresh($class, max_leases => 1);
        $small->push_delayed(5, $v[0]);
        croaks_like(sub { $small->push_delayed(5, $v[1]) }, qr/push_delayed: .*all 1 leases are taken/, 'push_delayed with no free record');
        my $none = fresh($class, max_leases => 0);
        croaks_like(sub { $none->push_delayed(1, $v[0]) }, qr/push_delayed: .*no lease table/, 'push_delayed with no lease table');
    };
}

done_testing;
