# Stress (author test): a Str queue with the smallest arena (4096 bytes)
# under concurrent producers and consumers that use pop_wait, pop_wait_multi
# with a byte budget, pop_multi and drain. Items of 0 to 700 bytes make the
# arena wrap and fill constantly. Every item is delivered exactly once,
# intact, each producer's items in order within each consumer, and the
# counters agree at the end.
#
#     AUTHOR_TESTING=1 prove -l xt/stress-str-arena.t
#     DQS_STRESS_N=20000 ...   # items per producer (default 20000)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/../t/lib";
use DQSTest;
use Test::More;
use Time::HiRes ();

BEGIN {
    plan skip_all => 'author test: set AUTHOR_TESTING=1' unless $ENV{AUTHOR_TESTING};
}
use Data::Queue::Shared::Str;

watchdog(300);
my $P   = 4;
my $N   = $ENV{DQS_STRESS_N} || 20000;
my $dir = tmpdir();
my $END = 'END';

# Item $i of producer $p: a header, then filler up to a length that depends
# only on ($p, $i), so the reader can check it is intact.
sub item {
    my ($p, $i) = @_;
    my $len = ($p * 7919 + $i * 104729) % 701;
    my $s = "$p:$i:";
    return $len <= length $s ? $s : $s . chr(65 + ($i % 26)) x ($len - length $s);
}

my %mode = (
    pop_wait  => sub { my $v = $_[0]->pop_wait(30); defined $v ? ($v) : () },
    wait_multi => sub { $_[0]->pop_wait_multi(5, 30, 1500) },
    pop_multi => sub {
        my @v = $_[0]->pop_multi(7);
        Time::HiRes::sleep(0.0002) unless @v;
        @v;
    },
    drain => sub {
        my @v = $_[0]->drain;
        Time::HiRes::sleep(0.0005) unless @v;
        @v;
    },
);
my @modes = sort keys %mode;

my $q = Data::Queue::Shared::Str->new(undef, 64, 4096);
is($q->stats->{arena_cap}, 4096, 'arena of 4096 bytes');

my @prod = map {
    my $p = $_;
    spawn(sub { $q->push_wait(item($p, $_), 30) or die "push_wait timed out\n" for 1 .. $N },
          timeout => 280);
} 1 .. $P;
my @cons = map {
    my $m = $modes[$_];
    my $c = $_;
    spawn(sub {
        open my $out, '>', "$dir/c$c" or die "open: $!";
        my $ends = 0;
        while (!$ends) {
            for my $v ($mode{$m}->($q)) {
                if ($v eq $END) { $ends++; next }
                print {$out} "$v\n";
            }
        }
        # Pass on end markers meant for the others.
        $q->push_wait($END, 30) or die "re-push END\n" for 2 .. $ends;
        close $out or die "close: $!";
    }, timeout => 280);
} 0 .. $#modes;

my $bad = 0;
reap($_) == 0 or $bad++ for @prod;
is($bad, 0, 'every producer finished cleanly');
$q->push_wait($END, 30) or die "push END" for @cons;
$bad = 0;
reap($_) == 0 or $bad++ for @cons;
is($bad, 0, 'every consumer finished cleanly');

my (%seen, $dups, $corrupt, $order, %by_mode);
$dups = $corrupt = $order = 0;
for my $c (0 .. $#modes) {
    open my $in, '<', "$dir/c$c" or die "open: $!";
    my %last;
    while (my $v = <$in>) {
        chomp $v;
        my ($p, $i) = $v =~ /\A(\d+):(\d+):/ or do { $corrupt++; next };
        $corrupt++ if $v ne item($p, $i);
        $dups++ if $seen{"$p:$i"}++;
        $order++ if ($last{$p} // 0) >= $i;
        $last{$p} = $i;
        $by_mode{ $modes[$c] }++;
    }
}
is(scalar keys %seen, $P * $N, 'every item delivered');
is($dups, 0, 'no item delivered twice');
is($corrupt, 0, 'every item intact');
is($order, 0, "each producer's items in order within each consumer");
diag(join ', ', map { "$_: " . ($by_mode{$_} // 0) } @modes);
my $s = $q->stats;
is($s->{push_ok}, $s->{pop_ok}, 'push_ok equals pop_ok');
is($s->{size}, 0, 'empty at the end');
is($s->{arena_used}, 0, 'arena all free');
is($q->pop, undef, 'really empty');

done_testing;
