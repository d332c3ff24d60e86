# The dqs manual (lib/Data/Queue/Shared/dqs.pod) keeps up with the tool:
# every subcommand that `dqs --help` lists has a section under SUBCOMMANDS
# with its exit status and an example, every long option of `dqs CMD
# --help` is in that section, every exit code of the help's "Exit codes"
# is under EXIT CODES, and the POD is clean. The build installs the manual
# and the binary (blib/).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSCli;
use File::Spec ();
use Pod::Checker ();
use Test::More;

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
