#!/usr/bin/env perl
# Put the crates the build needs into a release tree, so that the tarball
# builds with no crates registry: `make distdir` (and so `make dist` and
# `make disttest`) runs this after copying the MANIFEST's files into
# $(DISTVNAME). Never run by hand, never in the git checkout, which goes on
# building from the registry.
#
#     perl dev/vendor-crates.pl DISTDIR
#
# 1. `cargo vendor --locked` copies every package in Cargo.lock (whatever
#    it holds at the time: nothing here names a crate) to DISTDIR/vendor/,
#    and DISTDIR/.cargo/config.toml points crates-io at that directory.
# 2. The crates a build on 64-bit Linux can compile are those reachable
#    from this crate through normal and build dependencies, for one of the
#    targets in @TARGETS (cargo metadata --filter-platform evaluates the
#    cfg()s). They are kept whole.
# 3. Everything else in the lock (the benches' criterion, loom, Windows and
#    other-OS crates) becomes a stub: its Cargo.toml and licence files stay,
#    because cargo resolves the whole lock graph before it builds anything,
#    and the sources go; the library is an empty file and a build script
#    `fn main() {}`. So `make`, `make test` and `cargo test` work from the
#    tarball; `cargo bench` does not (criterion is a stub).
# 4. A check that cargo resolves the tree with an empty CARGO_HOME and
#    --offline, then the new files are added to DISTDIR/MANIFEST.
#
# CARGO and RUSTC in the environment name the tools (default: from PATH).

use 5.010;
use strict;
use warnings;

use Cwd qw(abs_path);
use ExtUtils::Manifest qw(maniadd maniread);
use File::Find ();
use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use JSON::PP ();

# 64-bit Linux targets (the module builds nowhere else). A target the
# installed rustc does not know is skipped.
my @TARGETS = map { ("$_-unknown-linux-gnu", "$_-unknown-linux-musl") }
    qw(x86_64 aarch64 powerpc64le powerpc64 s390x riscv64gc loongarch64);

my $cargo = $ENV{CARGO} || 'cargo';
my $rustc = $ENV{RUSTC} || 'rustc';

@ARGV == 1 or die "usage: $0 DISTDIR\n";
my $dist = abs_path($ARGV[0]) // die "$0: $ARGV[0]: $!\n";
-f "$dist/Cargo.lock" or die "$0: $dist/Cargo.lock is missing (run from make distdir)\n";

# Made from a release tree, whose MANIFEST lists vendor/: manicopy has
# copied it already (make distdir starts from an empty DISTDIR).
my $vendor = "$dist/vendor";
if (-d $vendor) {
    print "vendor/ came with the MANIFEST (a release tree); nothing to add\n";
    exit 0;
}

# ---- 1. vendor all of Cargo.lock ----------------------------------------
print "Vendoring the crates of Cargo.lock into $vendor\n";
run($cargo, 'vendor', '--quiet', '--locked', '--versioned-dirs', $vendor);
make_path("$dist/.cargo");
spew("$dist/.cargo/config.toml", <<'TOML');
# Written by dev/vendor-crates.pl when the release tarball was made: build
# from the crates in vendor/, never from a registry. (The git checkout has
# no such file and builds from crates.io.)
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "vendor"

[net]
offline = true
TOML

# ---- 2. what a 64-bit Linux build compiles ------------------------------
my %known = map { $_ => 1 } split /\n/, capture($rustc, '--print', 'target-list');
my @targets = grep { $known{$_} } @TARGETS
    or die "$0: $rustc knows none of @TARGETS\n";

