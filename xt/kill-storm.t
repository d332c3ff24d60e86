# Kill storm (author test): producers and consumers on one file-backed
# queue, SIGKILLed at random moments and respawned, for DQS_STORM_SECS
# seconds (default 30) per variant (Int, Int32, Int16, then Str; Int16 in
# rounds, see below). Then everything left is drained and the logs are
# checked:
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
# Values name their stream and their sequence number in it. Int and Str
# streams are producer incarnations; Int32 packs incarnation and sequence
# into 11 + 20 bits. Int16 has room for only 3 x 2**14 distinct values: its
# streams are the producer slots, each respawned producer goes on from the
# last sequence number its predecessor tried, and a producer that has used
# up its slot's numbers only waits to be killed ("X" in its log). A round
# ends when every slot is used up (after a few seconds), and the next
# round, on a new queue, starts until the variant's time is up.
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
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

my $SECS      = $ENV{DQS_STORM_SECS} // 30;
my $PRODUCERS = $ENV{DQS_STORM_PRODUCERS} // 3;
my $CONSUMERS = $ENV{DQS_STORM_CONSUMERS} // 3;
my $WEDGE     = $ENV{DQS_STORM_WEDGE_SECS} // 10;
my %VARIANTS  = map { $_ => 1 } split /,/, ($ENV{DQS_STORM_VARIANTS} // 'Int,Int32,Int16,Str');
my $CAP       = 64;
my $MAXBATCH  = 8;
my %KILLS;       # kills of each side, summed over the Int16 rounds
die "Int16 values have room for 4 producers\n" if $VARIANTS{Int16} && $PRODUCERS > 4;

# Int16: sequence numbers per stream (producer slot).
my $I16_SEQS = 2**14;

watchdog(2 * $SECS * keys(%VARIANTS) + 120 * keys(%VARIANTS));
my $dir = tmpdir();

# Values: the stream (producer slot and incarnation) and the sequence
# number within the stream.
sub encode {
    my ($variant, $stream, $seq) = @_;
    if ($variant eq 'Str') {
        return "$stream:$seq:" . ('x' x (($stream * 7 + $seq * 13) % 97));
    }
    if ($variant eq 'Int32') {
        die "Int32 value out of range: stream $stream, seq $seq\n"
            if $stream >= 2**11 || $seq >= 2**20;
        return $stream * 2**20 + $seq;
    }
    if ($variant eq 'Int16') {
        die "Int16 value out of range: stream $stream, seq $seq\n"
            if $stream < 1 || $stream > 4 || $seq >= $I16_SEQS;
        return ($stream - 1) * $I16_SEQS + $seq - 2**15;
    }
    return $stream * 2**24 + $seq;
}

sub decode {
    my ($variant, $v) = @_;
    if ($variant eq 'Str') {
        $v =~ /^(\d+):(\d+):x*\z/ or return;
        return ($1, $2);
    }
    return if $v !~ /^-?\d+\z/;
    if ($variant eq 'Int16') {
        my $u = $v + 2**15;
        return if $u < 0 || $u >= 2**16;
        return (1 + int($u / $I16_SEQS), $u % $I16_SEQS);
    }
    return if $v < 0;
    my $bits = $variant eq 'Int32' ? 20 : 24;
    return (int($v / 2**$bits), $v % 2**$bits);
}

sub logline {
    my ($fh, $line) = @_;
    my $n = syswrite($fh, "$line\n");
    die "log write: $!\n" unless defined $n && $n == length($line) + 1;
}

sub open_queue {
    my ($variant, $path) = @_;
    return Data::Queue::Shared::Str->new($path, $CAP, 8192) if $variant eq 'Str';
    return "Data::Queue::Shared::$variant"->new($path, $CAP);
}

sub producer {
    my ($variant, $path, $log, $stream, $seed, $seq, $limit) = @_;
    srand($seed);
    my $q = open_queue($variant, $path);
    open(my $fh, '>>', $log) or die "$log: $!";
    while (1) {
        my $k = 1 + int rand $MAXBATCH;
        my $op = int rand 4;
        $k = 1 if $op < 2;
        if (defined $limit && $seq + $k > $limit) {
            $k = $limit - $seq;
            if ($k <= 0) {
                logline($fh, 'X');
                Time::HiRes::sleep(1) while 1;
            }
        }
        my @v = map { encode($variant, $stream, $seq + $_) } 0 .. $k - 1;
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
    my ($variant, $path, $log, $seed) = @_;
    my $str = $variant eq 'Str';
    srand($seed);
    my $q = open_queue($variant, $path);
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

# The next sequence number after everything a producer log tried.
sub next_seq {
    my ($log) = @_;
    my $next = 0;
    for my $l (lines_of($log)) {
        $next = $2 + 1 if $l =~ /^[TP] (\d+) (\d+)\z/ && $2 + 1 > $next;
    }
    return $next;
}

sub storm {
    my ($variant, $secs, $round) = @_;
    my $str  = $variant eq 'Str';
    my $i16  = $variant eq 'Int16';
    my $name = $variant . ($round ? " round $round" : '');
    my $path = "$dir/storm-$variant-" . ($round // 0) . '.q';
    my $q    = open_queue($variant, $path);
    my $logs = "$dir/logs-$variant-" . ($round // 0);
    mkdir $logs or die;
    my (%procs, @producer_logs, @consumer_logs, %slot_log, %used_up);
    my ($pgen, $cgen, $kills_p, $kills_c, $unexpected) = (0, 0, 0, 0, 0);

    my $start_one = sub {
        my ($role, $slot) = @_;
        my ($pid, $log);
        if ($role eq 'P') {
            ++$pgen;
            my ($stream, $seq0, $limit) =
                  $i16                ? ($slot, 0, $I16_SEQS)
                : $variant eq 'Int32' ? ($pgen, 0, 2**20)
                :                       ($slot * 10000 + $pgen, 0, undef);
            if ($i16 && $slot_log{$slot}) {
                # (A predecessor killed before it logged anything passes
                # its own start on.)
                my ($prev, $start) = @{ $slot_log{$slot} };
                $seq0 = next_seq($prev);
                $seq0 = $start if $start > $seq0;
                $used_up{$slot} = 1 if $seq0 >= $I16_SEQS;
            }
            $log = "$logs/p-$slot-$pgen.log";
            $slot_log{$slot} = [$log, $seq0];
            push @producer_logs, [$log, $stream];
            $pid = spawn(sub { producer($variant, $path, $log, $stream, $slot * 10000 + $pgen, $seq0, $limit) },
                         timeout => $SECS + 120);
        }
        else {
            $log = "$logs/c-$slot-" . ++$cgen . '.log';
            push @consumer_logs, $log;
            my $seed = $slot * 10000 + $cgen;
            $pid = spawn(sub { consumer($variant, $path, $log, $seed) }, timeout => $SECS + 120);
        }
        $procs{$pid} = { role => $role, slot => $slot, log => $log };
    };
    $start_one->('P', $_) for 1 .. $PRODUCERS;
    $start_one->('C', $_) for 1 .. $CONSUMERS;

    my $t0  = now();
    my $end = $t0 + $secs;
    my ($last_pops, $last_move) = ($q->stats->{pop_ok}, now());
    my $wedged;
    while (now() < $end) {
        last if $i16 && keys(%used_up) == $PRODUCERS;
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
    my $stormed = now() - $t0;
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
            elsif ($l eq 'X') { }
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
            my ($stream, $seq) = decode($variant, $v);
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
    diag(sprintf '%s: %.0fs, %d producer and %d consumer kills, %d values confirmed pushed, '
               . '%d ambiguous (%d of them popped), %d popped, %d missing (budget %d), '
               . '%d drained at the end, recoveries %d',
         $name, $stormed, $kills_p, $kills_c, scalar(keys %confirmed), scalar(keys %maybe),
         $maybe_in, scalar(keys %popped), scalar(@missing), $budget, scalar(@final),
         $s->{recoveries} // 0);

    ok(!$wedged, "$name: the queue never wedged")
        or diag("$name WEDGED: $wedged. A process killed in the middle of an operation "
              . 'left the queue unable to make progress.');
    is($left, 0, "$name: the final drain emptied the queue")
        or diag("size still $left after ${WEDGE}s of failed pops");
    is($unexpected, 0, "$name: every child ran until killed");
    ok(keys(%confirmed) > 100, "$name: the storm did push things");
    # A 30 s storm kills each side far more than 5 times; an Int16 round
    # lasts until its 16-bit values run out (a few seconds), so it needs
    # only one kill of each side, and the rounds together more than 5.
    my $min = $round ? 1 : 6;
    ok($kills_p >= $min && $kills_c >= $min, "$name: and killed both sides")
        or diag("$kills_p producer and $kills_c consumer kills, want $min of each");
    $KILLS{p} += $kills_p;
    $KILLS{c} += $kills_c;
    is_deeply([@dups[0 .. ($#dups < 9 ? $#dups : 9)]], [], "$name: nothing popped twice")
        or diag(scalar(@dups) . ' duplicates');
    is_deeply([@phantoms[0 .. ($#phantoms < 9 ? $#phantoms : 9)]], [],
              "$name: nothing popped that was not pushed")
        or diag(scalar(@phantoms) . ' phantoms');
    ok(!$bad, "$name: every popped value decodes");
    is_deeply([@disorder[0 .. ($#disorder < 9 ? $#disorder : 9)]], [],
              "$name: FIFO per producer, as each consumer saw it")
        or diag(scalar(@disorder) . ' out of order');
    diag("missing: @missing[0 .. ($#missing < 19 ? $#missing : 19)]") if @missing;
    ok(@missing <= $budget, "$name: values lost only with killed consumers")
        or diag(scalar(@missing) . " missing, budget $budget; first: @missing[0 .. ($#missing < 9 ? $#missing : 9)]");
    if ($str) {
        # Lockers killed while counted as sleepers on a lock: their
        # counts go after 64 wakes in a row find nobody, so after as many
        # pushes and pops the count is 0 (format 7: each lock's
        # lock_sleepers, offsets 76 for the front lock, 140 for the back).
        for (1 .. 70) { $q->push('x'); $q->pop }
        for my $at (76, 140) {
            my $w = header_u32($path, $at);
            diag(sprintf '%s: lock_sleepers at %d epoch %d', $name, $at, $w >> 24);
            is($w & 0xffff, 0, "$name: no sleeper left counted on the lock at $at");
        }
    }
    $q->unlink;
}

for my $variant (grep { $VARIANTS{$_} } qw(Int Int32 Int16 Str)) {
    if ($variant ne 'Int16') {
        subtest "kill storm: $variant" => sub { storm($variant, $SECS) };
        next;
    }
    # Rounds of a few seconds each (until the values run out), each on a
    # new queue, until the time is up.
    my $end = now() + $SECS;
    my $round = 0;
    %KILLS = (p => 0, c => 0);
    while ($round == 0 || $end - now() > 2) {
        $round++;
        subtest "kill storm: Int16 round $round" => sub { storm($variant, $end - now(), $round) };
    }
    ok($KILLS{p} > 5 && $KILLS{c} > 5, "Int16: the rounds killed both sides")
        or diag("$KILLS{p} producer and $KILLS{c} consumer kills in $round rounds");
}

done_testing;
