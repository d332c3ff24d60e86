# Scribbled lease tables (hostile input): random bytes over the lease
# records, the dead-letter records and the Str lease data area of queues
# holding leases, dead items and delayed items (the Int
# lease lock's two words are left alone: t/76-hostile-locks.t overwrites
# lock words on purpose). Every lease call and plain pop
# afterwards must return or croak with a clean message naming the method,
# never crash or hang; run in a child so that a crash shows.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(180);
my $dir = tmpdir();
srand(25);

for my $class (@INT_CLASSES, 'Data::Queue::Shared::Str') {
    my $str = $class =~ /Str$/;
    for my $round (1 .. 12) {
        my $path = "$dir/h$round.shm";
        unlink $path;
        my %o = (max_leases => 8, max_deliveries => 2, max_dead => 4);
        my $q = $class->new($path, 16, $str ? (undef, {%o}) : ({%o}));
        $q->push($str ? "item-$_" x (1 + $_ % 5) : $_) for 1 .. 12;
        my @mine = map { ($q->pop_lease(rand() < 0.3 ? 100 : undef))[1] } 1 .. 3;
        my $h = spawn(sub { $q->pop_lease for 1 .. 2 });
        reap($h);
        $q->release($mine[0]);
        $q->bury($mine[1]);                      # a dead item
        $q->release($mine[2], 50);               # a delayed one
        $q->push_delayed(0.01 + rand 0.05, $str ? 'soon' : 99);
        @mine = ();
        my $size = -s $path;
        my $lease_off = unpack 'Q<', substr(do { open my $f, '<:raw', $path or die; local $/; <$f> }, 288, 8);
        undef $q;
        # Scribble: 1 to 40 random u64 writes over records and data.
        open my $fh, '+<:raw', $path or die "$path: $!";
        for (1 .. 1 + int rand 40) {
            my $off = $lease_off + 16 + 8 * int rand(($size - $lease_off - 16) / 8);
            my @v = (0, 1, 2, 3, 4, 5, 0xFF, 2**31, 2**32 - 1, int rand 2**32, $$, 65536, 2**63);
            my $v = $v[rand @v] + (rand() < 0.5 ? 0 : int rand 2**31) * 2**32 * (rand() < 0.2);
            seek $fh, $off, 0;
            print {$fh} pack 'Q<', $v;
        }
        # And aimed writes: a record made "returned" (state 3), "held" (2)
        # or "delayed" (5) with a scribbled value: for Str an offset and
        # length into (or far past) the lease data area, which a return
        # must check. Records are 128 bytes after a 192-byte head (format
        # 8); the delivery count at +64 and the due time at +80 get
        # scribbled too.
        for (1 .. 1 + int rand 4) {
            my $rec = $lease_off + 192 + 128 * int rand 8;
            my $off = (0, 8, 4096, 2**20, 2**31, 2**32 - 8)[rand 6];
            my $len = (0, 5, 64, 4096, 2**31 - 1, 2**31 + 5)[rand 6];
            seek $fh, $rec, 0;
            print {$fh} pack 'Q<', (7 << 8) | (3, 3, 2, 5)[rand 4];
            seek $fh, $rec + 24, 0;
            print {$fh} pack 'Q<', $off * 2**32 + $len;
            seek $fh, $rec + (64, 80)[rand 2], 0;
            print {$fh} pack 'Q<', (0, 1, 2, 2**32, 2**63, int rand 2**40)[rand 6];
        }
        close $fh;
        my $pid = spawn(sub {
            my $c = $class->new($path, 16);
            for my $i (1 .. 60) {
                my $op = int rand 13;
                my $r = eval {
                    if    ($op == 0) { my @x = $c->pop_lease(rand() < 0.5 ? 0 : undef); push @mine, $x[1] if @x }
                    elsif ($op == 1) { $c->ack(@mine ? splice(@mine, rand @mine, 1) : int rand 2**40) }
                    elsif ($op == 2) { $c->release(@mine ? splice(@mine, rand @mine, 1) : 70000) }
                    elsif ($op == 3) { my $s = $c->lease_stats; die "bad stats\n" if $s->{max_leases} != 8 }
                    elsif ($op == 4) { my @l = $c->leases; die "too many\n" if @l > 8 }
                    elsif ($op == 5) { $c->pop; $c->peek; $c->size }
                    elsif ($op == 6) { $c->push($str ? "new-$i" : $i) }
                    elsif ($op == 7) { my @d = $c->dead_list; die "too many dead\n" if @d > 4; $c->dead_count }
                    elsif ($op == 8) { $c->kick(int rand 3) }
                    elsif ($op == 9) { $c->dead_drain(1) }
                    elsif ($op == 10) { $c->push_delayed(rand 0.02, $str ? "d-$i" : $i) }
                    elsif ($op == 11) { my $l = @mine ? $mine[rand @mine] : int rand 2**40; $c->touch($l); $c->deliveries($l) }
                    else { $c->release(@mine ? splice(@mine, rand @mine, 1) : 70000, rand 0.01) }
                    1;
                };
                next if $r;
                die "unclean croak: $@" unless $@ =~ /^\Q$class\E->\w+: /;
            }
        }, timeout => 60);
        is(reap($pid), 0, "$class round $round: every call returned or croaked cleanly");
    }
}

done_testing;
