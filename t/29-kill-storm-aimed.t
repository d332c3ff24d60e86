# A kill storm that aims at the moments that need repair, instead of
# killing at random (children spend well under 1% of their time inside a
# queue call, so a random storm almost never kills a lock holder).
#
#   * Str: workers push and pop large strings (the lock is held while the
#     bytes are copied). The parent watches the two lock words in the
#     file (format 7: the front lock at header offset 72, the back lock
#     at 136; 0, or the holder's pid) and SIGKILLs the pid one names. A
#     kill counts as aimed when a word still names the victim after it
#     is reaped: it died holding that lock. Each such lock is taken over
#     exactly once, so `recoveries` must end at least at the number of
#     locks dead holders held, which must not be 0, and the queue must be
#     whole.
#   * Int, Int32, Int16: a producer pushes large batches, in runs that each
#     reserve positions with one step of `tail` (offset 128) and then fill
#     them, so it spends most of its time filling. The parent watches
#     `tail` and SIGKILLs the producer a random moment (under 3 ms) after
#     it first moves. It then pops what was published (in order, up to the
#     kill); every position the dead producer reserved (tail moved by
#     exactly those) and never filled must be given up, one recovery each.
#     A kill counts as aimed when such positions exist.
#
# Short by default (DQS_AIM_SECS seconds per variant at most, and it stops
# early once DQS_AIM_KILLS aimed kills hit), so it runs with `make test`.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use POSIX ();
use Time::HiRes ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

my $SECS  = $ENV{DQS_AIM_SECS}  // 3;
my $KILLS = $ENV{DQS_AIM_KILLS} // 5;
watchdog(120 + 45 * $SECS);
my $dir = tmpdir();

sub word_at {
    my ($fh, $off, $len) = @_;
    sysseek($fh, $off, 0) or die "seek: $!";
    sysread($fh, my $buf, $len) == $len or die "short read at $off";
    return unpack($len == 4 ? 'V' : 'Q<', $buf);
}

subtest 'Str: SIGKILL the pid the lock word names' => sub {
    my $path = "$dir/str.q";
    my $q = Data::Queue::Shared::Str->new($path, 16, 4 << 20);
    my $big = 'B' x (128 << 10);    # copied under the lock: a wide target
    my $worker = sub {
        my $q = Data::Queue::Shared::Str->new($path, 16);
        while (1) {
            $q->push($big);
            $q->push_multi($big, 'small');
            my @got = $q->pop_multi(2);
            $q->pop_back;
            $q->push_front($big) if @got;
            $q->pop;
        }
    };
    my %kids = map { spawn($worker, timeout => 60 + $SECS) => 1 } 1 .. 3;
    open my $fh, '<:raw', $path or die "$path: $!";
    my ($aimed, $kills, $looks, $locks) = (0, 0, 0, 0);
    my $end  = now() + $SECS;
    my $hard = now() + 10 * $SECS;    # a host too busy to hit quickly
    while ($aimed < $KILLS && (now() < $end || !$aimed && now() < $hard)) {
        my $owner = (word_at($fh, 72, 4) & 0x7fff_ffff) || (word_at($fh, 136, 4) & 0x7fff_ffff);
        $looks++;
        next unless $owner && $kids{$owner};
        kill 'KILL', $owner;
        reap($owner);
        delete $kids{$owner};
        $kills++;
        # Still named after its death: it died holding the lock (a peer
        # takes a dead holder's lock over only after a poll interval).
        my $held = grep { (word_at($fh, $_, 4) & 0x7fff_ffff) == $owner } 72, 136;
        $aimed++ if $held;
        $locks += $held;
        $kids{ spawn($worker, timeout => 60 + $SECS) } = 1;
    }
    kill 'KILL', keys %kids;
    reap($_) for keys %kids;
    diag("Str: $kills kills, $aimed of them holding $locks locks ($looks looks)");

    # The last holder may have died with a lock too: the next call that
    # needs it takes it over. Then the queue is whole. (Drain first: the
    # storm may leave all 16 slots full, and a push into a full queue
    # returns false, which proves nothing.)
    cmp_ok($aimed, '>', 0, 'some kills hit a lock holder');
    my @left = $q->drain;
    ok($q->push('end'), 'the queue takes a push after the storm');
    push @left, $q->drain;
    # The push took the back lock, the drains the front one: a dead
    # holder's locks are all taken over by now.
    my $r = $q->stats->{recoveries};
    cmp_ok($r, '>=', $locks, "recoveries ($r) count every lock a dead holder held");
    is($left[-1], 'end', 'the last item pushed comes out last');
    is(scalar(grep { $_ ne $big && $_ ne 'small' && $_ ne 'end' } @left), 0, 'every item is whole');
    my $s = $q->stats;
    is($s->{size}, 0, 'empty');
    is($s->{arena_used}, 0, 'and its arena too');
    is(word_at($fh, 72, 4), 0, 'the front lock is free');
    is(word_at($fh, 136, 4), 0, 'the back lock is free');
    close $fh;
};