my (%keep, %all);
for my $target (@targets) {
    my $meta = JSON::PP::decode_json(capture_in($dist, $cargo, 'metadata', '--format-version', 1,
        '--locked', '--offline', '--filter-platform', $target));
    my %node = map { $_->{id} => $_ } @{ $meta->{resolve}{nodes} };
    my %pkg  = map { $_->{id} => $_ } @{ $meta->{packages} };
    my $root = $meta->{resolve}{root} // die "$0: cargo metadata gave no root package\n";
    my @todo = ($root);
    my %seen;
    while (defined(my $id = shift @todo)) {
        next if $seen{$id}++;
        for my $dep (@{ $node{$id}{deps} }) {
            push @todo, $dep->{pkg}
                if grep { ($_->{kind} // 'normal') ne 'dev' } @{ $dep->{dep_kinds} };
        }
    }
    delete $seen{$root};
    $keep{"$pkg{$_}{name}-$pkg{$_}{version}"} = 1 for keys %seen;
}

# ---- 3. stub the rest ---------------------------------------------------
opendir my $dh, $vendor or die "$0: $vendor: $!\n";
my @crates = sort grep { !/\A\./ && -d "$vendor/$_" } readdir $dh;
closedir $dh;
my @missing = grep { !-d "$vendor/$_" } sort keys %keep;
die "$0: cargo vendor did not write @missing\n" if @missing;

my @stubs = grep { !$keep{$_} } @crates;
stub("$vendor/$_") for @stubs;
printf "Vendored %d crates whole and %d as stubs (%s)\n",
    scalar(keys %keep), scalar(@stubs), join(' ', @stubs);

# ---- 4. check, then list the files in the MANIFEST ----------------------
{
    # An empty CARGO_HOME: no registry cache, no index, no credentials.
    local $ENV{CARGO_HOME}        = tempdir('dqs-vendor-XXXXXX', TMPDIR => 1, CLEANUP => 1);
    local $ENV{CARGO_NET_OFFLINE} = 'true';
    capture_in($dist, $cargo, 'metadata', '--format-version', 1, '--locked', '--offline');
}

my %add = ('.cargo/config.toml' => 'Build from vendor/ (added by dev/vendor-crates.pl)');
File::Find::find({
    no_chdir => 1,
    wanted   => sub {
        return unless -f $_;
        (my $rel = $File::Find::name) =~ s{\A\Q$dist\E/}{};
        $add{$rel} = '';
    },
}, $vendor);
{
    my $here = abs_path('.');
    chdir $dist or die "$0: chdir $dist: $!\n";
    maniadd(\%add);
    my $listed = maniread();
    my @unlisted = grep { !exists $listed->{$_} } sort keys %add;
    die "$0: MANIFEST cannot list @unlisted\n" if @unlisted;
    chdir $here or die "$0: chdir $here: $!\n";
}
printf "Added %d files to %s/MANIFEST\n", scalar(keys %add), $dist;

# ---- helpers ------------------------------------------------------------

# Turn a vendored crate into a stub that cargo can resolve and (as a
# dependency of a dev-dependency, when examples are built) compile to
# nothing. Cargo.toml is unchanged, so the lock stays valid.
sub stub {
    my ($dir) = @_;
    my $manifest = slurp("$dir/Cargo.toml");
    my ($lib, $build) = ('src/lib.rs', undef);
    my $section = '';
    for my $line (split /\n/, $manifest) {
        if ($line =~ /\A\s*\[\[?\s*([^\]]+?)\s*\]\]?/) { $section = $1; next; }
        $lib   = $1 if $section eq 'lib'     && $line =~ /\A\s*path\s*=\s*"([^"]+)"/;
        $build = $1 if $section eq 'package' && $line =~ /\A\s*build\s*=\s*"([^"]+)"/;
    }
    # Without a `build` key cargo runs a build.rs at the root if there is one.
    $build //= 'build.rs' if -f "$dir/build.rs" && $manifest !~ /^\s*build\s*=\s*false/m;
    my $checksum = JSON::PP::decode_json(slurp("$dir/.cargo-checksum.json"));

    opendir my $d, $dir or die "$0: $dir: $!\n";
    for my $entry (readdir $d) {
        next if $entry =~ /\A\.\.?\z/ || $entry eq 'Cargo.toml'
             || $entry =~ /\A(?:LICEN[CS]E|COPYING|NOTICE)/i;
        remove_tree("$dir/$entry");
    }
    closedir $d;

    my $why = "// Stub written by dev/vendor-crates.pl: Data::Queue::Shared's build\n"
            . "// does not compile this crate on Linux (dev-dependency or other OS).\n";
    write_file_in($dir, $lib, $why);
    write_file_in($dir, $build, "${why}fn main() {}\n") if defined $build;
    # No files to verify; the package checksum still matches Cargo.lock.
    spew("$dir/.cargo-checksum.json",
         JSON::PP->new->canonical->encode({ files => {}, package => $checksum->{package} }));
}

sub write_file_in {
    my ($dir, $rel, $text) = @_;
    die "$0: $dir: odd target path $rel\n" if $rel =~ m{(?:\A/|(?:\A|/)\.\.(?:/|\z))};
    (my $parent = "$dir/$rel") =~ s{/[^/]*\z}{};
    make_path($parent);
    spew("$dir/$rel", $text);
}

sub run {
    my @cmd = @_;
    system(@cmd) == 0 or die "$0: '@cmd' failed (status $?)\n";
}

# Standard output of @cmd run in $dir; dies, with what it printed on
# standard error, when it fails.
sub capture_in {
    my ($dir, @cmd) = @_;
    my $here = abs_path('.');
    chdir $dir or die "$0: chdir $dir: $!\n";
    my $out = capture(@cmd);
    chdir $here or die "$0: chdir $here: $!\n";
    return $out;
}

sub capture {
    my @cmd = @_;
    open my $fh, '-|', @cmd or die "$0: cannot run $cmd[0]: $!\n";
    my $out = do { local $/; <$fh> };
    close $fh or die "$0: '@cmd' failed (status $?)\n";
    return $out // '';
}

sub slurp {
    my ($path) = @_;
    open my $fh, '<:raw', $path or die "$0: $path: $!\n";
    local $/;
    return scalar <$fh>;
}

sub spew {
    my ($path, $text) = @_;
    open my $fh, '>:raw', $path or die "$0: $path: $!\n";
    print {$fh} $text;
    close $fh or die "$0: $path: $!\n";
}
