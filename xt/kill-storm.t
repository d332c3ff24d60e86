# Kill storm (author test): producers and consumers on one file-backed
# queue, SIGKILLed at random moments and respawned, for DQS_STORM_SECS
# seconds (default 30) per variant (Int, then Str). Then everything left is
# drained and the logs are checked:
#
#   * every value whose push returned true was popped exactly once, except
#     values a consumer had popped and not yet logged when it was killed
#     (at most the batch it was asking for: counted, and the number of
#     missing values must not exceed that budget);
#   * nothing was popped twice, nothing was popped that was never pushed;
#   * per producer, each consumer saw the values in push order (FIFO);
#   * nothing hangs: pops keep succeeding while there are items (a
#     progress watchdog reports a wedged queue with its stats).
#
# Logs (append-only, one syswrite per line, a torn last line is ignored):
#   producer:  "T a b"  about to push seqs a..b (a push, a push_wait or a
#                       batch: push_multi / push_wait_multi)
#              "P a c"  the call returned true / a count: a..c are in
#              A killed producer's trailing "T a b" is the documented
#              ambiguity: a..b may or may not have gone in.
#   consumer:  "W k"    about to pop up to k
#              "G v.."  what that call returned
#              A killed consumer's trailing "W k" adds k to the loss budget.
#
#     AUTHOR_TESTING=1 prove -lv xt/kill-storm.t
#     DQS_STORM_SECS=5 DQS_STORM_VARIANTS=Str AUTHOR_TESTING=1 prove -lv xt/kill-storm.t
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/../t/lib";
use DQSTest;
use Test::More;
use POSIX ();
use Time::HiRes ();

BEGIN {
    plan skip_all => 'author test: set AUTHOR_TESTING=1' unless $ENV{AUTHOR_TESTING};
}

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

