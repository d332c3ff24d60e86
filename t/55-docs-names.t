# The documentation names only things that exist. Every file a page names
# with F<...> (README.pod, HACKING.pod, bench/RESULTS.pod and the manual
# pages under lib/) is in the checkout: a path with a directory exists as
# written, a bare file name is a file at the top or the last part of a
# path in MANIFEST. Paths outside the tree (/proc/...) and what the build
# or a release makes (target/, blib, vendor/, the generated C header, ...)
# are left alone. And every cargo feature named, in those pages or in the
# comments and cfg attributes of the Rust sources, the build scripts and
# CI, is a feature of Cargo.toml.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use File::Find ();
use File::Spec ();
use Test::More;

watchdog(60);

my $root = File::Spec->rel2abs(File::Spec->catdir($FindBin::Bin, File::Spec->updir));

sub slurp {
    my ($path) = @_;
    open my $fh, '<', $path or die "open $path: $!";
    local $/;
    return scalar <$fh>;
}

sub found_under {    # files under $dir (relative to the root) matching $re
    my ($dir, $re) = @_;
    my @found;
    File::Find::find({ no_chdir => 1,
                       wanted => sub { push @found, File::Spec->abs2rel($_, $root) if -f && /$re/ } },
                     "$root/$dir");
    return @found;
}

my @pages = ('README.pod', 'HACKING.pod', 'bench/RESULTS.pod', found_under('lib', qr/\.p(?:m|od)\z/));

# ---- files ---------------------------------------------------------------
# Made by the build or by a release, not kept in the repository.
my $MADE = qr{\A(?:target/|blib\b|vendor/|lib/auto/|\.cargo/config\.toml\z
                |include/data_queue_shared\.h\z|XSParseKeyword\.h\z
                |Data-Queue-Shared-VERSION\.tar\.gz\z|libasan\.so)}x;
my @manifest = grep { length } map { (split ' ', $_)[0] // '' } split /\n/, slurp("$root/MANIFEST");
my %part;    # every file and directory name that a MANIFEST path has
for my $path (@manifest) {
    $part{$_} = 1 for split m{/}, $path;
}

my $named = 0;
for my $page (sort @pages) {
    my $text = slurp("$root/$page");
    my %files = map { $_ => 1 } $text =~ /F<([^<>\s]+)>/g;
    for my $f (sort keys %files) {
        next if $f =~ m{\A/} || $f =~ $MADE;
        $named++;
        if ($f =~ m{/.}) {
            ok(-e "$root/$f", "$page names F<$f>, which exists");
        }
        else {
            (my $name = $f) =~ s{/\z}{};
            ok(-e "$root/$name" || $part{$name}, "$page names F<$f>, a file of the distribution");
        }
    }
}
cmp_ok($named, '>', 50, "the pages name files ($named checked)");

# ---- cargo features ------------------------------------------------------
my ($features) = slurp("$root/Cargo.toml") =~ /^\[features\]\n(.*?)(?=^\[|\z)/ms;
my %feature = map { $_ => 1 } ($features // '') =~ /^([\w-]+)\s*=/mg;
ok($feature{zstd}, 'Cargo.toml has its features (zstd among them)');

# .ci/run is not shipped (MANIFEST.SKIP): read where it is, in a checkout.
my @sources = (@pages, 'Cargo.toml', 'Makefile.PL', 'build.rs', grep({ -e "$root/$_" } '.ci/run'),
               found_under('dev', qr/\.(?:sh|pl)\z/),
               map { found_under($_, qr/\.rs\z/) } qw(src tests benches examples));
my $mentions = 0;
for my $file (sort @sources) {
    my $text = slurp("$root/$file");
    my %names;
    # feature = "x" (cfg), feature "x", --features x,y
    $names{$_} = 1 for $text =~ /\bfeature\s*=?\s*"([\w-]+)"/g;
    $names{$_} = 1 for map { split /,/ } $text =~ /--features[ =]"?([\w,-]+)/g;
    # C<x> feature, `x` feature, `x` cargo feature, the x feature
    $names{$_} = 1 for $text =~ /(?:C<|`)([\w-]+)(?:>|`)\s+(?:cargo\s+)?feature\b/g;
    $names{$_} = 1 for $text =~ /\bthe\s+([\w-]+)\s+feature\b/g;
    for my $name (sort keys %names) {
        $mentions++;
        ok($feature{$name}, "$file names the cargo feature '$name', which Cargo.toml has");
    }
}
cmp_ok($mentions, '>', 3, "the sources name features ($mentions checked)");

done_testing;
