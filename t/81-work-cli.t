# dqs and the work queue: `dqs create --max-deliveries --max-dead`, `dqs
# push --delay`, `dqs dead` (text and --json), `dqs kick [N]`, the
# deliveries column and the delayed state of `dqs leases`, and the
# work-queue counters of `dqs stats` (text and --json, equal to Perl's
# lease_stats).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSCli;
use Test::More;
use JSON::PP ();
use Time::HiRes ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(120);
my $dir = tmpdir();

subtest 'create options' => sub {
    my $p = "$dir/c.shm";
    is dqs(['create', $p, '-t', 'int', '-c', 8, '--max-deliveries', 3, '--max-dead', 7])->{code}, 0,
        'create --max-deliveries --max-dead';
    my $s = Data::Queue::Shared::Int->new($p, 8)->lease_stats;
    is_deeply [@$s{qw(max_deliveries max_dead)}], [3, 7], 'stored in the header';
    for my $bad (['--max-deliveries', -1], ['--max-deliveries', 4294967296], ['--max-dead', 65537],
                 ['--max-dead', 'x']) {
        my $r = dqs(['create', "$dir/bad.shm", '-t', 'int', '-c', 8, @$bad]);
        is $r->{code}, 2, "create @$bad: a usage error";
        one_line_err($r, qr/^dqs create: .*(?:\Q$bad->[0]\E|'-1')/, '... one line naming the option or value');
        ok !-e "$dir/bad.shm", '... nothing created';
    }
};

for my $type (qw(int str)) {
    my $class = $type eq 'str' ? 'Data::Queue::Shared::Str' : 'Data::Queue::Shared::Int';
    my $str = $type eq 'str';
    subtest "$type: push --delay, dead, kick, leases, stats" => sub {
        my $p = "$dir/w-$type.shm";
        is dqs(['create', $p, '-t', $type, '-c', 16, '--max-deliveries', 1, '--max-dead', 4])->{code}, 0, 'create';
        my $q = $class->new($p, 16);
        # push --delay
        my $r = dqs(['push', $p, '--delay', 0.3, $str ? 'later' : 42]);
        is $r->{code}, 0, 'push --delay';
        is $q->size, 0, '... invisible for now';
        my $l = dqs(['leases', $p]);
        like $l->{out}, qr/^\d+\s+delayed\s+\d+\s+\d+\s+[\d.]+s\s+[\d.]+s\s+0\s/m, 'dqs leases: delayed, due in left, 0 deliveries';
        is $q->pop_wait(5), $str ? 'later' : 42, '... then there';
        for my $bad (-1, 'nan', 'inf', 'x') {
            my $b = dqs(['push', $p, '--delay', $bad, 1]);
            is $b->{code}, 2, "push --delay $bad: a usage error";
        }
        $r = dqs(['push', $p, '--delay', 1, '--wait', 1, 1]);
        is $r->{code}, 2, '--delay and --wait exclude each other';
        # dead items: one released after its last delivery, one buried
        my @vals = $str ? ("a\tb", "caf\x{263a}") : (7, 8);
        $q->push($_) for @vals;
        my (undef, $l1, $d1) = $q->pop_lease;
        is $d1, 1, 'deliveries 1';
        my $lst = dqs(['leases', $p]);
        like $lst->{out}, qr/^lease\s+state\s+pid\s+seq\s+age\s+left\s+deliveries\s/m, 'leases header has deliveries';
        like $lst->{out}, qr/^$l1\s+held\s+$$\s+\d+\s+[\d.]+s\s+-\s+1\s/m, 'leases: the held one, 1 delivery';
        $q->release($l1);
        my (undef, $l2) = $q->pop_lease;
        $q->bury($l2);
        is $q->dead_count, 2, 'two dead';
        my $d = dqs(['dead', $p]);
        is $d->{code}, 0, 'dqs dead';
        my @lines = split /\n/, $d->{out};
        is scalar @lines, 3, 'a header and two items';
        like $lines[0], qr/^\s*seq\s+deliveries\s+reason\s+when\s+value$/, 'header';
        like $lines[1], qr/^\s*\d+\s+1\s+released\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\s+\Q@{[ $str ? 'a\\tb' : 7 ]}\E$/, 'the released one';
        like $lines[2], qr/\s+buried\s+.*\Q@{[ $str ? "caf\xe2\x98\xba" : 8 ]}\E$/, 'the buried one';
        my $j = dqs(['dead', $p, '--json']);
        is $j->{code}, 0, 'dqs dead --json';
        my @objs = map { JSON::PP->new->utf8->decode($_) } split /\n/, $j->{out};
        is scalar @objs, 2, 'one object per line';
        is $objs[0]{reason}, 'released', 'reason';
        is $objs[1]{reason}, 'buried', 'reason';
        is $objs[0]{deliveries}, 1, 'deliveries';
        cmp_ok abs($objs[0]{when} - time), '<', 60, 'when: epoch seconds';
        is $objs[0]{value}, $vals[0], 'value';
        if ($str) {
            is $objs[1]{value}, $vals[1], 'utf8 string as JSON';
            ok $objs[1]{utf8}, 'utf8 flag';
        }
        my $perl = $q->dead_list;
        is $q->dead_count, 2, 'dqs dead removes nothing';
        # stats
        my $st = dqs(['stats', $p]);
        my %kv = $st->{out} =~ /^(\S+) +(\S+)$/mg;
        my $js = JSON::PP->new->decode(dqs(['stats', $p, '--json'])->{out});
        my $ls = $q->lease_stats;
        for my $k (qw(max_deliveries max_dead delivered dead buried kicked drained delayed touched dead_full dead_items)) {
            is $kv{$k}, $ls->{$k}, "stats text $k == Perl's ($ls->{$k})";
            is $js->{$k}, $ls->{$k}, "stats --json $k == Perl's";
        }
        # kick
        my $k = dqs(['kick', $p, 1]);
        is $k->{code}, 0, 'dqs kick 1';
        is $k->{out}, "1\n", 'prints 1';
        is $q->dead_count, 1, 'one left';
        is $q->pop, $vals[0], 'the oldest is at the front';
        $k = dqs(['kick', $p, 10]);
        is_deeply [$k->{code}, $k->{out}], [0, "1\n"], 'kick more than there are: what there is, exit 0';
        $k = dqs(['kick', $p]);
        is_deeply [$k->{code}, $k->{out}], [0, "0\n"], 'kick of an empty area: 0';
        $k = dqs(['kick', $p, -1]);
        is $k->{code}, 2, 'kick -1: a usage error';
        is dqs(['dead', $p])->{out} =~ tr/\n//, 1, 'dead of an empty area: the header';
        is dqs(['dead', $p, '--json'])->{out}, '', '... --json: nothing';
        is dqs(['kick', "$dir/missing.shm"])->{code}, 2, 'kick of a missing file: 2';
        is dqs(['dead', "$dir/missing.shm"])->{code}, 2, 'dead of a missing file: 2';
        $q->unlink;
    };
}

done_testing;
