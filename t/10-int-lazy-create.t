# A new integer queue touches none of its slots (format 5: zero memory is an
# empty ring), so a queue of 2**20 slots (16 MiB for Int) adds almost nothing
# to the process's resident memory, at create or after 1000 push+pop pairs.
# Resident memory is a page count from /proc/self/statm, not a timing.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

plan skip_all => 'needs /proc/self/statm' unless -r '/proc/self/statm';
watchdog(60);

my $dir = tmpdir();
my $page_kib = 4;

# Resident KiB of this process.
sub rss_kib {
    open my $fh, '<', '/proc/self/statm' or die "statm: $!";
    my (undef, $resident) = split ' ', scalar <$fh>;
    return $resident * $page_kib;
}

my %make = (
    anon  => sub { $_[0]->new(undef, $_[1]) },
    memfd => sub { $_[0]->new_memfd('dqs-lazy', $_[1]) },
    file  => sub { $_[0]->new("$dir/lazy.shm", $_[1]) },
);

for my $class (qw(Data::Queue::Shared::Int Data::Queue::Shared::Int32 Data::Queue::Shared::Int16)) {
    for my $kind (qw(anon memfd file)) {
        subtest "$class, $kind: a queue of 2**20 slots costs memory only as it is used" => sub {
            # Warm up everything a first call allocates (method caches, SVs).
            {
                my $w = $make{$kind}->($class, 2);
                $w->push(1) && $w->pop for 1 .. 10;
                undef $w;
                unlink "$dir/lazy.shm";
            }
            my $before = rss_kib();
            my $q = $make{$kind}->($class, 2**20);
            is($q->capacity, 2**20, 'capacity');
            my $created = rss_kib() - $before;
            cmp_ok($created, '<', 512, "created: $created KiB more resident");
            my $ok = 0;
            for my $i (1 .. 1000) {
                $ok++ if $q->push($i) && $q->pop == $i;
            }
            is($ok, 1000, '1000 push+pop pairs');
            my $used = rss_kib() - $before;
            cmp_ok($used, '<', 1024, "after them: $used KiB more resident");
            undef $q;
            unlink "$dir/lazy.shm";
        };
    }
}

done_testing;
