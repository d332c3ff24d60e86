#!/usr/bin/env perl
# Throughput of Data::Queue::Shared against the other Perl queues that are
# installed, measured in the same run.
#
#   perl -Mblib bench/vs.pl [N [RUNS]]
#
# N items per case (default 200000); with RUNS > 1 every case runs RUNS
# times, interleaved with the other cases of its section, and the median
# rate is shown (this machine class is noisy; 3 is a good value).
# DQS_BENCH_SECTION=REGEX runs only the sections whose titles match.
use strict;
use warnings;
use POSIX ();
use Time::HiRes qw(time);
use Time::HiRes ();
use File::Temp qw(tempdir);

use Data::Queue::Shared;
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

$| = 1;
my $N    = shift // 200_000;
my $RUNS = shift // 1;
$N =~ /^\d+$/ && $N > 0 && $RUNS =~ /^\d+$/ && $RUNS > 0
    or die "usage: $0 [N [RUNS]]\n";
my $dir = tempdir(CLEANUP => 1);
my $MSG = 'x' x 50;
my $B   = 100;    # batch size

# MCE::Queue decides at import whether it talks to MCE workers (its
# methods are bound then), so MCE must be loaded first and the import run.
my %have;
sub have {
    my $m = shift;
    return $have{$m} //= do {
        local $@;
        eval { require MCE; 1 } if $m eq 'MCE::Queue';
        eval "require $m; $m->import; 1" ? 1 : 0;
    };
}

# Peers that Debian 12 does not package, so dev/setup cannot install them;
# their rows stay skipped unless they were installed from CPAN.
my %CPAN_ONLY = map { $_ => 1 } qw(POSIX::RT::MQ Forks::Queue IPC::Transit);

sub rate { my ($n, $t) = @_; $t > 0 ? $n / $t : 0 }

sub fmt_rate {
    my $r = shift;
    return sprintf '%.1fM/s', $r / 1e6 if $r >= 1e6;
    return sprintf '%.0fK/s', $r / 1e3 if $r >= 1e3;
    return sprintf '%.0f/s', $r;
}

sub median {
    my @s = sort { $a <=> $b } @_;
    @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2;
}

