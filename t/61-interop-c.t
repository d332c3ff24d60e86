# A Perl process and the C example programs (examples/c/producer.c,
# examples/c/consumer.c, compiled here against include/data_queue_shared.h
# and the crate's staticlib) share one file-backed queue of each variant:
# values, strings with and without the UTF-8 flag, and blocking waits woken
# across the language boundary in both directions. Skips only when cargo or
# the C compiler is not available.
use strict;
use warnings;

use Config;
use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSInterop;
use Test::More;

my $cargo = find_cargo() or plan skip_all => 'cargo is not available';
my @cc = split ' ', $Config{cc};
plan skip_all => "C compiler '$Config{cc}' is not available"
    unless @cc && `$Config{cc} --version 2>/dev/null`;

# The staticlib and the generated header (a no-op after `make`).
build_cargo($cargo, '--lib');
my $root = root_dir();
my $lib  = "$root/target/release/libdata_queue_shared.a";
ok(-f $lib, 'the staticlib exists');
ok(-f "$root/include/data_queue_shared.h", 'the header exists');

my $dir = tmpdir();
for my $prog (qw(producer consumer)) {
    my @cmd = (@cc, '-std=c99', '-D_POSIX_C_SOURCE=200809L', '-Wall', '-Wextra', '-Werror',
               "-I$root/include", "$root/examples/c/$prog.c", $lib,
               qw(-lpthread -ldl -lm), '-o', "$dir/$prog");
    # The compiler's messages, if any, go to STDERR as diagnostics.
    is(system({ $cmd[0] } @cmd), 0, "examples/c/$prog.c compiles warning-free")
        or diag("@cmd");
}
-x "$dir/$_" or BAIL_OUT("$dir/$_ was not built") for qw(producer consumer);

watchdog(300);

run_all({
    name     => 'C',
    producer => sub {
        my %o = @_;
        [ "$dir/producer", (defined $o{wait} ? ('-w', $o{wait}) : ()),
          ($o{utf8} ? '-u' : ()), '--', $o{path}, $o{type}, @{ $o{items} } ];
    },
    consumer => sub {
        my %o = @_;
        [ "$dir/consumer", (defined $o{wait} ? ('-w', $o{wait}) : ()),
          '--', $o{path}, $o{type}, $o{count} ];
    },
});

done_testing;
