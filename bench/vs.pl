#!/usr/bin/env perl
# Throughput of Data::Queue::Shared against the other Perl queues that are
# installed, measured in the same run. Usage: perl -Mblib bench/vs.pl [N]
use strict;
use warnings;
use Config;
use POSIX ();
use Time::HiRes qw(time);
use File::Temp qw(tempdir);

use Data::Queue::Shared;
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

$| = 1;
my $N   = shift // 200_000;
$N =~ /^\d+$/ && $N > 0 or die "usage: $0 [N]\n";
my $dir = tempdir(CLEANUP => 1);
my $MSG = 'x' x 50;
my @rows;

# MCE::Queue decides at import whether it talks to MCE workers, so MCE must
# be loaded first.
sub have {
    my $m = shift;
    local $@;
    eval { require MCE; 1 } if $m eq 'MCE::Queue';
    eval "require $m; $m->import; 1";
}

sub rate { my ($n, $t) = @_; $t > 0 ? $n / $t : 0 }

sub fmt_rate {
    my $r = shift;
    return sprintf '%.1fM/s', $r / 1e6 if $r >= 1e6;
    return sprintf '%.0fK/s', $r / 1e3 if $r >= 1e3;
    return sprintf '%.0f/s', $r;
}

sub section {
    my ($title, @cases) = @_;
    print "\n$title\n";
    my (%rate, $mce);
    for my $c (@cases) {
        my ($name, $need, $code) = @$c;
        if ($need && !have($need)) {
            printf "  %-30s %12s\n", $name, "skipped ($need not installed)";
            next;
        }
        print STDERR "  [$name]\n" if $ENV{DQS_BENCH_DEBUG};
        my $r = eval { $code->() };
        if (!defined $r) {
            my $e = $@ || 'unavailable';
            $e =~ s/\s+at \S+ line \d+.*//s;
            $e =~ s/\n//g;
            printf "  %-30s %12s\n", $name, "skipped ($e)";
            next;
        }
        $rate{$name} = $r;
        $mce = $r if $name eq 'MCE::Queue';
    }
    for my $name (sort { $rate{$b} <=> $rate{$a} } keys %rate) {
        my $ratio = $mce ? sprintf('%5.1fx', $rate{$name} / $mce) : '';
        printf "  %-30s %12s  %s\n", $name, fmt_rate($rate{$name}), $ratio;
    }
}

# ---- single-process, interleaved push+pop ---------------------------------

sub interleave {
    my ($push, $pop, $v) = @_;
    my $t = time;
    for (1 .. $N) { $push->($v); $pop->() }
    rate($N, time - $t);
}

sub our_int_single {
    my $q = Data::Queue::Shared::Int->new(undef, 1024);
    my $t = time;
    for my $i (1 .. $N) { $q->push($i); $q->pop }
    rate($N, time - $t);
}

sub our_str_single {
    my $q = Data::Queue::Shared::Str->new(undef, 1024);
    my $t = time;
    for my $i (1 .. $N) { $q->push($MSG); $q->pop }
    rate($N, time - $t);
}

sub mce_single {
    my $v = shift;
    require MCE::Queue;
    my $q = MCE::Queue->new;
    interleave(sub { $q->enqueue($_[0]) }, sub { $q->dequeue_nb }, $v);
}

sub tq_single {
    my $v = shift;
    require Thread::Queue;
    my $q = Thread::Queue->new;
    interleave(sub { $q->enqueue($_[0]) }, sub { $q->dequeue_nb }, $v);
}

sub sysv_single {
    my $v = shift;
    require IPC::SysV;
    require IPC::Msg;
    my $q = IPC::Msg->new(IPC::SysV::IPC_PRIVATE(), 0600) or die "msgget: $!\n";
    my $buf;
    my $r = eval {
        interleave(sub { $q->snd(1, $_[0]) or die "msgsnd: $!\n" },
            sub { $q->rcv($buf, 4096, 0, IPC::SysV::IPC_NOWAIT()) }, $v);
    };
    $q->remove;
    $r;
}

sub mq_single {
    my $v = shift;
    require POSIX::RT::MQ;
    my $name = "/dqs-bench-$$";
    my $q = POSIX::RT::MQ->open($name, POSIX::O_RDWR() | POSIX::O_CREAT(), 0600,
        { mq_maxmsg => 8, mq_msgsize => 256 }) or die "mq_open: $!\n";
    my $r = interleave(sub { $q->send($_[0]) }, sub { $q->receive }, $v);
    POSIX::RT::MQ->unlink($name);
    $r;
}

