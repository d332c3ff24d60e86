# 32 producer and 32 consumer processes on one small queue: nothing lost,
# nothing duplicated, per-producer order kept, and exact stats at the end.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(110);

my $P     = 32;     # producers
my $C     = 32;     # consumers
my $EACH  = 1000;   # items per producer (values stay within Int16)
my $TOTAL = $P * $EACH;
my $dir   = tmpdir();

my %backing = (
    'Data::Queue::Shared::Int'   => sub { $_[0]->new(undef, 64) },
    'Data::Queue::Shared::Int32' => sub { $_[0]->new("$dir/stress32.shm", 64) },
    'Data::Queue::Shared::Int16' => sub { $_[0]->new_memfd('dqs-stress', 64) },
);

sub producer {
    my ($q, $p) = @_;
    my @vals = map { $p * $EACH + $_ } 0 .. $EACH - 1;
    if ($p % 2) {
        for my $v (@vals) {
            next if $q->push($v);
            until ($q->push_wait($v, 0.02)) { }
        }
    }
    else {    # batches
        while (@vals) {
            my $n = $q->push_multi(@vals[0 .. ($#vals < 9 ? $#vals : 9)]);
            splice @vals, 0, $n;
            if (!$n && @vals) {
                $q->push_wait($vals[0], 0.02) and shift @vals;
            }
        }
    }
}

sub consumer {
    my ($q, $i, $flag, $out) = @_;
    my @got;
    while (1) {
        my @v = $i % 2 ? $q->pop : $q->pop_multi(8);
        @v = () if @v == 1 && !defined $v[0];
        if (!@v) {
            if (-e $flag) {    # every producer is done: empty now means empty for good
                @v = $q->drain;
                last unless @v;
            }
            else {
                @v = $i % 2 ? $q->pop_wait(0.02) : $q->pop_wait_multi(8, 0.02);
                @v = () if @v == 1 && !defined $v[0];
            }
        }
        push @got, @v;
    }
    open my $fh, '>', $out or die "open $out: $!";
    print {$fh} map { "$_\n" } @got;
    close $fh or die "close $out: $!";
}

for my $class (@INT_CLASSES) {
    subtest "$class: $P producers x $C consumers, $TOTAL items" => sub {
        my $q = $backing{$class}->($class);
        (my $tag = $class) =~ s/\W+/_/g;
        my $flag = "$dir/$tag.done";

        my @consumers = map {
            my $i = $_;
            spawn(sub { consumer($q, $i, $flag, "$dir/$tag.c$i") }, timeout => 90);
        } 0 .. $C - 1;
        my @producers = map {
            my $p = $_;
            spawn(sub { producer($q, $p) }, timeout => 90);
        } 0 .. $P - 1;

        my $ok = 0;
        $ok += reap($_) == 0 ? 1 : 0 for @producers;
        is($ok, $P, 'every producer finished cleanly');
        open my $fh, '>', $flag or die;
        close $fh;
        $ok = 0;
        $ok += reap($_) == 0 ? 1 : 0 for @consumers;
        is($ok, $C, 'every consumer finished cleanly');

        my (@all, $order_bad);
        for my $i (0 .. $C - 1) {
            open my $in, '<', "$dir/$tag.c$i" or die "consumer $i left no output: $!";
            chomp(my @got = <$in>);
            push @all, @got;
            my %last;
            for my $v (@got) {
                my $p = int($v / $EACH);
                $order_bad //= "consumer $i saw $v after $last{$p}"
                    if defined $last{$p} && $v <= $last{$p};
                $last{$p} = $v;
            }
        }
        is(scalar @all, $TOTAL, 'consumers popped exactly as many items as were pushed');
        my @sorted = sort { $a <=> $b } @all;
        is_deeply(\@sorted, [0 .. $TOTAL - 1], 'the popped multiset equals the pushed one');
        ok(!defined $order_bad, 'each consumer saw each producer\'s items in order')
            or diag($order_bad);

        my $s = $q->stats;
        is($s->{push_ok}, $TOTAL, 'stats push_ok is exact');
        is($s->{pop_ok}, $TOTAL, 'stats pop_ok is exact');
        is($s->{size}, 0, 'stats size 0');
        is($q->size, 0, 'size 0');
        is($s->{push_waiters}, 0, 'no push waiters left');
        is($s->{pop_waiters}, 0, 'no pop waiters left');
        diag(sprintf '%s: push_full %d, pop_empty %d', $class, $s->{push_full}, $s->{pop_empty})
            if $ENV{TEST_VERBOSE};
    };
}

done_testing;