# A section is a title and cases [name, needed module or undef, code,
# optional ratio base]. A code ref returns a rate or dies with a short
# reason; a plain string instead of code says why the peer has no row here.
# The rate of the base case (default MCE::Queue) is the 1.0x of the ratio
# column. Returns the rates of every run, by case name.
sub section {
    my ($title, @cases) = @_;
    return {} if defined $ENV{DQS_BENCH_SECTION} && $title !~ /$ENV{DQS_BENCH_SECTION}/;
    print "\n$title\n";
    my (%rates, @skips);
    for my $c (@cases) {
        my ($name, $need, $code) = @$c;
        if ($need && !have($need)) {
            push @skips, [$name, "$need not installed" . ($CPAN_ONLY{$need} ? ' (CPAN only)' : '')];
            $c = undef;
        }
        elsif (!ref $code) {
            push @skips, [$name, $code];
            $c = undef;
        }
    }
    @cases = grep { defined } @cases;
    my %failed;
    for my $run (1 .. $RUNS) {
        for my $c (@cases) {
            my ($name, undef, $code) = @$c;
            next if $failed{$name};
            print STDERR "  [$name]\n" if $ENV{DQS_BENCH_DEBUG};
            my $r = eval { $code->() };
            if (!defined $r) {
                my $e = $@ || 'unavailable';
                $e =~ s/\s+at \S+ line \d+.*//s;
                $e =~ s/\n//g;
                $failed{$name} = $e;
                next;
            }
            push @{ $rates{$name} }, $r;
        }
    }
    my %rate = map { $_ => median(@{ $rates{$_} }) } keys %rates;
    my %base = map { $_->[0] => $_->[3] // 'MCE::Queue' } @cases;
    for my $name (sort { $rate{$b} <=> $rate{$a} } keys %rate) {
        my $mce = $rate{ $base{$name} };
        my $ratio = $mce ? sprintf('%6.1fx', $rate{$name} / $mce) : '';
        printf "  %-34s %10s %s\n", $name, fmt_rate($rate{$name}), $ratio;
    }
    push @skips, map { [$_, $failed{$_}] } sort keys %failed;
    printf "  %-34s %s\n", $_->[0], substr("skipped: $_->[1]", 0, 52) for @skips;
    return \%rates;
}

# ---- single-process, interleaved push+pop ---------------------------------

sub interleave {
    my ($push, $pop, $v, $n) = @_;
    $n //= $N;
    my $t = time;
    for (1 .. $n) { $push->($v); $pop->() }
    rate($n, time - $t);
}

sub our_single {
    my ($class, $v) = @_;
    my $q = $class->new(undef, 1024);
    my $t = time;
    for (1 .. $N) { $q->push($v); $q->pop }
    rate($N, time - $t);
}

# The keyword forms exist only when XS::Parse::Keyword was there at build
# time, and a keyword is a syntax error where it is not enabled, so their
# loops are compiled from strings, under `use Data::Queue::Shared::Int;`
# (which enables the keywords in that scope), and only when they exist.
my %keyword;
if ($Data::Queue::Shared::HAVE_KEYWORDS) {
    for my $k (qw(Int Int32 Int16 Str)) {
        my $lc = lc $k;
        my $v = $k eq 'Str' ? '$MSG' : '42';
        my $code = eval qq{
            use Data::Queue::Shared::$k;
            sub {
                my \$q = Data::Queue::Shared::${k}->new(undef, 1024);
                my \$t = time;
                for (1 .. \$N) { q_${lc}_push \$q, $v; q_${lc}_pop \$q }
                rate(\$N, time - \$t);
            };
        };
        if ($code) { $keyword{$k} = $code }
        else { (my $e = $@) =~ s/\n.*//s; $keyword{$k} = "does not compile: $e" }
    }
}

sub kw_case {
    my ($k) = @_;
    my $name = $k eq 'Str' ? "Shared::Str keyword q_str_*" : "Shared::$k keyword q_\L$k\E_*";
    [$name, undef, $keyword{$k} // 'keywords not built'];
}

sub mce_single {
    my $v = shift;
    my $q = MCE::Queue->new;
    interleave(sub { $q->enqueue($_[0]) }, sub { $q->dequeue_nb }, $v);
}

sub tq_single {
    my $v = shift;
    my $q = Thread::Queue->new;
    interleave(sub { $q->enqueue($_[0]) }, sub { $q->dequeue_nb }, $v);
}

sub sysv_queue {
    require IPC::SysV;
    IPC::Msg->new(IPC::SysV::IPC_PRIVATE(), 0600) or die "msgget: $!\n";
}

sub sysv_single {
    my $v = shift;
    my $q = sysv_queue();
    my $buf;
    my $r = eval {
        interleave(sub { $q->snd(1, $_[0]) or die "msgsnd: $!\n" },
            sub { $q->rcv($buf, 4096, 0, IPC::SysV::IPC_NOWAIT()) }, $v);
    };
    $q->remove;
    $r // die $@;
}

sub mq_open {
    my $name = "/dqs-bench-$$-" . int(rand 1e9);
    my $q = POSIX::RT::MQ->open($name, POSIX::O_RDWR() | POSIX::O_CREAT(), 0600,
        { mq_maxmsg => 8, mq_msgsize => 256 }) or die "mq_open: $!\n";
    ($q, $name);
}

sub mq_single {
    my $v = shift;
    my ($q, $name) = mq_open();
    my $r = eval { interleave(sub { $q->send($_[0]) }, sub { $q->receive }, $v) };
    POSIX::RT::MQ->unlink($name);
    $r // die $@;
}

# Forks::Queue and IPC::Transit move a few thousand items a second; they
# get fewer items so the run stays short (rates are per second anyway).
sub small { my $cap = shift; $N > $cap ? $cap : $N }

sub forks_single {
    my $v = shift;
    my $q = Forks::Queue->new(impl => 'Shmem');
    interleave(sub { $q->put($_[0]) }, sub { $q->get_nb }, $v, small(5000));
}

sub transit_single {
    my $v = shift;
    my $qn = "dqs_bench_$$";
    interleave(sub { IPC::Transit::send(qname => $qn, message => { v => $_[0] }) },
        sub { IPC::Transit::receive(qname => $qn, nonblock => 1) }, $v, small(20000));
}

# ---- batches ---------------------------------------------------------------

sub batch_loop {
    my ($push, $pop, $n) = @_;
    my @b = (1 .. $B);
    my $rounds = int(($n // $N) / $B) || 1;
    my $t = time;
    for (1 .. $rounds) { $push->(@b); my @x = $pop->() }
    rate($rounds * $B, time - $t);
}

sub our_batch {
    my $q = shift->new(undef, 1024);
    my @b = (1 .. $B);
    my $rounds = int($N / $B) || 1;
    my $t = time;
    for (1 .. $rounds) { $q->push_multi(@b); my @x = $q->pop_multi($B) }
    rate($rounds * $B, time - $t);
}

sub mce_batch {
    my $q = MCE::Queue->new;
    batch_loop(sub { $q->enqueue(@_) }, sub { $q->dequeue_nb($B) });
}

sub tq_batch {
    my $q = Thread::Queue->new;
    batch_loop(sub { $q->enqueue(@_) }, sub { $q->dequeue_nb($B) });
}

sub forks_batch {
    my $q = Forks::Queue->new(impl => 'Shmem');
    batch_loop(sub { $q->put(@_) }, sub { $q->get_nb($B) }, small(20000));
}

# ---- cross-process, 1 producer + 1 consumer --------------------------------

# Fork a producer running $produce; the parent consumes $n items with
# $consume (which returns how many it took); the rate is items per second
# of wall time from the fork to the last item.
sub cross {
    my ($produce, $consume, $n) = @_;
    $n //= $N;
    my $t = time;
    my $pid = fork // die "fork: $!\n";
    if (!$pid) { eval { $produce->($n) }; POSIX::_exit(0) }
    my $got = 0;
    local $SIG{ALRM} = sub { kill 'KILL', $pid; die "timed out\n" };
    alarm 120;
    while ($got < $n) { $got += $consume->() }
    alarm 0;
    waitpid $pid, 0;
    rate($n, time - $t);
}

sub our_cross {
    my ($class, $v) = @_;
    my $q = $class->new(undef, 4096);
    cross(sub { $q->push_wait($v) for 1 .. $_[0] }, sub { defined($q->pop_wait) ? 1 : 0 });
}

sub our_cross_batch {
    my $q = Data::Queue::Shared::Int->new(undef, 4096);
    cross(sub {
              my $n = shift;
              for (my $i = 0; $i < $n; $i += $B) {
                  my $e = $i + $B > $n ? $n : $i + $B;
                  $q->push_wait_multi(-1, $i + 1 .. $e);
              }
          },
          sub { scalar(my @x = $q->pop_wait_multi(2 * $B)) });
}

# MCE::Queue is shared between an MCE manager and its workers (not across a
# bare fork), so its producer is one MCE worker and the manager consumes.
# Each enqueue from a worker is a message to the manager. MCE::Queue's
# `fast` option is a no-op since MCE 1.867, so the fair comparisons are
# item by item (the 1.0x rows) and batch against batch.
sub mce_cross {
    my ($v, $batch) = @_;
    my $q = MCE::Queue->new;
    my $mce = MCE->new(max_workers => 1, user_func => sub {
        if ($batch) {
            my @b = ($v) x $B;
            for (my $i = 0; $i < $N; $i += $B) {
                $q->enqueue($i + $B > $N ? @b[0 .. $N - $i - 1] : @b);
            }
        }
        else { $q->enqueue($v) for 1 .. $N }
    });
    my $t = time;
    local $SIG{ALRM} = sub { die "timed out\n" };
    alarm 120;
    $mce->run(0);
    my $got = 0;
    if ($batch) { while ($got < $N) { $got += my @x = $q->dequeue($B) } }
    else        { while ($got < $N) { $got++ if defined $q->dequeue } }
    alarm 0;
    my $r = rate($N, time - $t);
    $mce->shutdown;
    $r;
}

# ---- cross-process, non-blocking calls -----------------------------------

# The pattern of the original module's own cross-process benchmark, so that
# our rates can be set beside the ones published for it: a forked child
# pushes N items with the non-blocking push, retrying while the queue is
# full; the parent pops non-blocking until it has N. The queue has
# 1,048,576 slots, as there, but is created before the timer starts (what
# creation costs is not what this row measures).
my $NB_CAP = 1 << 20;

sub our_cross_nb {
    my ($class, $v) = @_;
    my $q = $class->new(undef, $NB_CAP);
    cross(sub { for (1 .. $_[0]) { 1 until $q->push($v) } },
          sub { defined($q->pop) ? 1 : 0 });
}

# MCE::Queue as that benchmark measures it: one MCE worker enqueues all N
# items, the manager runs it to completion, then drains the queue with
# dequeue_nb. (Its items reach the manager as messages while the worker
# runs, so the drain itself only empties the manager's local list.)
sub mce_cross_nb {
    my ($v) = @_;
    my $q = MCE::Queue->new;
    my $mce = MCE->new(max_workers => 1, user_func => sub { $q->enqueue($v) for 1 .. $N });
    my $t = time;
    local $SIG{ALRM} = sub { die "timed out\n" };
    alarm 120;
    $mce->run(0);
    my $got = 0;
    while ($got < $N) { $got++ if defined $q->dequeue_nb }
    alarm 0;
    my $r = rate($N, time - $t);
    $mce->shutdown;
    $r;
}

# Thread::Queue works between threads, not processes: its producer is a
# thread. threads must be loaded before threads::shared (and would switch
# MCE to threads), so it runs in a fresh perl.
sub tq_cross {
    my $v = shift;
    my $code = <<'EOC';
use strict; use warnings; use threads; use Thread::Queue; use Time::HiRes qw(time);
use Time::HiRes ();
my ($n, $v) = @ARGV;
my $q = Thread::Queue->new;
my $t = time;
my $thr = threads->create(sub { $q->enqueue($v) for 1 .. $n; return });
my $got = 0;
while ($got < $n) { $got++ if defined $q->dequeue }
$thr->join;
printf "%.3f\n", $n / (time - $t);
EOC
    open my $fh, '-|', $^X, '-e', $code, $N, $v or die "perl: $!\n";
    my $out = do { local $/; <$fh> } // '';
    close $fh or die "threads unavailable\n";
    $out =~ /^([\d.]+)$/m or die "no result\n";
    $1;
}

sub sysv_cross {
    my $v = shift;
    my $q = sysv_queue();
    my $buf;
    my $r = eval { cross(sub { $q->snd(1, $v) for 1 .. $_[0] }, sub { $q->rcv($buf, 4096) ? 1 : 0 }) };
    $q->remove;
    $r // die $@;
}

sub mq_cross {
    my $v = shift;
    my ($q, $name) = mq_open();
    my $r = eval { cross(sub { $q->send($v) for 1 .. $_[0] }, sub { defined($q->receive) ? 1 : 0 }) };
    POSIX::RT::MQ->unlink($name);
    $r // die $@;
}

sub forks_cross {
    my $v = shift;
    my $q = Forks::Queue->new(impl => 'Shmem');
    cross(sub { $q->put($v) for 1 .. $_[0] }, sub { defined($q->get) ? 1 : 0 }, small(2000));
}

sub transit_cross {
    my $v = shift;
    my $qn = "dqs_bench_x$$";
    cross(sub { IPC::Transit::send(qname => $qn, message => { v => $v }) for 1 .. $_[0] },
        sub { IPC::Transit::receive(qname => $qn) ? 1 : 0 }, small(20000));
}

# ---- idle waits: what a blocked consumer costs -----------------------------

# A consumer blocked in its wait while a producer hands it one item per
# millisecond for DQS_IDLE_SECS seconds (default 10): the CPU the waiting
# process used (its own time on a CPU, user + system, from
# /proc/self/schedstat, nanoseconds; getrusage through `times` counts
# 10 ms ticks), as a share of one core. The floor is a consumer asleep in
# the kernel (a pipe read, msgrcv) woken by the same producer: the cost
# of a sleep and a wake-up, which is what an idle waiter should approach.
# For the Str queue, lock acquisitions per item delivered (the change of
# stats' lock_acquired over the run, producer's pushes included).
my $IDLE_SECS = $ENV{DQS_IDLE_SECS} // 10;
$IDLE_SECS =~ /^\d+(?:\.\d+)?$/ && $IDLE_SECS > 0 or die "DQS_IDLE_SECS: not a number of seconds\n";

# CPU time of this process so far, in seconds: schedstat when the kernel
# keeps it, else `times` (ticks).
sub cpu_self {
    if (open my $fh, '<', '/proc/self/schedstat') {
        my ($ns) = split ' ', scalar <$fh>;
        return $ns / 1e9 if defined $ns && $ns =~ /^\d+$/;
    }
    my ($u, $s) = times;
    $u + $s;
}

# Fork a consumer that takes items with $take (false at the end marker)
# and reports its CPU; the parent calls $give->($i) for i = 1..n, one per
# millisecond on an absolute schedule, then $give->(0) (the end marker).
# Returns the consumer's CPU as a percentage of one core.
sub idle_run {
    my ($take, $give) = @_;
    my $n = int($IDLE_SECS * 1000);
    pipe my $rd, my $wr or die "pipe: $!\n";
    my $pid = fork // die "fork: $!\n";
    if (!$pid) {
        close $rd;
        my ($c0, $t0) = (cpu_self(), time);
        my $got = 0;
        $got++ while $take->();
        my ($c1, $t1) = (cpu_self(), time);
        syswrite $wr, sprintf "%d %.9f %.9f\n", $got, $c1 - $c0, $t1 - $t0;
        POSIX::_exit(0);
    }
    close $wr;
    local $SIG{ALRM} = sub { kill 'KILL', $pid; die "timed out\n" };
    alarm $IDLE_SECS * 3 + 30;
    Time::HiRes::sleep(0.2);    # the consumer is asleep before the first item
    my $start = time;
    for my $i (1 .. $n) {
        my $left = $start + $i / 1000 - time;
        Time::HiRes::sleep($left) if $left > 0;
        $give->($i);
    }
    $give->(0);
    my $line = <$rd> // '';
    waitpid $pid, 0;
    alarm 0;
    my ($got, $cpu, $wall) = split ' ', $line;
    die "the consumer took ${\($got // 0)} of $n items\n" unless ($got // 0) == $n;
    100 * $cpu / $wall;
}

sub idle_pipe {
    pipe my $r, my $w or die "pipe: $!\n";
    my $buf;
    idle_run(sub { sysread($r, $buf, 8) == 8 && unpack('q', $buf) != 0 },
        sub { syswrite $w, pack('q', $_[0]) });
}

sub idle_sysv {
    my $q = sysv_queue();
    my $buf;
    my $r = eval {
        idle_run(sub { $q->rcv($buf, 64) && $buf ne '0' }, sub { $q->snd(1, "$_[0]") or die "msgsnd: $!\n" });
    };
    $q->remove;
    $r // die $@;
}

sub idle_ours {
    my ($class) = @_;
    my $q = $class->new(undef, 1024);
    my $str = $class =~ /Str$/;
    my $acquired = $str ? $q->stats->{lock_acquired} : 0;
    my $cpu = idle_run(sub { my $v = $q->pop_wait(60); defined $v && $v ne '0' },
        sub { $q->push($str ? "$_[0]" : $_[0]) or die "push: queue full\n" });
    return $cpu unless $str;
    my $items = int($IDLE_SECS * 1000) + 1;
    [$cpu, ($q->stats->{lock_acquired} - $acquired) / $items];
}

# The MCE::Queue manager waits in dequeue while one MCE worker enqueues
# (its producer must be a worker), so this row measures the manager.
sub idle_mce {
    my $q = MCE::Queue->new;
    my $n = int($IDLE_SECS * 1000);
    my $mce = MCE->new(max_workers => 1, user_func => sub {
        my $start = time;
        for my $i (1 .. $n) {
            my $left = $start + $i / 1000 - time;
            Time::HiRes::sleep($left) if $left > 0;
            $q->enqueue($i);
        }
    });
    local $SIG{ALRM} = sub { die "timed out\n" };
    alarm $IDLE_SECS * 3 + 30;
    my ($c0, $t0) = (cpu_self(), time);
    $mce->run(0);
    my $got = 0;
    $got++ while $got < $n && defined $q->dequeue;
    my ($c1, $t1) = (cpu_self(), time);
    alarm 0;
    $mce->shutdown;
    100 * ($c1 - $c0) / ($t1 - $t0);
}

# Like section(), for these rows: CPU% and, for Str, locks per item.
sub idle_section {
    my ($title, @cases) = @_;
    return if defined $ENV{DQS_BENCH_SECTION} && $title !~ /$ENV{DQS_BENCH_SECTION}/;
    print "\n$title\n";
    printf "  %-34s %10s %s\n", '', 'CPU', 'locks/item';
    my (%cpu, %locks, %failed, @skips);
    @cases = grep {
        my ($name, $need) = @$_;
        ($need && !have($need)) ? do { push @skips, [$name, "$need not installed"]; 0 } : 1;
    } @cases;
    for my $run (1 .. $RUNS) {
        for my $c (@cases) {
            my ($name, undef, $code) = @$c;
            next if $failed{$name};
            my $r = eval { $code->() };
            if (!defined $r) {
                ($failed{$name} = $@ || 'unavailable') =~ s/\s+at \S+ line \d+.*//s;
                $failed{$name} =~ s/\n//g;
                next;
            }
            my ($cpu, $locks) = ref $r ? @$r : ($r);
            push @{ $cpu{$name} }, $cpu;
            push @{ $locks{$name} }, $locks if defined $locks;
        }
    }
    for my $c (@cases) {
        my $name = $c->[0];
        next unless $cpu{$name};
        printf "  %-34s %9.2f%% %s\n", $name, median(@{ $cpu{$name} }),
            $locks{$name} ? sprintf('%10.2f', median(@{ $locks{$name} })) : '';
    }
    push @skips, map { [$_, $failed{$_}] } sort keys %failed;
    printf "  %-34s %s\n", $_->[0], substr("skipped: $_->[1]", 0, 40) for @skips;
}

# ---- run -------------------------------------------------------------------

my ($cpu, $cores) = ('unknown CPU', 0);
if (open my $fh, '<', '/proc/cpuinfo') {
    for (<$fh>) {
        $cpu = $1 if /^model name\s*:\s*(.*?)\s*$/ && $cpu eq 'unknown CPU';
        $cores++ if /^processor\s*:/;
    }
}
$cpu =~ s/\s+/ /g;
$cpu = substr($cpu, 0, 40);
my $kernel = (POSIX::uname())[2];
print "Data::Queue::Shared $Data::Queue::Shared::VERSION, perl $^V, N=$N",
    ($RUNS > 1 ? ", median of $RUNS runs" : ''), "\n";
print "$cpu, $cores cores, Linux $kernel\n";
print "Rates are items per second; the last column is the ratio to MCE::Queue\n";

my @peers_single = (
    ['MCE::Queue',           'MCE::Queue',    'mce_single'],
    ['Thread::Queue',        'Thread::Queue', 'tq_single'],
    ['IPC::Msg (SysV)',      'IPC::Msg',      'sysv_single'],
    ['POSIX::RT::MQ',        'POSIX::RT::MQ', 'mq_single'],
    ['Forks::Queue (Shmem)', 'Forks::Queue',  'forks_single'],
    ['IPC::Transit',         'IPC::Transit',  'transit_single'],
);
my @peers_cross = (
    ['MCE::Queue',                     'MCE::Queue',    'mce_cross'],
    ['Thread::Queue (2 threads)',      'Thread::Queue', 'tq_cross'],
    ['IPC::Msg (SysV)',                'IPC::Msg',      'sysv_cross'],
    ['POSIX::RT::MQ',                  'POSIX::RT::MQ', 'mq_cross'],
    ['Forks::Queue (Shmem)',           'Forks::Queue',  'forks_cross'],
    ['IPC::Transit',                   'IPC::Transit',  'transit_cross'],
);

sub peers {
    my ($list, $v) = @_;
    no strict 'refs';
    map {
        my ($name, $need, $f) = @$_;
        [$name, $need, sub { &$f($v) }];
    } @$list;
}

section('SINGLE-PROCESS INTEGER PUSH+POP (interleaved)',
    (map { ["Data::Queue::Shared::$_", undef, do { my $c = "Data::Queue::Shared::$_"; sub { our_single($c, 42) } }] }
        qw(Int Int32 Int16)),
    (map { kw_case($_) } qw(Int Int32 Int16)),
    peers(\@peers_single, 42),
);

section('SINGLE-PROCESS STRING PUSH+POP (~50B, interleaved)',
    ['Data::Queue::Shared::Str', undef, sub { our_single('Data::Queue::Shared::Str', $MSG) }],
    kw_case('Str'),
    peers(\@peers_single, $MSG),
);

section("BATCH PUSH+POP ($B per batch, integers)",
    ['Shared::Int push_multi+pop_multi',   undef, sub { our_batch('Data::Queue::Shared::Int') }],
    ['Shared::Int16 push_multi+pop_multi', undef, sub { our_batch('Data::Queue::Shared::Int16') }],
    ['MCE::Queue',           'MCE::Queue',    \&mce_batch],
    ['Thread::Queue',        'Thread::Queue', \&tq_batch],
    ['Forks::Queue (Shmem)', 'Forks::Queue',  \&forks_batch],
    ['IPC::Msg (SysV)',      'IPC::Msg',      'no batch API'],
    ['POSIX::RT::MQ',        'POSIX::RT::MQ', 'no batch API'],
    ['IPC::Transit',         'IPC::Transit',  'no batch API'],
);

section('CROSS-PROCESS (1 producer + 1 consumer, integers)',
    ['Shared::Int',                  undef, sub { our_cross('Data::Queue::Shared::Int', 42) }],
    ["Shared::Int (batches of $B)",  undef, \&our_cross_batch],
    ["MCE::Queue (batches of $B)", 'MCE::Queue', sub { mce_cross(42, 1) }],
    peers(\@peers_cross, 42),
);

section('CROSS-PROCESS (1 producer + 1 consumer, ~50B strings)',
    ['Shared::Str', undef, sub { our_cross('Data::Queue::Shared::Str', $MSG) }],
    peers(\@peers_cross, $MSG),
);

my $nb = section('CROSS-PROCESS, NON-BLOCKING (child pushes, retrying when full; parent pops until N)',
    ['Shared::Int',                undef,        sub { our_cross_nb('Data::Queue::Shared::Int', 42) }],
    ['Shared::Str (~50B)',         undef,        sub { our_cross_nb('Data::Queue::Shared::Str', $MSG) },
        'MCE::Queue (~50B)'],
    ['MCE::Queue',                 'MCE::Queue', sub { mce_cross_nb(42) }],
    ['MCE::Queue (~50B)',          'MCE::Queue', sub { mce_cross_nb($MSG) }, 'MCE::Queue (~50B)'],
);
# Strings against integers, run by run (the two rows of a run are measured
# one right after the other; the median of those ratios is steadier than
# the ratio of the medians on a noisy machine).
my ($ni, $ns) = @$nb{'Shared::Int', 'Shared::Str (~50B)'};
if ($ni && $ns && @$ni == @$ns) {
    printf "  %-34s %10.2f\n", 'Shared::Str / Shared::Int', median(map { $ns->[$_] / $ni->[$_] } 0 .. $#$ni);
}

idle_section("IDLE WAIT (a consumer blocked in its wait, fed 1 item/ms for $IDLE_SECS s: its CPU, one core = 100%)",
    ['pipe read (kernel sleep, floor)',   undef,       \&idle_pipe],
    ['IPC::Msg msgrcv (kernel sleep)',    'IPC::Msg',  \&idle_sysv],
    ['Shared::Int pop_wait',              undef,       sub { idle_ours('Data::Queue::Shared::Int') }],
    ['Shared::Str pop_wait',              undef,       sub { idle_ours('Data::Queue::Shared::Str') }],
    ['MCE::Queue dequeue (manager)',      'MCE::Queue', \&idle_mce],
);
