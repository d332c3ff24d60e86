# The manual is a page per class and topic (THE MANUAL in
# Data::Queue::Shared lists them), and the pages hold together: each is
# clean POD; every link into a page of ours names a section or item that
# page has; every method of each class is documented where its users look
# (the integer classes on the Int page, Str on its own page, the event
# loop methods once for all four); the index links every page; and make
# installs the .pod pages but not the benchmark results nor HACKING.pod.
# (t/55-docs-names.t checks that the files the pages name exist.)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use File::Find ();
use File::Spec ();
use Pod::Checker ();
use Pod::Simple::SimpleTree ();
use Test::More;

use Data::Queue::Shared ();

watchdog(60);

my $root = File::Spec->catdir($FindBin::Bin, File::Spec->updir);

sub slurp {
    my ($path) = @_;
    open my $fh, '<', $path or die "open $path: $!";
    local $/;
    return scalar <$fh>;
}

# Module name => file, for every page of ours that L<> can name.
my %PAGE = (
    'Data::Queue::Shared'         => 'lib/Data/Queue/Shared.pm',
    'Data::Queue::Shared::Int'    => 'lib/Data/Queue/Shared/Int.pm',
    'Data::Queue::Shared::Int32'  => 'lib/Data/Queue/Shared/Int32.pm',
    'Data::Queue::Shared::Int16'  => 'lib/Data/Queue/Shared/Int16.pm',
    'Data::Queue::Shared::Str'    => 'lib/Data/Queue/Shared/Str.pm',
    'Data::Queue::Shared::Format' => 'lib/Data/Queue/Shared/Format.pod',
    'Data::Queue::Shared::Leases' => 'lib/Data/Queue/Shared/Leases.pod',
    'Data::Queue::Shared::dqs'    => 'lib/Data/Queue/Shared/dqs.pod',
);
# Pages that are not modules: checked the same way, never linked by name.
my @OTHER = ('README.pod', 'HACKING.pod', 'bench/RESULTS.pod');

# Every .pm and .pod under lib/ is a page of %PAGE (a new page must be
# added here, and to the index below).
{
    my @found;
    File::Find::find({ no_chdir => 1,
                       wanted => sub { push @found, File::Spec->abs2rel($_, $root) if /\.p(?:m|od)\z/ } },
                     "$root/lib");
    my %known = map { $_ => 1 } values %PAGE;
    ok($known{$_}, "$_ is a page this test knows") for sort @found;
}

