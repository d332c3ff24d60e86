# The dqs manual (lib/Data/Queue/Shared/dqs.pod) keeps up with the tool:
# every subcommand that `dqs --help` lists has a section under SUBCOMMANDS
# with its exit status and an example, every long option of `dqs CMD
# --help` is in that section, every exit code of the help's "Exit codes"
# is under EXIT CODES, the SYNOPSIS has every subcommand with every option,
# the stats section and `dqs stats --help` name exactly the keys `dqs
# stats` prints, `dqs --version` is the module's, and the POD is clean. The
# build installs the manual and the binary (blib/).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSCli;
use File::Spec ();
use Pod::Checker ();
use Test::More;
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(60);

my $root   = File::Spec->catdir($FindBin::Bin, File::Spec->updir);
my $manual = "$root/lib/Data/Queue/Shared/dqs.pod";
my $pod    = slurp($manual);

# ---- what the tool says -------------------------------------------------
my $help = dqs(['--help']);
is($help->{code}, 0, 'dqs --help exits 0');
my ($commands) = $help->{out} =~ /^Commands:\n(.*?)\n(?:\n|\z)/ms;
my @subcommands = ($commands // '') =~ /^  (\S+)  /mg;
cmp_ok(scalar @subcommands, '>=', 8, 'dqs --help lists the subcommands')
    or diag $help->{out};
my ($codes) = $help->{out} =~ /^Exit codes:\n(.*)/ms;
my @exit_codes = ($codes // '') =~ /^  (\d+)  /mg;
cmp_ok(scalar @exit_codes, '>=', 3, 'dqs --help lists exit codes') or diag $help->{out};

# ---- what the manual says -----------------------------------------------
my ($subcommands_pod) = $pod =~ /^=head1 SUBCOMMANDS\n(.*?)^=head1 /ms;
my %section;
for my $part (split /^(?==head2 )/m, $subcommands_pod // '') {
    $section{$1} = $part if $part =~ /\A=head2 (\S+)\n/;
}
my ($exit_pod) = $pod =~ /^=head1 EXIT CODES\n(.*?)^=head1 /ms;
my %documented_code = map { $_ => 1 } ($exit_pod // '') =~ /^=item B<(\d+)>\s*$/mg;

for my $cmd (@subcommands) {
    my $text = $section{$cmd};
    ok(defined $text, "the manual has a section for '$cmd'") or next;
    like($text, qr/^Exit status: \d/m, "... which gives its exit status");
    my ($after) = $text =~ /^Exit status: .*?\n\n(.*)/ms;
    like($after // '', qr/^ +.*\bdqs $cmd\b/m, '... and, after it, an example');
    next if $cmd eq 'help';
    my $sub = dqs([$cmd, '--help']);
    is($sub->{code}, 0, "dqs $cmd --help exits 0");
    # The options are the lines of the "Options:" block that start with one.
    my ($options) = $sub->{out} =~ /^Options:\n(.*?)(?=^\S|\z)/ms;
    my %opts = map { $_ => 1 } ($options // '') =~ /^ +(?:-\w, )?(--[a-z][a-z0-9-]*)/mg;
    cmp_ok(scalar keys %opts, '>=', 1, "dqs $cmd --help lists options") or diag $sub->{out};
    delete $opts{'--help'};
    for my $opt (sort keys %opts) {
        like($text, qr/\Q$opt\E\b/, "... its $opt is in the manual");
    }
}
ok($documented_code{$_}, "exit code $_ is under EXIT CODES") for @exit_codes;

# ---- the SYNOPSIS: every subcommand, each with all its options -----------
{
    my ($synopsis) = $pod =~ /^=head1 SYNOPSIS\n(.*?)^=head1 /ms;
    # A subcommand's lines: the one that starts "dqs NAME", and the
    # indented continuation lines after it.
    my %syn;
    my $cur;
    for my $line (split /\n/, $synopsis // '') {
        if ($line =~ /^ +dqs (\w+)\b(.*)/) { $cur = $1; $syn{$cur} .= $2 }
        elsif (defined $cur && $line =~ /^ +\S/) { $syn{$cur} .= " $line" }
    }
    is_deeply([sort keys %syn], [sort @subcommands], 'the SYNOPSIS has a line for each subcommand and no other');
    for my $cmd (grep { $_ ne 'help' } @subcommands) {
        my ($options) = dqs([$cmd, '--help'])->{out} =~ /^Options:\n(.*?)(?=^\S|\z)/ms;
        # Each option, in its long or its short form.
        my %short = reverse(($options // '') =~ /^ +-(\w), (--[a-z][a-z0-9-]*)/mg);
        my @opts = grep { $_ ne '--help' } ($options // '') =~ /^ +(?:-\w, )?(--[a-z][a-z0-9-]*)/mg;
        for my $opt (@opts) {
            my $re = defined $short{$opt} ? qr/\Q$opt\E\b|(?<![\w-])-\Q$short{$opt}\E\b/ : qr/\Q$opt\E\b/;
            like($syn{$cmd} // '', $re, "SYNOPSIS: dqs $cmd ... $opt");
        }
    }
}

# ---- stats: the keys printed, documented in the manual and in --help -------
{
    my $dir = tmpdir();
    my %printed;    # key => 1, from both queue types, text and JSON
    for my $q (Data::Queue::Shared::Int->new("$dir/int.shm", 4),
               Data::Queue::Shared::Str->new("$dir/str.shm", 4)) {
        my $text = dqs(['stats', $q->path]);
        is($text->{code}, 0, 'dqs stats ' . ref $q);
        my @keys = $text->{out} =~ /^(\S+) +\S/mg;
        is(scalar @keys, scalar(split /\n/, $text->{out}), '... every line is a name and a value');
        my @json = dqs(['stats', $q->path, '--json'])->{out} =~ /"(\w+)":/g;
        is_deeply(\@keys, \@json, '... the same keys as --json, in order');
        $printed{$_} = 1 for @keys;
    }
    my $stats_pod = $section{stats} // '';
    (my $stats_prose = $stats_pod) =~ s/L<[^>]*>//g;    # links name methods, not keys
    my ($stats_help) = dqs(['stats', '--help'])->{out} =~ /\A(.*?)^Usage:/ms;
    for my $where (['the manual', $stats_prose], ['dqs stats --help', $stats_help // '']) {
        my ($name, $text) = @$where;
        my @missing = grep { $text !~ /\b\Q$_\E\b/ } sort keys %printed;
        is_deeply(\@missing, [], "$name names every key dqs stats prints");
        # Every name with an underscore there is a key (the reverse check).
        my %said = map { $_ => 1 } $text =~ /\b([a-z]+(?:_[a-z]+)+)\b/g;
        my @unknown = grep { !$printed{$_} } sort keys %said;
        is_deeply(\@unknown, [], "$name names no key dqs stats does not print");
    }
}

# ---- one version ----------------------------------------------------------
is(dqs(['--version'])->{out}, "dqs $Data::Queue::Shared::VERSION\n", 'dqs --version is the module\'s version');
{
    my ($cargo) = slurp("$root/Cargo.toml") =~ /^version = "([^"]+)"/m;
    my ($maj, $min) = $Data::Queue::Shared::VERSION =~ /\A(\d+)\.(\d+)\z/;
    is($cargo, defined $min ? "$maj." . ($min + 0) . '.0' : 'a version X.Y in Shared.pm',
       "Cargo.toml's version is the module's in semver spelling");
}
like($exit_pod // '', qr/^=item B<128 \+ N>$/m, 'so is death by a signal');

# ---- a clean POD, installed with the module -----------------------------
{
    my $checker = Pod::Checker->new(-warnings => 2, -quiet => 1);
    open my $null, '>', File::Spec->devnull or die "open: $!";
    $checker->parse_from_file($manual, $null);
    is($checker->num_errors, 0, 'the manual has no POD errors');
    is($checker->num_warnings, 0, '... and no POD warnings');
}
SKIP: {
    skip 'not built with make (no blib/)', 2 unless -d "$root/blib/lib";
    ok(-f "$root/blib/lib/Data/Queue/Shared/dqs.pod", 'make installs the manual with the module');
    ok(-x "$root/blib/script/dqs", '... and the dqs binary');
}

done_testing;
