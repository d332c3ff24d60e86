# Oracle test: a long seeded random mix of push / push_front / pop /
# pop_back (and their zero-timeout _wait forms) with random lengths, on a
# small queue whose arena keeps wrapping, compared with a Perl array model
# after every operation.
#
# What is checked at every step:
#   - popped values (bytes and UTF-8 flag) and peek equal the model's ends;
#   - size, is_empty and is_full equal the model's count;
#   - a push succeeds whenever there is certainly room: a free slot and at
#     least twice the item's aligned length free in the arena (the free
#     bytes of a circular arena form at most two pieces, so one of them
#     holds it); a push that fails changes nothing;
#   - arena accounting: a push is charged its aligned length plus a multiple
#     of 8 (wrap waste), within the free bytes; an item leaving by either
#     end gives back exactly what it was charged; arena_used is the sum of
#     the charges of the items present, and 0 whenever the queue is empty.
# At the end: drain equals the model, and push_ok / pop_ok are exact.
#
# Set DQS_ORACLE_SEED to replay another seed.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

use Data::Queue::Shared::Str;

watchdog(120);

my $CLASS = 'Data::Queue::Shared::Str';
my $dir   = tmpdir();

sub round8 { my $n = shift; ($n + 7) & ~7 }

sub byte_len {
    my ($s) = @_;
    utf8::encode($s) if utf8::is_utf8($s);
    return length $s;
}

sub show {
    my ($s) = @_;
    return 'undef' unless defined $s;
    my $head = substr($s, 0, 24);
    $head =~ s/([^\x20-\x7e])/sprintf '\\x{%x}', ord $1/ge;
    return sprintf '"%s%s" (%d chars, %d bytes, utf8 %s)', $head, length $s > 24 ? '...' : '',
        length $s, byte_len($s), utf8::is_utf8($s) ? 'on' : 'off';
}

sub same {
    my ($x, $y) = @_;
    return !defined $x && !defined $y if !defined $x || !defined $y;
    return $x eq $y && !utf8::is_utf8($x) == !utf8::is_utf8($y);
}

# A random string of about $len bytes, unique through its serial number
# when long enough; one in eight is a UTF-8 string of 2-byte characters.
sub random_item {
    my ($serial, $len) = @_;
    if (rand() < 0.125) {
        my $n = int($len / 2);
        return join '', map { chr(0x100 + int rand 0x700) } 1 .. $n if $n < 4;
        my $s = "\x{100}$serial\x{101}";
        my $more = int(($len - byte_len($s)) / 2);
        $s .= join '', map { chr(0x80 + int rand 0x780) } 1 .. $more if $more > 0;
        return $s;
    }
    my $id = "<$serial>";
    return join '', map { chr int rand 256 } 1 .. $len if $len < length $id;
    return $id . join '', map { chr int rand 256 } 1 .. $len - length $id;
}