# ---- parse every page: its anchors (headings, items) and its links ------
sub plain {    # the text of a SimpleTree node, formatting codes dropped
    my ($node) = @_;
    return $node unless ref $node;
    return join '', map { plain($_) } @{$node}[2 .. $#$node];
}
sub squash { my $s = shift; $s =~ s/\s+/ /g; $s =~ s/\A | \z//g; return $s }

my (%anchors, %links);    # file => { anchor => 1 }, file => [ [to, section] ]
for my $file (values %PAGE, @OTHER) {
    my $tree = Pod::Simple::SimpleTree->new->parse_file("$root/$file")->root;
    my @todo = ($tree);
    while (my $node = shift @todo) {
        next unless ref $node;
        my ($name, $attr) = @$node;
        if ($name =~ /\Ahead\d\z|\Aitem-text\z/) {
            my $text = squash(plain($node));
            $anchors{$file}{$text} = 1;
            # "=item size, capacity" documents both names.
            $anchors{$file}{$_} = 1 for split /, /, $text;
        }
        if ($name eq 'L' && $attr->{type} eq 'pod') {
            push @{ $links{$file} },
                [ defined $attr->{to} ? "$attr->{to}" : undef,
                  defined $attr->{section} ? squash("$attr->{section}") : undef ];
        }
        push @todo, @{$node}[2 .. $#$node];
    }
    ok(scalar keys %{ $anchors{$file} }, "$file has headings");
}

# ---- clean POD ----------------------------------------------------------
# At podchecker's default level: its second level also warns about an item
# named like another, which the Int page has on purpose (the stats keys
# size and capacity beside the methods of those names).
for my $file (sort(values %PAGE), @OTHER) {
    my $checker = Pod::Checker->new(-warnings => 1, -quiet => 1);
    open my $null, '>', File::Spec->devnull or die "open: $!";
    $checker->parse_from_file("$root/$file", $null);
    is($checker->num_errors, 0, "$file: no POD errors (internal links included)");
    is($checker->num_warnings, 0, "$file: no POD warnings");
}

# ---- links into our pages land on a section or item ---------------------
for my $file (sort keys %links) {
    for my $link (@{ $links{$file} }) {
        my ($to, $section) = @$link;
        next unless defined $to ? $to =~ /\AData::Queue::Shared(?:::|\z)/ : 0;
        my $target = $PAGE{$to};
        ok($target, "$file: L<$to> is a page of ours") or next;
        next unless defined $section;
        ok($anchors{$target}{$section}, "$file: L<$to/\"$section\"> is a heading or item there");
    }
}

# ---- every method documented where its class's users look --------------
# The event loop methods are described once, for all four classes, under
# EVENT LOOPS on the Int page, and the lease methods under METHODS of
# the Leases page (which the Int page's Leases section and Str's LEASES
# point to); a Str constructor is shown as a call
# (Data::Queue::Shared::Str->new_memfd(...)) under CONSTRUCTORS.
my $main = slurp("$root/lib/Data/Queue/Shared.pm");
my $int  = slurp("$root/lib/Data/Queue/Shared/Int.pm");
my ($event_loops) = $int =~ /^=head1 EVENT LOOPS\n(.*?)^=head1 /ms;
my %for_all = map { $_ => 1 } ($event_loops // '') =~ /^=item (\w+)\s*$/mg;
ok($for_all{eventfd}, 'EVENT LOOPS documents eventfd (and the others) for all classes');
my ($lease_methods) = slurp("$root/lib/Data/Queue/Shared/Leases.pod") =~ /^=head1 METHODS\n(.*?)^=head1 /ms;
my %leases = map { $_ => 1 } ($lease_methods // '') =~ /^=head2 (\w+)\s*$/mg;
ok($leases{pop_lease} && $leases{ack}, 'Leases documents pop_lease and ack (and the others) for all classes');
%for_all = (%for_all, %leases);
like($int, qr/^=head2 Leases\n.*?L<Data::Queue::Shared::Leases>/ms, 'the Int page points to the Leases page');
like(slurp("$root/lib/Data/Queue/Shared/Str.pm"), qr/^=head1 LEASES\n.*?L<Data::Queue::Shared::Leases>/ms,
     'the Str page points to the Leases page');
my $str_pod = slurp("$root/lib/Data/Queue/Shared/Str.pm");
my %str_shown = map { $_ => 1 } $str_pod =~ /^ +my \$\w+ = Data::Queue::Shared::Str->(\w+)\(/mg;

for my $class (qw(Int Int32 Int16 Str)) {
    my $pkg  = "Data::Queue::Shared::$class";
    my $page = $class eq 'Str' ? $PAGE{$pkg} : $PAGE{'Data::Queue::Shared::Int'};
    no strict 'refs';
    my @methods = sort grep { defined &{"${pkg}::$_"} && !/\A_|\A(?:DESTROY|CLONE_SKIP|import|unimport)\z/ }
                  keys %{"${pkg}::"};
    cmp_ok(scalar @methods, '>=', 25, "$pkg has its methods");
    for my $m (@methods) {
        ok($anchors{$page}{$m} || $for_all{$m} || ($class eq 'Str' && $str_shown{$m}),
           "$pkg->$m is documented in $page");
    }
}

# ---- the index: THE MANUAL links every page ----------------------------
my ($index) = $main =~ /^=head1 THE MANUAL\n(.*?)^=head1 /ms;
for my $page (sort keys %PAGE) {
    like($index // '', qr/L<\Q$page\E>/, "THE MANUAL links $page");
}
like($index // '', qr{F<bench/RESULTS\.pod>}, 'THE MANUAL names bench/RESULTS.pod');

# ---- installed with the module, the results not -------------------------
SKIP: {
    skip 'not built with make (no blib/)', 5 unless -d "$root/blib/lib";
    ok(-f "$root/blib/lib/Data/Queue/Shared/Format.pod", 'make installs the format page');
    ok(-f "$root/blib/lib/Data/Queue/Shared/Str.pm", '... and the Str page');
    ok(!-e "$root/blib/lib/bench/RESULTS.pod" && !-e "$root/blib/lib/RESULTS.pod",
       '... but not the benchmark results');
    ok(!-e "$root/blib/lib/HACKING.pod" && !glob("$root/blib/man3/*HACKING*"),
       '... nor HACKING.pod');
    my @man3 = glob "$root/blib/man3/*Format*";
    ok(@man3 || !-d "$root/blib/man3", '... and makes a man page of the format page')
        or diag 'blib/man3 has no Format page: rerun perl Makefile.PL';
}

done_testing;
