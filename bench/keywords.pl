#!/usr/bin/env perl
# Keyword (custom op) against method call for push + pop, per class, in one
# process. The two forms run interleaved (which goes first alternates), each
# ROUNDS times; the medians are reported, with the cost of the empty loop.
#
#     perl -Mblib bench/keywords.pl [N] [ROUNDS]
#
# For instruction counts, --only runs one form for N iterations and
# nothing else; the difference between two N under callgrind, divided by
# the difference in N, is the cost of one push + pop:
#
#     for n in 100000 200000; do
#       valgrind --tool=callgrind --callgrind-out-file=/dev/null \
#         perl -Mblib bench/keywords.pl --only=keyword $n 2>&1 | grep Collected
#     done
use strict;
use warnings;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);

BEGIN {
    require Data::Queue::Shared;
    $Data::Queue::Shared::HAVE_KEYWORDS
        or die "Data::Queue::Shared was built without the keyword API (XS::Parse::Keyword)\n";
}
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

my ($only, $class_opt) = (undef, 'Int');
@ARGV = grep {
    /^--only=(method|keyword|empty)$/ ? do { $only = $1; 0 }
  : /^--class=(Int|Int32|Int16|Str)$/ ? do { $class_opt = $1; 0 }
  : 1
} @ARGV;
my $N      = shift // 1_000_000;
my $ROUNDS = shift // 7;
$N =~ /^\d+$/ && $N > 0 && $ROUNDS =~ /^\d+$/ && $ROUNDS > 0
    or die "usage: $0 [--only=method|keyword|empty] [--class=Int|Int32|Int16|Str] [N] [ROUNDS]\n";

# Each form: a sub running $n push + pop pairs on $q. The loops are written
# out per form so that nothing but the call differs.
my %FORMS = (
    Int => {
        method  => sub { my ($q, $n) = @_; for my $i (1 .. $n) { $q->push($i); $q->pop } },
        keyword => sub { my ($q, $n) = @_; for my $i (1 .. $n) { q_int_push $q, $i; q_int_pop $q } },
    },
    Int32 => {
        method  => sub { my ($q, $n) = @_; for my $i (1 .. $n) { $q->push($i); $q->pop } },
        keyword => sub { my ($q, $n) = @_; for my $i (1 .. $n) { q_int32_push $q, $i; q_int32_pop $q } },
    },
    Int16 => {
        method  => sub { my ($q, $n) = @_; for my $i (1 .. $n) { $q->push($i); $q->pop } },
        keyword => sub { my ($q, $n) = @_; for my $i (1 .. $n) { q_int16_push $q, $i; q_int16_pop $q } },
    },
    Str => {
        method  => sub { my ($q, $n) = @_; for my $i (1 .. $n) { $q->push('message'); $q->pop } },
        keyword => sub { my ($q, $n) = @_; for my $i (1 .. $n) { q_str_push $q, 'message'; q_str_pop $q } },
    },
);
my $EMPTY = sub { my ($q, $n) = @_; for my $i (1 .. $n) { } };

sub queue_for { "Data::Queue::Shared::$_[0]"->new(undef, 1024) }

if ($only) {
    my $q = queue_for($class_opt);
    ($only eq 'empty' ? $EMPTY : $FORMS{$class_opt}{$only})->($q, $N);
    exit 0;
}

sub ns_per_iter {
    my ($code, $q) = @_;
    my $t0 = clock_gettime(CLOCK_MONOTONIC);
    $code->($q, $N);
    return (clock_gettime(CLOCK_MONOTONIC) - $t0) / $N * 1e9;
}

sub median {
    my @s = sort { $a <=> $b } @_;
    return @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2;
}

$| = 1;
printf "push + pop, one process, %d iterations x %d interleaved rounds, medians (ns per push+pop)\n",
    $N, $ROUNDS;
printf "%-28s %10s %10s %8s %14s\n", 'class', 'method', 'keyword', 'ratio', 'ratio-no-loop';
for my $class (qw(Int Int32 Int16 Str)) {
    my $q = queue_for($class);
    my (%t, @empty);
    $FORMS{$class}{$_}->($q, 10_000) for qw(method keyword);    # warm up
    for my $r (1 .. $ROUNDS) {
        my @order = $r % 2 ? qw(method keyword) : qw(keyword method);
        push @{ $t{$_} }, ns_per_iter($FORMS{$class}{$_}, $q) for @order;
        push @empty, ns_per_iter($EMPTY, $q);
    }
    my ($m, $k, $e) = (median(@{ $t{method} }), median(@{ $t{keyword} }), median(@empty));
    printf "%-28s %10.1f %10.1f %7.2fx %13.2fx\n", "Data::Queue::Shared::$class", $m, $k,
        $m / $k, ($m - $e) / ($k - $e);
    printf "  %-26s %s\n", "all $_ rounds", join ' ', map { sprintf '%.1f', $_ } @{ $t{$_} }
        for qw(method keyword);
    printf "  %-26s %.1f\n", 'empty loop (median)', $e;
}
