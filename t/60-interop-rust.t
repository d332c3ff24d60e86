# A Perl process and the Rust example programs (examples/producer.rs,
# examples/consumer.rs) share one file-backed queue of each variant:
# values, strings with and without the UTF-8 flag, and blocking waits woken
# across the language boundary in both directions. Builds the examples
# with cargo first (skips only when cargo is not available).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSInterop;
use Test::More;

my $cargo = find_cargo() or plan skip_all => 'cargo is not available';

# Building may take minutes on a cold cache; cargo has its own alarm.
build_cargo($cargo, '--examples');
my $bin = root_dir() . '/target/release/examples';
-x "$bin/$_" or BAIL_OUT("$bin/$_ was not built") for qw(producer consumer);

watchdog(300);

run_all({
    name     => 'Rust',
    producer => sub {
        my %o = @_;
        [ "$bin/producer", (defined $o{wait} ? ('--wait', $o{wait}) : ()),
          ($o{utf8} ? '--utf8' : ()), '--', $o{path}, $o{type}, @{ $o{items} } ];
    },
    consumer => sub {
        my %o = @_;
        [ "$bin/consumer", (defined $o{wait} ? ('--wait', $o{wait}) : ()),
          '--', $o{path}, $o{type}, $o{count} ];
    },
});

# --count generates items 0 .. N-1 ("item 0", ... for Str).
{
    my $dir = tmpdir();
    my $q = Data::Queue::Shared::Str->new("$dir/count.shm", 8);
    is(system("$bin/producer", '--count', 3, "$dir/count.shm", 'str'), 0,
       'producer --count exits 0');
    is_deeply([map { $q->pop } 1 .. 3], ['item 0', 'item 1', 'item 2'],
              '... and pushed the generated items');
    is(system("$bin/producer $dir/count.shm nosuchtype 2>/dev/null"), 64 << 8,
       'an unknown type exits 64');
}

done_testing;