# The Int producer: the values 1 .. $CYCLE over and over (they fit an
# Int16), in batches of the whole cycle, until the queue is full. Each batch
# is pushed in runs of a few hundred items, each reserved by one step of
# `tail` and then filled: the producer spends most of its time filling.
my $CYCLE = 30000;
my $ICAP  = 1 << 18;

for my $class (@INT_CLASSES) {
    subtest "$class: SIGKILL a batch producer while it fills its runs" => sub {
        my $path = "$dir/int-" . ($class =~ s/.*:://r) . '.q';
        my $q = $class->new($path, $ICAP);
        open my $fh, '<:raw', $path or die "$path: $!";
        my ($aimed, $kills, $missing, $bad) = (0, 0, 0, 0);
        my $end  = now() + $SECS;
        my $hard = now() + 10 * $SECS;    # a host too busy to hit quickly
        while ($aimed < $KILLS && (now() < $end || !$aimed && now() < $hard)) {
            my $t0 = word_at($fh, 128, 8);
            my $rec0 = $q->stats->{recoveries};
            my $pid = spawn(sub {
                my $q = $class->new($path, $ICAP);
                my @cycle = (1 .. $CYCLE);
                1 while $q->push_multi(@cycle) == $CYCLE;
                Time::HiRes::sleep(30);
            }, timeout => 60);
            # Once it pushes, let it run a random while (it fills the queue
            # in a few milliseconds), then kill it wherever it is.
            my $limit = now() + 10;
            1 while word_at($fh, 128, 8) == $t0 && now() < $limit;
            my $at = now() + rand(0.003);
            1 while now() < $at;
            kill 'KILL', $pid;
            reap($pid);
            $kills++;
            # The producer alone moved `tail`: by every position it reserved.
            my $reserved = word_at($fh, 128, 8) - $t0;
            # What was published comes out, the cycle in order up to the
            # kill (the holes are given up after the stuck interval), then
            # nothing more.
            my ($k, $wrong) = (0, 0);
            while (1) {
                my @some = $q->pop_multi(4096);
                # Nothing at once: empty, or a hole (given up after the
                # stuck interval by a waiting pop).
                @some = $q->pop_wait_multi(4096, 0.2) if !@some && $q->size;
                last unless @some;
                for my $v (@some) {
                    $wrong++ if $v != $k % $CYCLE + 1;
                    $k++;
                }
            }
            my $given_up = $q->stats->{recoveries} - $rec0;
            diag("killed after $k items, $reserved reserved, $given_up given up")
                if $ENV{DQS_AIM_DEBUG};
            $bad++, diag("$wrong items out of order") if $wrong;
            $bad++, diag("$k items out, $given_up positions given up, $reserved reserved")
                unless $k + $given_up == $reserved;
            $aimed++ if $k < $reserved;
            $missing += $given_up;
        }
        diag("$class: $kills kills, $aimed in the middle of a run, $missing positions given up");
        cmp_ok($aimed, '>', 0, 'some kills hit a reserved run in the middle');
        is($bad, 0, 'each time: the values came out in order up to the kill, and every '
                  . 'position reserved and left unfilled was given up');
        is($q->stats->{recoveries}, $missing, "recoveries count every unfilled position ($missing)");
        is($q->size, 0, 'empty');
        ok($q->push(7) && $q->pop == 7, 'and the queue goes on working');
        close $fh;
    };
}

done_testing;