my $SECS      = $ENV{DQS_STORM_SECS} // 30;
my $PRODUCERS = $ENV{DQS_STORM_PRODUCERS} // 3;
my $CONSUMERS = $ENV{DQS_STORM_CONSUMERS} // 3;
my $WEDGE     = $ENV{DQS_STORM_WEDGE_SECS} // 10;
my %VARIANTS  = map { $_ => 1 } split /,/, ($ENV{DQS_STORM_VARIANTS} // 'Int,Str');
my $CAP       = 64;
my $MAXBATCH  = 8;

watchdog(2 * $SECS * keys(%VARIANTS) + 120 * keys(%VARIANTS));
my $dir = tmpdir();

# Values: the stream (producer slot and incarnation) and the sequence
# number within the stream.
sub encode {
    my ($str, $stream, $seq) = @_;
    return $stream * 2**24 + $seq unless $str;
    return "$stream:$seq:" . ('x' x (($stream * 7 + $seq * 13) % 97));
}

sub decode {
    my ($str, $v) = @_;
    if ($str) {
        $v =~ /^(\d+):(\d+):x*\z/ or return;
        return ($1, $2);
    }
    return if $v !~ /^\d+\z/;
    return (int($v / 2**24), $v % 2**24);
}

sub logline {
    my ($fh, $line) = @_;
    my $n = syswrite($fh, "$line\n");
    die "log write: $!\n" unless defined $n && $n == length($line) + 1;
}

sub open_queue {
    my ($str, $path) = @_;
    return $str ? Data::Queue::Shared::Str->new($path, $CAP, 8192)
                : Data::Queue::Shared::Int->new($path, $CAP);
}

sub producer {
    my ($str, $path, $log, $stream, $seed) = @_;
    srand($seed);
    my $q = open_queue($str, $path);
    open(my $fh, '>>', $log) or die "$log: $!";
    my $seq = 0;
    while (1) {
        my $k = 1 + int rand $MAXBATCH;
        my $op = int rand 4;
        $k = 1 if $op < 2;
        my @v = map { encode($str, $stream, $seq + $_) } 0 .. $k - 1;
        logline($fh, "T $seq " . ($seq + $k - 1));
        my $n = $op == 0 ? ($q->push($v[0]) ? 1 : 0)
              : $op == 1 ? ($q->push_wait($v[0], 0.05) ? 1 : 0)
              : $op == 2 ? $q->push_multi(@v)
              :            $q->push_wait_multi(0.05, @v);
        if ($n) {
            logline($fh, "P $seq " . ($seq + $n - 1));
            $seq += $n;
        }
        Time::HiRes::sleep(0.002) if !$n || rand() < 0.1;
    }
}

sub consumer {
    my ($str, $path, $log, $seed) = @_;
    srand($seed);
    my $q = open_queue($str, $path);
    open(my $fh, '>>', $log) or die "$log: $!";
    while (1) {
        my $op = int rand 5;
        my $k = $op < 2 ? 1 : 1 + int rand $MAXBATCH;
        logline($fh, "W $k");
        my @got = $op == 0 ? grep { defined } $q->pop
                : $op == 1 ? grep { defined } $q->pop_wait(0.05)
                : $op == 2 ? $q->pop_multi($k)
                : $op == 3 ? $q->pop_wait_multi($k, 0.05)
                :            $q->drain($k);
        logline($fh, join ' ', 'G', map { $str ? "<$_>" : $_ } @got) if @got;
        Time::HiRes::sleep(0.002) if !@got;
    }
}

# Complete lines of a log (a line torn by the kill is dropped).
sub lines_of {
    my ($file) = @_;
    open(my $fh, '<', $file) or return ();
    local $/;
    my $all = <$fh> // '';
    my @l = split /\n/, $all, -1;
    pop @l;    # the part after the last newline: empty, or torn
    return @l;
}

sub storm {
    my ($variant) = @_;
    my $str  = $variant eq 'Str';
    my $path = "$dir/storm-$variant.q";
    my $q    = open_queue($str, $path);
    my $logs = "$dir/logs-$variant";
    mkdir $logs or die;
    my (%procs, @producer_logs, @consumer_logs);
    my ($pgen, $cgen, $kills_p, $kills_c, $unexpected) = (0, 0, 0, 0, 0);

    my $start_one = sub {
        my ($role, $slot) = @_;
        my ($pid, $log);
        if ($role eq 'P') {
            my $stream = $slot * 10000 + ++$pgen;
            $log = "$logs/p-$stream.log";
            push @producer_logs, [$log, $stream];
            $pid = spawn(sub { producer($str, $path, $log, $stream, $stream) }, timeout => $SECS + 120);
        }
        else {
            $log = "$logs/c-$slot-" . ++$cgen . '.log';
            push @consumer_logs, $log;
            my $seed = $slot * 10000 + $cgen;
            $pid = spawn(sub { consumer($str, $path, $log, $seed) }, timeout => $SECS + 120);
        }
        $procs{$pid} = { role => $role, slot => $slot, log => $log };
    };
    $start_one->('P', $_) for 1 .. $PRODUCERS;
    $start_one->('C', $_) for 1 .. $CONSUMERS;

    my $end = now() + $SECS;
    my ($last_pops, $last_move) = ($q->stats->{pop_ok}, now());
    my $wedged;
    while (now() < $end) {
        Time::HiRes::sleep(rand 0.15);
        my @pids = keys %procs;
        my @victims = ($pids[rand @pids]);
        push @victims, $pids[rand @pids] if rand() < 0.2;    # sometimes two at once
        my %seen;
        for my $pid (grep { !$seen{$_}++ } @victims) {
            kill 'KILL', $pid;
            my $st = reap($pid);
            my $p = delete $procs{$pid};
            if (($st & 127) != 9) {
                $unexpected++;
                diag(sprintf '%s %d ended by itself: exit %d, signal %d',
                     $p->{role}, $pid, $st >> 8, $st & 127);
            }
            $p->{role} eq 'P' ? $kills_p++ : $kills_c++;
            $start_one->($p->{role}, $p->{slot});
        }
        my $s = $q->stats;
        if ($s->{pop_ok} != $last_pops || $s->{size} == 0) {
            ($last_pops, $last_move) = ($s->{pop_ok}, now());
        }
        elsif (now() - $last_move > $WEDGE) {
            $wedged = sprintf 'no pop succeeded for %ds while size is %d (stats: %s)', $WEDGE,
                $s->{size}, join(', ', map { "$_=$s->{$_}" } sort keys %$s);
            last;
        }
    }
    kill 'KILL', keys %procs;
    for my $pid (keys %procs) {
        my $st = reap($pid);
        $unexpected++, diag("child $pid ended by itself: status $st") if ($st & 127) != 9;
    }
    %procs = ();

    # Drain what is left (the parent is the last consumer).
    my @final;
    my $drain_end = now() + $WEDGE;
    while (now() < $drain_end) {
        my @got = $q->pop_wait_multi($MAXBATCH, 0.2);
        if (@got) { push @final, @got; $drain_end = now() + $WEDGE; next }
        last if $q->size == 0;
    }
    my $left = $q->size;

    # -- checks --------------------------------------------------------
    my (%confirmed, %maybe);
    for my $pl (@producer_logs) {
        my ($log, $stream) = @$pl;
        my $pending;
        for my $l (lines_of($log)) {
            if ($l =~ /^T (\d+) (\d+)\z/) { $pending = [$1, $2] }
            elsif ($l =~ /^P (\d+) (\d+)\z/) {
                $confirmed{"$stream:$_"} = 1 for $1 .. $2;
                $pending = undef;
            }
            else { fail("producer log $log: bad line '$l'") }
        }
        $maybe{"$stream:$_"} = 1 for $pending ? ($pending->[0] .. $pending->[1]) : ();
    }
    my (%popped, @dups, @phantoms, @disorder, $budget, $bad);
    $budget = 0;
    my $take = sub {
        my ($who, @vals) = @_;
        my %last;
        for my $v (@vals) {
            my ($stream, $seq) = decode($str, $v);
            if (!defined $stream) { $bad++; diag("$who: undecodable value '$v'"); next }
            my $key = "$stream:$seq";
            push @dups, $key if $popped{$key}++;
            push @phantoms, $key unless $confirmed{$key} || $maybe{$key};
            push @disorder, "$who: stream $stream: $seq after $last{$stream}"
                if defined $last{$stream} && $seq <= $last{$stream};
            $last{$stream} = $seq;
        }
    };
    for my $log (@consumer_logs) {
        my @l = lines_of($log);
        my @vals;
        for my $l (@l) {
            next if $l =~ /^W \d+\z/;
            if ($l =~ /^G (.*)\z/) {
                my $rest = $1;
                push @vals, $str ? ($rest =~ /<([^>]*)>/g) : split / /, $rest;
            }
            else { fail("consumer log $log: bad line '$l'") }
        }
        $budget += $1 if @l && $l[-1] =~ /^W (\d+)\z/;
        $take->($log, @vals);
    }
    $take->('final drain', @final);
    my @missing = grep { !$popped{$_} } sort keys %confirmed;
    my $maybe_in = grep { $popped{$_} } keys %maybe;

    my $s = $q->stats;
    diag(sprintf '%s: %ds, %d producer and %d consumer kills, %d values confirmed pushed, '
               . '%d ambiguous (%d of them popped), %d popped, %d missing (budget %d), '
               . '%d drained at the end, recoveries %d',
         $variant, $SECS, $kills_p, $kills_c, scalar(keys %confirmed), scalar(keys %maybe),
         $maybe_in, scalar(keys %popped), scalar(@missing), $budget, scalar(@final),
         $s->{recoveries} // 0);

    ok(!$wedged, "$variant: the queue never wedged")
        or diag("$variant WEDGED: $wedged. A process killed in the middle of an operation "
              . 'left the queue unable to make progress.');
    is($left, 0, "$variant: the final drain emptied the queue")
        or diag("size still $left after ${WEDGE}s of failed pops");
    is($unexpected, 0, "$variant: every child ran until killed");
    ok(keys(%confirmed) > 100, "$variant: the storm did push things");
    ok($kills_p > 5 && $kills_c > 5, "$variant: and killed both sides");
    is_deeply([@dups[0 .. ($#dups < 9 ? $#dups : 9)]], [], "$variant: nothing popped twice")
        or diag(scalar(@dups) . ' duplicates');
    is_deeply([@phantoms[0 .. ($#phantoms < 9 ? $#phantoms : 9)]], [],
              "$variant: nothing popped that was not pushed")
        or diag(scalar(@phantoms) . ' phantoms');
    ok(!$bad, "$variant: every popped value decodes");
    is_deeply([@disorder[0 .. ($#disorder < 9 ? $#disorder : 9)]], [],
              "$variant: FIFO per producer, as each consumer saw it")
        or diag(scalar(@disorder) . ' out of order');
    diag("missing: @missing[0 .. ($#missing < 19 ? $#missing : 19)]") if @missing;
    ok(@missing <= $budget, "$variant: values lost only with killed consumers")
        or diag(scalar(@missing) . " missing, budget $budget; first: @missing[0 .. ($#missing < 9 ? $#missing : 9)]");
    $q->unlink;
}

for my $variant (grep { $VARIANTS{$_} } qw(Int Str)) {
    subtest "kill storm: $variant" => sub { storm($variant) };
}

done_testing;
