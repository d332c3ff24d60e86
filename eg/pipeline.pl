#!/usr/bin/env perl
# A three-stage pipeline of processes joined by two queues:
#
#   reader --lines--> WORKERS parsers --records--> writer
#
# The reader produces LINES lines of text ("item 17: 17 apples") and
# pushes them in batches; each parser pops a batch, turns every line into a
# record ("17\t289"), and pushes the records on; the writer totals them. The
# end of the stream travels as one empty string per parser: a parser that
# pops one passes it on and stops (putting back any more it took), and the
# writer stops when it has seen as many as there are parsers. Blocking pushes keep a fast stage from running
# ahead of a slow one (the queues are small on purpose).
#
#     perl -Mblib eg/pipeline.pl [WORKERS] [LINES]
use strict;
use warnings;

use Data::Queue::Shared::Str;
use POSIX ();

my $workers = shift // 3;
my $lines   = shift // 20_000;
my $batch   = 64;
$| = 1;    # the writer prints, then leaves with POSIX::_exit

# Anonymous queues, shared with the children forked after they are made.
my $lines_q   = Data::Queue::Shared::Str->new(undef, 256);
my $records_q = Data::Queue::Shared::Str->new(undef, 256);

my @pids = (stage(\&reader), map({ stage(\&parser) } 1 .. $workers), stage(\&writer));

# The writer prints the report; the pipeline worked if every stage did.
my $failed = 0;
for my $pid (@pids) {
    waitpid($pid, 0);
    $failed++ if $?;
}
exit($failed ? 1 : 0);

# Run $code in a child process; its exit status says whether it worked.
sub stage {
    my ($code) = @_;
    my $pid = fork // die "fork: $!";
    return $pid if $pid;
    my $ok = eval { $code->(); 1 };
    print STDERR $@ unless $ok;
    POSIX::_exit($ok ? 0 : 1);
}

sub reader {
    my @buf;
    for my $n (1 .. $lines) {
        push @buf, "item $n: $n apples";
        next if @buf < $batch && $n < $lines;
        $lines_q->push_wait_multi(-1, @buf) == @buf or die "reader: push failed\n";
        @buf = ();
    }
    $lines_q->push_wait('') for 1 .. $workers;    # one end marker per parser
}

sub parser {
    while (1) {
        my (@records, $ends);
        for my $line ($lines_q->pop_wait_multi($batch)) {
            # Nothing follows the end markers (a queue keeps its order).
            if ($line eq '') { $ends++; next }
            my ($n, $count) = $line =~ /\Aitem (\d+): (\d+) apples\z/
                or die "parser: bad line '$line'\n";
            push @records, "$n\t" . $count * $count;
        }
        if ($ends) {
            # Pass one end marker on; leave the others for the other parsers.
            $records_q->push_wait_multi(-1, @records, '');
            $lines_q->push_wait('') for 2 .. $ends;
            return;
        }
        $records_q->push_wait_multi(-1, @records);
    }
}

sub writer {
    my ($ends, $records, $sum) = (0, 0, 0);
    my %seen;
    while ($ends < $workers) {
        for my $record ($records_q->pop_wait_multi($batch)) {
            if ($record eq '') { $ends++; next }
            my ($n, $square) = split /\t/, $record;
            die "writer: record $n twice\n" if $seen{$n}++;
            $records++;
            $sum += $square;
        }
    }
    my $want = $lines * ($lines + 1) * (2 * $lines + 1) / 6;    # sum of n**2
    printf "pipeline: %d lines -> %d parsers -> %d records (sum of squares %d)\n",
        $lines, $workers, $records, $sum;
    die "writer: expected $lines records with sum $want\n"
        unless $records == $lines && $sum == $want;
}
