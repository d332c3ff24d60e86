# Stress (author test): 32 producer and 32 consumer processes busy-spinning
# with non-blocking push and pop on a 16-slot queue. Every value comes out
# exactly once, each producer's values in order within every consumer, and
# the counters agree exactly at the end.
#
#     AUTHOR_TESTING=1 prove -l xt/stress-mpmc-spin.t
#     DQS_STRESS_N=5000 ...   # items per producer (default 5000)
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/../t/lib";
use DQSTest;
use Test::More;

BEGIN {
    plan skip_all => 'author test: set AUTHOR_TESTING=1' unless $ENV{AUTHOR_TESTING};
}
use Data::Queue::Shared::Int;

watchdog(300);
my $P   = 32;
my $C   = 32;
my $N   = $ENV{DQS_STRESS_N} || 5000;
my $dir = tmpdir();

for my $class (qw(Data::Queue::Shared::Int Data::Queue::Shared::Str)) {
    subtest "$class: ${P}P x ${C}C x $N, capacity 16" => sub {
        my $q = $class eq 'Data::Queue::Shared::Str'
            ? $class->new(undef, 16, 4096)
            : $class->new(undef, 16);
        my $tag = $class =~ /Str/ ? 's' : 'i';
        my @prod = map {
            my $p = $_;
            spawn(sub {
                my $base = ($p + 1) * 1_000_000;
                for my $i (1 .. $N) {
                    my $v = $base + $i;
                    1 until $q->push($v);
                }
            }, timeout => 280);
        } 0 .. $P - 1;
        my @cons = map {
            my $c = $_;
            spawn(sub {
                open my $out, '>', "$dir/$tag$c" or die "open: $!";
                my @got;
                while (1) {
                    my $v = $q->pop;
                    next unless defined $v;
                    last if $v == -1;
                    push @got, $v;
                }
                print {$out} "$_\n" for @got;
                close $out or die "close: $!";
            }, timeout => 280);
        } 0 .. $C - 1;
        my $bad = 0;
        reap($_) == 0 or $bad++ for @prod;
        is($bad, 0, 'every producer finished cleanly');
        # One end marker per consumer, pushed once every value is in.
        for (1 .. $C) { 1 until $q->push(-1) }
        $bad = 0;
        reap($_) == 0 or $bad++ for @cons;
        is($bad, 0, 'every consumer finished cleanly');

        my (%seen, $dups, $order);
        $dups = $order = 0;
        for my $c (0 .. $C - 1) {
            open my $in, '<', "$dir/$tag$c" or die "open: $!";
            my %last;
            while (my $v = <$in>) {
                chomp $v;
                $dups++ if $seen{$v}++;
                my ($p, $i) = (int($v / 1_000_000), $v % 1_000_000);
                $order++ if ($last{$p} // 0) >= $i;
                $last{$p} = $i;
            }
        }
        is(scalar keys %seen, $P * $N, 'every value delivered');
        is($dups, 0, 'no value delivered twice');
        is($order, 0, "each producer's values in order within each consumer");
        my @missing = grep { !$seen{$_} }
            map { my $p = $_; map { ($p + 1) * 1_000_000 + $_ } 1 .. $N } 0 .. $P - 1;
        is(scalar @missing, 0, 'nothing missing') or diag("missing: @missing[0 .. 9]");
        my $s = $q->stats;
        is($s->{push_ok}, $P * $N + $C, 'push_ok counts every push');
        is($s->{pop_ok},  $P * $N + $C, 'pop_ok counts every pop');
        is($s->{size}, 0, 'empty at the end');
        is($q->pop, undef, 'really empty');
        is($s->{push_waiters} + $s->{pop_waiters}, 0, 'nobody registered as waiting');
    };
}

done_testing;
