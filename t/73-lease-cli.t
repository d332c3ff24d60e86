# dqs and leases: `dqs create --max-leases/--lease-bytes`, the lease lines
# of `dqs stats` (text and --json, equal to Perl's lease_stats), and `dqs
# leases`, which lists the open and waiting leases and, as every operation
# that looks does, returns a dead holder's.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSCli;
use Test::More;
use JSON::PP ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(120);
my $dir = tmpdir();

subtest 'create with lease options' => sub {
    my $p = "$dir/c.shm";
    is dqs(['create', $p, '-t', 'str', '-c', 8, '--max-leases', 5, '--lease-bytes', 1000])->{code}, 0,
        'create --max-leases --lease-bytes';
    my $s = Data::Queue::Shared::Str->new($p, 8)->lease_stats;
    is_deeply [@$s{qw(max_leases lease_bytes)}], [5, 1000], 'stored in the header';
    my $r = dqs(['create', "$dir/d.shm", '-t', 'int', '-c', 8, '--lease-bytes', 10]);
    is $r->{code}, 2, 'lease bytes on an int queue: a usage error';
    like $r->{err}, qr/^dqs create: lease_bytes applies to Str queues only$/m, 'says why';
    is dqs(['create', "$dir/e.shm", '-t', 'int', '-c', 8, '--max-leases', 0])->{code}, 0, 'no table';
    is(Data::Queue::Shared::Int->new("$dir/e.shm", 8)->lease_stats->{max_leases}, 0, 'none');
};

subtest 'stats and leases' => sub {
    for my $class ('Data::Queue::Shared::Int', 'Data::Queue::Shared::Str') {
        my $p = "$dir/s" . ($class =~ /Str/ ? 'str' : 'int') . '.shm';
        my $q = $class->new($p, 8);
        $q->push($_) for 1 .. 4;
        my (undef, $l) = $q->pop_lease(100);
        $q->ack(($q->pop_lease)[1]);
        my $kid = spawn(sub { my @x = $q->pop_lease; die unless @x });
        reap_ok($kid, 'a holder leases and exits');
        my $r = dqs(['leases', $p]);
        is $r->{code}, 0, 'dqs leases';
        my @lines = split /\n/, $r->{out};
        like $lines[0], qr/^lease\s+state\s+pid\s+seq\s+age\s+left\s+deliveries\s+(value|bytes\s+stored)$/, 'header';
        my @held = grep { /\sheld\s/ } @lines;
        is scalar @held, 1, 'one held lease left (the dead one came back)';
        my $val = $class =~ /Str/ ? '1\s+1' : '1';
        like $held[0], qr/^$l\s+held\s+$$\s+0\s+[\d.]+s\s+[\d.]+s\s+1\s+$val$/, 'the held one, ours';
        if ($class =~ /Str/) {
            is scalar @lines, 2, 'Str: the dead one went back into the queue';
        }
        else {
            like $lines[2], qr/^\d+\s+returned\s+\d+\s+2\s/, 'Int: the dead one waits in the table';
        }
        my $s = $q->lease_stats;
        is $s->{returned_dead}, 1, 'dqs leases returned the dead holder\'s';
        my $j = JSON::PP::decode_json(dqs(['stats', $p, '--json'])->{out});
        my %map = (max_leases => 'max_leases', leases_open => 'open', leases_waiting => 'waiting',
                   leases_acked => 'acked', leases_nacked => 'released',
                   leases_dead => 'returned_dead', leases_expired => 'returned_timeout');
        is $j->{$_}, $s->{ $map{$_} }, "stats --json $_" for sort keys %map;
        my %kv = dqs(['stats', $p])->{out} =~ /^(\w+)\s+(.*)$/mg;
        is $kv{leases_open}, 1, 'stats text: leases_open';
        is $kv{leases_dead}, 1, 'stats text: leases_dead';
        ok $q->ack($l), 'ack';
    }
};

done_testing;