sub forks_single {
    my $v = shift;
    require Forks::Queue;
    my $q = Forks::Queue->new(impl => 'Shmem');
    my $n = $N > 5000 ? 5000 : $N;
    my $t = time;
    for (1 .. $n) { $q->put($v); $q->get_nb }
    rate($n, time - $t);
}

sub transit_single {
    my $v = shift;
    require IPC::Transit;
    my $qn = "dqs_bench_$$";
    my $n = $N > 20000 ? 20000 : $N;
    my $t = time;
    for (1 .. $n) {
        IPC::Transit::send(qname => $qn, message => { v => $v });
        IPC::Transit::receive(qname => $qn, nonblock => 1);
    }
    rate($n, time - $t);
}

# ---- batches ---------------------------------------------------------------

sub our_batch {
    my $q = Data::Queue::Shared::Int->new(undef, 1024);
    my @b = (1 .. 100);
    my $rounds = int($N / 100) || 1;
    my $t = time;
    for (1 .. $rounds) { $q->push_multi(@b); my @x = $q->pop_multi(100) }
    rate($rounds * 100, time - $t);
}

sub mce_batch {
    require MCE::Queue;
    my $q = MCE::Queue->new;
    my @b = (1 .. 100);
    my $rounds = int($N / 100) || 1;
    my $t = time;
    for (1 .. $rounds) { $q->enqueue(@b); my @x = $q->dequeue_nb(100) }
    rate($rounds * 100, time - $t);
}

# ---- cross-process, 1 producer + 1 consumer --------------------------------

# Fork a producer running $produce; the parent consumes $N items with
# $consume (which returns true per item); the rate is items per second of
# wall time from the fork to the last item.
sub cross {
    my ($produce, $consume) = @_;
    my $t = time;
    my $pid = fork // die "fork: $!";
    if (!$pid) { eval { $produce->() }; POSIX::_exit(0) }
    my $got = 0;
    local $SIG{ALRM} = sub { kill 'KILL', $pid; die "timed out\n" };
    alarm 120;
    while ($got < $N) { $got += $consume->() }
    alarm 0;
    waitpid $pid, 0;
    rate($N, time - $t);
}

sub our_int_cross {
    my $q = Data::Queue::Shared::Int->new(undef, 4096);
    cross(sub { $q->push_wait($_) for 1 .. $N }, sub { defined($q->pop_wait) ? 1 : 0 });
}

sub our_int_cross_batch {
    my $q = Data::Queue::Shared::Int->new(undef, 4096);
    cross(sub { my $i = 0; while ($i < $N) { my $e = $i + 100 > $N ? $N : $i + 100;
                $q->push_wait_multi(-1, $i + 1 .. $e); $i = $e } },
          sub { scalar(my @x = $q->pop_wait_multi(256)) });
}

sub our_str_cross {
    my $q = Data::Queue::Shared::Str->new(undef, 4096);
    cross(sub { $q->push_wait($MSG) for 1 .. $N }, sub { defined($q->pop_wait) ? 1 : 0 });
}

# MCE::Queue is shared between an MCE manager and its workers (not across a
# bare fork), so its producer is one MCE worker and the manager consumes.
sub mce_cross {
    my $v = shift;
    require MCE;
    require MCE::Queue;
    my $q = MCE::Queue->new;
    my $mce = MCE->new(max_workers => 1, user_func => sub { $q->enqueue($v) for 1 .. $N });
    my $t = time;
    local $SIG{ALRM} = sub { die "timed out\n" };
    alarm 120;
    $mce->run(0);
    my $got = 0;
    while ($got < $N) { $got++ if defined $q->dequeue }
    alarm 0;
    my $r = rate($N, time - $t);
    $mce->shutdown;
    $r;
}

sub sysv_cross {
    my $v = shift;
    require IPC::SysV;
    require IPC::Msg;
    my $q = IPC::Msg->new(IPC::SysV::IPC_PRIVATE(), 0600) or die "msgget: $!\n";
    my $buf;
    my $r = eval { cross(sub { $q->snd(1, $v) for 1 .. $N }, sub { $q->rcv($buf, 4096) ? 1 : 0 }) };
    $q->remove;
    $r;
}

