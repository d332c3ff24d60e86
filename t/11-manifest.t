# The release tarball is MANIFEST: every file git tracks is either listed
# there or matched by MANIFEST.SKIP, and every listed file is tracked (a
# renamed or removed file leaves no stale line). Also: each test file has a
# number of its own, so the order prove runs them in says what they are.
# Only in a git checkout: the unpacked release tree has no .git and skips.
use strict;
use warnings;

use FindBin;
use Test::More;
use File::Spec;
use Cwd qw(abs_path);
use ExtUtils::Manifest qw(maniread maniskip);

my $root = abs_path("$FindBin::Bin/..");
chdir $root or die "chdir $root: $!";

# The top of a git work tree (.git is a directory, or a file in a worktree);
# a tarball unpacked inside some other repository is not one.
my $top = -e '.git' ? `git rev-parse --show-toplevel 2>/dev/null` : '';
chomp $top;
plan skip_all => 'not a git checkout (the release tree is MANIFEST itself)'
    unless $top ne '' && abs_path($top) eq $root;

my @tracked = do {
    local $/ = "\0";
    open my $git, '-|', qw(git ls-files -z --cached) or die "git ls-files: $!";
    map { chomp; $_ } <$git>;
};
ok(@tracked, 'git ls-files lists the tracked files') or BAIL_OUT('git ls-files failed');
# A file deleted in the work tree but not yet in the index is gone already.
@tracked = grep { -e } @tracked;

my $skip = maniskip();    # reads ./MANIFEST.SKIP
my $manifest = do {
    local $SIG{__WARN__} = sub { fail("MANIFEST: @_") };
    maniread('MANIFEST');
};
my %tracked = map { $_ => 1 } @tracked;

my @unlisted = grep { !$skip->($_) && !exists $manifest->{$_} } @tracked;
is_deeply(\@unlisted, [], 'every tracked file not matched by MANIFEST.SKIP is in MANIFEST')
    or diag "add to MANIFEST:\n", map { "  $_\n" } @unlisted;

my @stale = grep { !$tracked{$_} } sort keys %$manifest;
is_deeply(\@stale, [], 'every file in MANIFEST is tracked by git')
    or diag "not tracked (renamed or removed?):\n", map { "  $_\n" } @stale;

my @skipped = grep { $skip->($_) } sort keys %$manifest;
is_deeply(\@skipped, [], 'no file in MANIFEST is matched by MANIFEST.SKIP')
    or diag map { "  $_\n" } @skipped;

my %by_number;
for my $t (grep { m{^t/[^/]+\.t\z} } @tracked) {
    my ($n) = $t =~ m{^t/(\d+)-} or do { fail("$t has no number"); next };
    push @{ $by_number{$n} }, $t;
}
my @shared = map { "$_: @{ $by_number{$_} }" } grep { @{ $by_number{$_} } > 1 } sort keys %by_number;
is_deeply(\@shared, [], 'each test file has a number of its own') or diag map { "  $_\n" } @shared;

done_testing;