sub run_oracle {
    my (%o) = @_;
    my ($q, $seed, $ops, $cap, $usable, $short) = @o{qw(queue seed ops cap usable short)};
    srand($seed);

    my (@model, @charge);    # items, front first, and what each was charged
    my ($pushed, $popped, $push_false, $wraps, $full_slots, $split) = (0, 0, 0, 0, 0, 0);
    my ($fail, $step);
    my $used = sub { $q->stats->{arena_used} };
    my $sum = sub { my $t = 0; $t += $_ for @charge; $t };

    for ($step = 1; $step <= $ops && !$fail; $step++) {
        my $r = rand;
        my $op = $r < 0.30 ? 'push' : $r < 0.50 ? 'push_front' : $r < 0.75 ? 'pop' : 'pop_back';
        my $wait = rand() < 0.2;
        my $before = $used->();
        my $count = @model;

        if ($op eq 'push' || $op eq 'push_front') {
            # Half short items (so the slots run out) and half up to 700
            # bytes (so the arena runs out and wraps).
            my $len = rand() < $short ? int rand 41 : int rand 701;
            my $v = random_item($step, $len);
            my $bl = byte_len($v);
            my $al = round8($bl);
            my $free = $usable - $before;
            my $m = $wait ? "${op}_wait" : $op;
            my $ok = $wait ? $q->$m($v, 0) : $q->$m($v);
            my $after = $used->();
            my $desc = "$m of $bl bytes with $count items, arena_used $before";
            if ($ok) {
                my $ch = $after - $before;
                if ($count >= $cap) { $fail = "$desc: succeeded although the model is at capacity" }
                elsif ($ch < $al || ($ch - $al) % 8 || $after > $usable) {
                    $fail = "$desc: charged $ch bytes (aligned length $al), arena_used now $after";
                }
                else {
                    $wraps++ if $ch > $al;
                    $pushed++;
                    if ($op eq 'push') { push @model, $v; push @charge, $ch }
                    else               { unshift @model, $v; unshift @charge, $ch }
                }
            }
            else {
                $push_false++;
                $full_slots++ if $count >= $cap;
                $split++ if $count < $cap && $al <= $free;    # room in total, not in one piece
                if ($count < $cap && 2 * $al <= $free) {
                    $fail = "$desc: returned false although a slot and $free arena bytes were free";
                }
                elsif ($after != $before) { $fail = "$desc: failed but arena_used changed to $after" }
            }
        }
        else {
            my $m = $wait ? "${op}_wait" : $op;
            my @got = $wait ? $q->$m(0) : $q->$m();
            my $v = $got[0];
            my $desc = "$m with $count items";
            if (@got != 1) { $fail = "$desc: returned " . scalar(@got) . ' values in list context' }
            elsif (!@model) {
                $fail = "$desc: returned " . show($v) . ' from an empty queue' if defined $v;
            }
            else {
                my $want = $op eq 'pop' ? $model[0] : $model[-1];
                if (!same($v, $want)) {
                    $fail = "$desc: got " . show($v) . ', expected ' . show($want);
                }
                else {
                    my $ch = $op eq 'pop' ? $charge[0] : $charge[-1];
                    if ($op eq 'pop') { shift @model; shift @charge }
                    else              { pop @model; pop @charge }
                    $popped++;
                    my $after = $used->();
                    if ($after != $before - $ch) {
                        $fail = "$desc: arena_used went from $before to $after, expected it to give back $ch";
                    }
                }
            }
        }
        next if $fail;

        my $n = @model;
        my $size = $q->size;
        my $u = $used->();
        my $peek = $q->peek;
        if ($size != $n) { $fail = "size $size, model has $n" }
        elsif (!$q->is_empty != !!$n) { $fail = 'is_empty disagrees with the model count ' . $n }
        elsif (!$q->is_full != ($n < $cap)) { $fail = 'is_full disagrees with the model count ' . $n }
        elsif ($u != $sum->()) { $fail = "arena_used $u, but the items present were charged " . $sum->() }
        elsif (!$n && $u) { $fail = "queue empty but arena_used $u" }
        elsif (!same($peek, $model[0])) { $fail = 'peek ' . show($peek) . ', model front ' . show($model[0]) }
        $fail = "after ${op}: $fail" if $fail;
    }
    $step--;

    ok(!$fail, "seed $seed: $ops operations agree with the model at every step")
        or diag("step $step: $fail");
    my @rest = $q->drain;
    my $same = @rest == @model && !grep { !same($rest[$_], $model[$_]) } 0 .. $#model;
    ok($same, 'drain at the end equals the model (' . scalar(@model) . ' items)')
        or diag('drained ' . scalar(@rest) . ' items, model has ' . scalar(@model));
    my $s = $q->stats;
    is($s->{push_ok}, $pushed, "push_ok is exact ($pushed)");
    is($s->{pop_ok}, $popped + @rest, 'pop_ok is exact');
    is($s->{arena_used}, 0, 'arena_used 0 at the end');
    note("$pushed pushed, $popped popped, $wraps wrapped, $push_false pushes failed",
         " ($full_slots for lack of a slot, $split with enough free bytes in two pieces)");
    # The run must actually exercise the hard cases.
    ok($wraps > 50, "the arena wrapped many times ($wraps pushes were charged waste)");
    ok($push_false - $full_slots > 50,
       'many pushes failed for lack of arena space (' . ($push_false - $full_slots) . ')');
    ok($full_slots > 50, "many pushes failed for lack of a slot ($full_slots)")
        if $o{slots_run_out};
}

my $seed = $ENV{DQS_ORACLE_SEED} // 20240611;

subtest "oracle, seed $seed: capacity 16, arena 4096, anonymous" => sub {
    run_oracle(queue => $CLASS->new(undef, 16, 4096), seed => $seed,
               ops => 40_000, cap => 16, usable => 4096, short => 0.5, slots_run_out => 1);
};

subtest 'oracle, seed ' . ($seed + 1) . ': capacity 16, arena 4100 (4096 usable), file' => sub {
    my $q = $CLASS->new("$dir/oracle.shm", 16, 4100);
    run_oracle(queue => $q, seed => $seed + 1, ops => 40_000, cap => 16, usable => 4096,
               short => 0.5, slots_run_out => 1);
    $q->unlink;
};

subtest 'oracle, seed ' . ($seed + 2) . ': capacity 32, arena 4096, memfd' => sub {
    run_oracle(queue => $CLASS->new_memfd('dqs-oracle', 32, 4096), seed => $seed + 2,
               ops => 40_000, cap => 32, usable => 4096, short => 0);
};

done_testing;