sub mq_cross {
    my $v = shift;
    require POSIX::RT::MQ;
    my $name = "/dqs-bench-x$$";
    my $q = POSIX::RT::MQ->open($name, POSIX::O_RDWR() | POSIX::O_CREAT(), 0600,
        { mq_maxmsg => 8, mq_msgsize => 256 }) or die "mq_open: $!\n";
    my $r = cross(sub { $q->send($v) for 1 .. $N }, sub { defined($q->receive) ? 1 : 0 });
    POSIX::RT::MQ->unlink($name);
    $r;
}

# ---- run -------------------------------------------------------------------

my $cpu = do {
    open my $fh, '<', '/proc/cpuinfo';
    my ($m) = $fh ? grep { /^model name/ } <$fh> : ();
    $m ? ($m =~ /:\s*(.*)/)[0] : 'unknown CPU';
};
my $cores = () = do { open my $fh, '<', '/proc/cpuinfo'; $fh ? grep { /^processor/ } <$fh> : () };
my $kernel = (POSIX::uname())[2];
printf "Data::Queue::Shared %s | %s | %d cores | perl %s | Linux %s | N=%d\n",
    $Data::Queue::Shared::VERSION, $cpu, $cores, $^V, $kernel, $N;
print "Rates are items per second; the last column is the ratio to MCE::Queue in this run.\n";

my $have_str = eval { Data::Queue::Shared::Str->new(undef, 2); 1 };

section('SINGLE-PROCESS INTEGER PUSH+POP (interleaved)',
    ['Data::Queue::Shared::Int', undef, \&our_int_single],
    ['MCE::Queue', 'MCE::Queue', sub { mce_single(42) }],
    ['Thread::Queue', 'Thread::Queue', sub { tq_single(42) }],
    ['IPC::Msg (SysV)', 'IPC::Msg', sub { sysv_single(42) }],
    ['POSIX::RT::MQ', 'POSIX::RT::MQ', sub { mq_single(42) }],
    ['Forks::Queue (Shmem)', 'Forks::Queue', sub { forks_single(42) }],
    ['IPC::Transit', 'IPC::Transit', sub { transit_single(42) }],
);

section('SINGLE-PROCESS STRING PUSH+POP (~50B, interleaved)',
    ['Data::Queue::Shared::Str', undef, sub { $have_str ? our_str_single() : die "not built\n" }],
    ['MCE::Queue', 'MCE::Queue', sub { mce_single($MSG) }],
    ['Thread::Queue', 'Thread::Queue', sub { tq_single($MSG) }],
    ['IPC::Msg (SysV)', 'IPC::Msg', sub { sysv_single($MSG) }],
    ['POSIX::RT::MQ', 'POSIX::RT::MQ', sub { mq_single($MSG) }],
    ['Forks::Queue (Shmem)', 'Forks::Queue', sub { forks_single($MSG) }],
    ['IPC::Transit', 'IPC::Transit', sub { transit_single($MSG) }],
);

section('BATCH PUSH+POP (100 per batch, integers)',
    ['Shared::Int push_multi', undef, \&our_batch],
    ['MCE::Queue', 'MCE::Queue', \&mce_batch],
);

section('CROSS-PROCESS (1 producer + 1 consumer, integers)',
    ['Shared::Int', undef, \&our_int_cross],
    ['Shared::Int (batches of 100)', undef, \&our_int_cross_batch],
    ['MCE::Queue', 'MCE::Queue', sub { mce_cross(42) }],
    ['IPC::Msg (SysV)', 'IPC::Msg', sub { sysv_cross(42) }],
    ['POSIX::RT::MQ', 'POSIX::RT::MQ', sub { mq_cross(42) }],
);

section('CROSS-PROCESS (1 producer + 1 consumer, ~50B strings)',
    ['Shared::Str', undef, sub { $have_str ? our_str_cross() : die "not built\n" }],
    ['MCE::Queue', 'MCE::Queue', sub { mce_cross($MSG) }],
    ['IPC::Msg (SysV)', 'IPC::Msg', sub { sysv_cross($MSG) }],
    ['POSIX::RT::MQ', 'POSIX::RT::MQ', sub { mq_cross($MSG) }],
);
