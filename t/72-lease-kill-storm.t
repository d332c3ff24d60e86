# The kill storm in leased mode: consumers pop with a lease, record the
# item (an O_APPEND line "R item pid"), ack it, and note the ack ("A item
# pid"); the parent SIGKILLs a random consumer every few milliseconds and
# starts a new one, hundreds of times, while it keeps pushing. At the end
# every item pushed must have been recorded (zero lost), and every item
# recorded more than once must be explained by the one window leases allow:
# a recorder that was killed after recording and before its ack was
# durable (no "A" line of its own) - every recording but the last of such
# an item is one of those. The numbers are printed (see the note of issue
# 25). The queue has max_deliveries (DQS_LEASE_STORM_MAX; by default each
# class runs twice, with 1, where every item whose holder is killed dies,
# and with 2, where duplicates happen too): an
# item whose holders were killed that many times goes to the dead-letter
# area instead of out again, and is accounted for there: zero lost means
# every item was recorded or is dead, each dead item was delivered exactly
# max_deliveries times, its reason is "holder died", and no recorder of it
# acked it. DQS_LEASE_STORM_KILLS sets the kills per class (xt/ runs more).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use Fcntl qw(O_WRONLY O_APPEND O_CREAT);
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

my $KILLS = $ENV{DQS_LEASE_STORM_KILLS} || 150;
my @MAX   = $ENV{DQS_LEASE_STORM_MAX} ? ($ENV{DQS_LEASE_STORM_MAX}) : (1, 2);
my $MAX;
my $CONSUMERS = 4;
watchdog(60 + $KILLS * @MAX / 2);
my $dir = tmpdir();

sub storm {
    my ($class) = @_;
    my $str = $class =~ /Str$/;
    my $path = "$dir/storm-" . ($str ? 'str' : 'int') . '.shm';
    my $log = "$dir/storm.log";
    unlink $log;
    my @opts = ({ max_deliveries => $MAX, max_dead => 4096 });
    my $q = $str ? $class->new($path, 4096, undef, @opts) : $class->new($path, 4096, @opts);
    my $mk = sub { $str ? "s$_[0]" : $_[0] };
    my $next = 0;
    my $push = sub { my $n = shift; $q->push($mk->($next++)) for 1 .. $n };
    $push->(200);

    my $consumer = sub {
        spawn(sub {
            my $c = $class->new($path, 4096);
            sysopen my $fh, $log, O_WRONLY | O_APPEND | O_CREAT or die "$log: $!";
            while (1) {
                my ($v, $l) = $c->pop_lease_wait(0.05);
                if (!defined $l) {
                    last if -e "$log.stop";
                    next;
                }
                syswrite $fh, "R $v $$\n";
                # The window: recorded, not yet acked. Widened a little so
                # that kills land in it too.
                Time::HiRes::sleep(0.0002);
                $c->ack($l) or die "ack of $v failed";
                syswrite $fh, "A $v $$\n";
            }
        }, timeout => 120);
    };
    my %live = map { $consumer->() => 1 } 1 .. $CONSUMERS;
    my %killed;
    my $kills = 0;
    while ($kills < $KILLS) {
        Time::HiRes::sleep(0.004 + rand(0.006));
        my @p = keys %live;
        my $victim = $p[rand @p];
        kill 'KILL', $victim;
        reap($victim);
        delete $live{$victim};
        $killed{$victim} = 1;
        $kills++;
        $live{ $consumer->() } = 1;
        $push->(100) if $q->size < 400;
    }
    # Drain: until every item pushed has been recorded and nothing is held.
    my $settled = wait_for(sub {
        my $s = $q->lease_stats;
        $q->size == 0 && $s->{open} == 0 && $s->{waiting} == 0;
    }, 60);
    ok($settled, "$class: queue drained, no lease open or waiting");
    open my $stop, '>', "$log.stop" or die;
    close $stop;
    reap_ok($_, 'consumer exits cleanly') for keys %live;
    unlink "$log.stop";

    my (%rec, %acked);
    open my $fh, '<', $log or die "$log: $!";
    while (<$fh>) {
        my ($k, $v, $pid) = split;
        if ($k eq 'R') { push @{ $rec{$v} }, $pid }
        else { $acked{"$v $pid"} = 1 }
    }
    my @dead = $q->dead_list;
    my %dead = map { $_->{value} => $_ } @dead;
    my @lost = grep { !$rec{ $mk->($_) } && !$dead{ $mk->($_) } } 0 .. $next - 1;
    is(scalar @lost, 0, "$class: zero lost of $next items") or diag("lost: @lost[0 .. ($#lost < 9 ? $#lost : 9)]");
    my @bad_dead = grep { $_->{deliveries} != $MAX || $_->{reason} ne 'holder died' } @dead;
    is(scalar @bad_dead, 0, "$class: every dead item was delivered $MAX times and its holder died")
        or diag(join ', ', map { "$_->{value}: $_->{deliveries} $_->{reason}" } @bad_dead);
    my @acked_dead = grep { my $v = $_; grep { $acked{"$v $_"} } @{ $rec{$v} || [] } } keys %dead;
    is(scalar @acked_dead, 0, "$class: no dead item was acked by a recorder") or diag("@acked_dead");
    my @dead_unexplained = grep { my $v = $_; grep { !$killed{$_} } @{ $rec{$v} || [] } } keys %dead;
    is(scalar @dead_unexplained, 0, "$class: every recorder of a dead item was killed")
        or diag("@dead_unexplained");
    my $recorded_dead = grep { $rec{$_} } keys %dead;
    my ($dups, @unexplained) = (0);
    for my $v (sort keys %rec) {
        my @by = @{ $rec{$v} };
        if ($dead{$v}) {
            $dups += @by - 1 if @by > 1;
            next;
        }
        next if @by == 1;
        for my $pid (@by[0 .. $#by - 1]) {
            $dups++;
            push @unexplained, "$v by $pid" unless $killed{$pid} && !$acked{"$v $pid"};
        }
    }
    is(scalar @unexplained, 0,
       "$class: every duplicate is an item whose recorder was killed before its ack")
        or diag("unexplained: @unexplained");
    my $s = $q->lease_stats;
    cmp_ok($s->{returned_dead}, '>=', $dups, "$class: returned_dead covers the duplicates");
    is($s->{dead}, scalar @dead, "$class: lease_stats dead = the items in the dead area");
    is($s->{dead_full}, 0, "$class: the dead area never overflowed");
    is($s->{acked} + scalar @dead, $next, "$class: acked + dead = items pushed");
    diag(sprintf '%s: %d kills, %d items, %d lost, %d duplicates (all killed between record and ack), '
                 . '%d dead-lettered after %d deliveries (%d of them recorded before, none acked), '
                 . 'leases returned after a death %d, acked %d, delivered %d, recoveries %d',
         $class, $kills, $next, scalar @lost, $dups, scalar @dead, $MAX, $recorded_dead,
         $s->{returned_dead}, $s->{acked}, $s->{delivered}, $q->stats->{recoveries});
    $q->unlink;
}

for my $max (@MAX) {
    $MAX = $max;
    storm('Data::Queue::Shared::Int');
    storm('Data::Queue::Shared::Str');
}

done_testing;
