#!/usr/bin/env perl
# What Str compression (Str->compress) buys: arena bytes per item, items a
# 1 MiB arena holds, and cross-process 1P1C throughput, compressed against
# plain in the same run, on two corpora of JSON objects generated once
# from a fixed seed (sizes as in Atomic::Pipe's zstd measurements):
# "small" 180 B - 2 KB, "large" 1 - 10 KB.
#
#   perl -Mblib bench/compress.pl [ITEMS [ROUNDS [LEVEL]]]
#
# ITEMS per throughput run (default 20000), ROUNDS of each (default 5;
# medians shown, the two modes alternating), LEVEL (default 3).
use strict;
use warnings;
use POSIX ();
use Time::HiRes qw(time);

use Data::Queue::Shared::Str;

$| = 1;
my $ITEMS  = shift // 20_000;
my $ROUNDS = shift // 5;
my $LEVEL  = shift // 3;

# --- the corpora: JSON objects with the keys, nesting, ids, timestamps,
# words and numbers of typical service messages. Fixed seed, no modules.
my $seed = 20260903;
sub r15 { $seed = ($seed * 1103515245 + 12345) % 2**31; $seed >> 16 }    # 15 bits
sub rnd { ((((r15() << 15) | r15()) << 15) | r15()) % $_[0] }             # 45 bits, mod n
my @WORDS = qw(order user account payment shipped pending failed active region eu-west us-east
               alpha beta gamma delta priority normal high low retry timeout ok created updated
               deleted invoice item quantity price currency EUR USD warehouse Berlin Paris Lyon);
sub word { $WORDS[rnd(scalar @WORDS)] }
sub object {
    my ($target) = @_;
    my $s = sprintf '{"id":"%08x-%04x","ts":"2026-%02d-%02dT%02d:%02d:%02d.%03dZ","type":"%s",'
        . '"user":{"id":%d,"name":"%s %s","tier":"%s"},"items":[', rnd(2**32), rnd(65536),
        1 + rnd(12), 1 + rnd(28), rnd(24), rnd(60), rnd(60), rnd(1000), word(), rnd(1e7),
        ucfirst word(), ucfirst word(), word();
    my $n = 0;
    while (length $s < $target - 120) {
        $s .= ',' if $n++;
        $s .= sprintf '{"sku":"%s-%d","qty":%d,"price":%d.%02d,"tags":["%s","%s"],"note":"%s %s %s"}',
            word(), rnd(10000), 1 + rnd(20), rnd(500), rnd(100), word(), word(), word(), word(), word();
    }
    return $s . sprintf '],"status":"%s","retries":%d}', word(), rnd(5);
}
sub corpus {
    my ($lo, $hi, $n) = @_;
    return [map { object($lo + rnd($hi - $lo + 1)) } 1 .. $n];
}
my %corpus = (small => corpus(180, 2000, 2000), large => corpus(1000, 10_000, 2000));

sub align8 { ($_[0] + 7) & ~7 }
sub median { my @s = sort { $a <=> $b } @_; $s[@s / 2] }

printf "zstd level %d; corpora: %s\n\n", $LEVEL,
    join('; ', map { my $c = $corpus{$_}; my $t = 0; $t += length for @$c;
                     sprintf '%s %d objects, %d-%d B, mean %d B', $_, scalar @$c,
                     (sort { $a <=> $b } map { length } @$c)[0, -1], $t / @$c } sort keys %corpus);

# --- arena bytes per item, and items a 1 MiB arena holds.
printf "%-6s %14s %14s %7s %12s %12s\n", 'corpus', 'arena B/item', 'compressed', 'ratio',
    'in 1 MiB', 'compressed';
for my $name (qw(small large)) {
    my $c = $corpus{$name};
    my ($plain, $packed) = (0, 0);
    my $q = Data::Queue::Shared::Str->new(undef, 4, 1 << 16);
    $q->compress(1, $LEVEL);
    for my $doc (@$c) {
        $q->push($doc) or die 'push';
        $packed += $q->stats->{arena_used};
        $plain += align8(length $doc);
        $q->pop;
    }
    my @fits;
    for my $min (0, 1) {
        my $f = Data::Queue::Shared::Str->new(undef, 1 << 16, 1 << 20);
        $f->compress($min, $LEVEL);
        my $i = 0;
        $i++ while $f->push($c->[$i % @$c]);
        push @fits, $i;
    }
    printf "%-6s %14.0f %14.0f %6.2fx %12d %12d\n", $name, $plain / @$c, $packed / @$c,
        $packed / $plain, @fits;
}

# --- cross-process 1P1C: a child pushes $ITEMS objects (push_wait), the
# parent pops them (pop_wait); time from the first push to the last pop.
sub xproc {
    my ($c, $compress) = @_;
    my $q = Data::Queue::Shared::Str->new(undef, 1024, 4 << 20);
    pipe(my $r, my $w) or die "pipe: $!";
    my $pid = fork // die "fork: $!";
    if (!$pid) {
        close $r;
        $q->compress($compress ? 512 : 0, $LEVEL);
        syswrite $w, 'go';
        $q->push_wait($c->[$_ % @$c], 10) or POSIX::_exit(1) for 0 .. $ITEMS - 1;
        POSIX::_exit(0);
    }
    close $w;
    sysread $r, my $go, 2;
    my ($t0, $bytes) = (time, 0);
    for (1 .. $ITEMS) {
        my $v = $q->pop_wait(10) // die 'pop_wait timed out';
        $bytes += length $v;
    }
    my $dt = time - $t0;
    waitpid $pid, 0;
    die "producer failed: $?" if $?;
    return ($ITEMS / $dt, $bytes / $dt / 1e6);
}

print "\ncross-process 1P1C, $ITEMS items per run, median of $ROUNDS (modes alternating)\n";
printf "%-6s %-11s %12s %10s\n", 'corpus', 'mode', 'items/s', 'MB/s';
for my $name (qw(large small)) {
    my %r;
    for (1 .. $ROUNDS) {
        for my $mode (qw(plain compressed)) {
            my @x = xproc($corpus{$name}, $mode eq 'compressed');
            push @{ $r{$mode}{ips} }, $x[0];
            push @{ $r{$mode}{mbs} }, $x[1];
        }
    }
    for my $mode (qw(plain compressed)) {
        printf "%-6s %-11s %12.0f %10.1f\n", $name, $mode, median(@{ $r{$mode}{ips} }),
            median(@{ $r{$mode}{mbs} });
    }
}
