# The dqs command-line tool with other processes: shell pipelines into
# Perl consumers, Perl producers into dqs, blocking --wait both ways,
# timeouts, signals during a wait (the waiter count is undone), and watch.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSCli;
use Test::More;
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(180);

my $dir = tmpdir();
my $seq = 0;
sub fresh { "$dir/q" . $seq++ . '.shm' }

sub sh_quote { my $s = shift; $s =~ s/'/'\\''/g; "'$s'" }

# Run a shell command line; returns its exit status ($? >> 8).
sub shell {
    my ($cmd) = @_;
    system('/bin/sh', '-c', $cmd);
    return $? >> 8;
}

my $DQSQ = sh_quote($DQS);

subtest 'seq 1 1000 | dqs push q - ; a Perl consumer gets them all in order' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int->new($p, 1024);
    is shell("seq 1 1000 | $DQSQ push " . sh_quote($p) . ' -'), 0, 'pipeline exit 0';
    my @got;
    while (defined(my $v = $q->pop)) { push @got, $v }
    is scalar @got, 1000, '1000 items';
    is_deeply \@got, [1 .. 1000], 'all of them, in order';
};

subtest 'a pipeline into a small queue with --wait, drained concurrently by Perl' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int->new($p, 16);
    my $pid = spawn(sub {
        exec '/bin/sh', '-c', "seq 1 1000 | $DQSQ push " . sh_quote($p) . ' - --wait 60'
            or die "exec: $!";
    });
    my @got;
    while (@got < 1000) {
        my $v = $q->pop_wait(30);
        last unless defined $v;
        push @got, $v;
    }
    reap_ok($pid, 'the producing pipeline exits 0');
    is_deeply \@got, [1 .. 1000], 'the consumer got 1 .. 1000 in order';
};

subtest 'Perl producer of Str items, dqs consumer' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Str->new($p, 8);
    my @items = ("caf\x{e9} \x{263a}", "bytes\xff\x01", "", "plain");
    my $pid = spawn(sub {
        my $w = Data::Queue::Shared::Str->new($p, 8);
        $w->push_wait($_, 30) or die "push_wait timed out" for (@items) x 50;
    });
    my $r = dqs(['pop', $p, '-n', 200, '-0', '--wait', 30]);
    reap_ok($pid, 'producer done');
    is $r->{code}, 0, 'dqs pop -n 200 -0 --wait: exit 0' or diag $r->{err};
    my @want = map { my $s = $_; utf8::encode($s) if utf8::is_utf8($s); $s } @items;
    my @got = split /\0/, $r->{out}, -1;
    is pop(@got), '', 'output ends with a NUL';
    is scalar @got, 200, '200 items';
    is_deeply \@got, [(@want) x 50], 'exact bytes, in order (UTF-8 items as their encoding)';
};

subtest 'dqs producer of Str lines, Perl consumer' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Str->new($p, 8);
    my $in = join '', map { "line $_ \xc3\xa9\n" } 1 .. 300;
    my ($pid) = dqs_bg(['push', $p, '-', '--wait', 60], stdin => $in);
    my @got;
    while (@got < 300) {
        my $v = $q->pop_wait(30);
        last unless defined $v;
        push @got, $v;
    }
    reap($pid);
    is $? >> 8, 0, 'dqs push - --wait exits 0';
    is_deeply \@got, [map { "line $_ \x{e9}" } 1 .. 300], 'all lines, decoded (UTF-8 flag set)';
    ok utf8::is_utf8($got[0]), 'flag on';
};

subtest 'a reader that goes away ends dqs pop as SIGPIPE does, silently' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int->new($p, 32768);
    $q->push($_) for 1 .. 30000;                   # well over a pipe buffer of output
    my $err = "$dir/pipe.err";
    open my $fh, '-|', "exec $DQSQ pop " . sh_quote($p) . " --all 2>$err" or die "open: $!";
    my $first = <$fh>;
    close $fh;
    my $st = $?;
    is $first, "1\n", 'the reader got the first item';
    is $st & 127, POSIX::SIGPIPE(), 'dqs died of SIGPIPE';
    is slurp($err), '', 'with nothing on stderr';
};

subtest '--wait: timeouts are exit 1' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int->new($p, 2);
    my $t0 = now();
    my $r = dqs(['pop', $p, '--wait', '0.3']);
    my $took = now() - $t0;
    is $r->{code}, 1, 'pop --wait 0.3 on an empty queue: exit 1';
    one_line_err($r, qr/timed out after 0\.3s/, 'says it timed out');
    ok $took >= 0.25, 'it waited' or diag "took $took";
    $q->push($_) for 1, 2;
    $r = dqs(['push', $p, 3, '--wait', '0.2']);
    is $r->{code}, 1, 'push --wait 0.2 on a full queue: exit 1';
    one_line_err($r, qr/timed out after 0\.2s waiting for room \(pushed 0 of 1 items\)/, 'says so');
    $r = dqs(['pop', $p, '-n', 3, '--wait', '0.1']);
    is_deeply [$r->{code}, $r->{out}], [1, "1\n2\n"], 'pop -n 3 --wait: two items, then a timeout';
    is $q->stats->{pop_waiters}, 0, 'no waiter left behind';
    $q->push(5);
    $r = dqs(['pop', $p, '--all', '--wait', 0]);
    is_deeply [$r->{code}, $r->{out}], [0, "5\n"], '--wait 0 tries once';
};

subtest 'blocked dqs pop is woken by a Perl push; blocked push by a Perl pop' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int->new($p, 2);
    my ($pid, $out) = dqs_bg(['pop', $p, '-n', 2, '--wait', 60]);
    ok wait_for(sub { $q->stats->{pop_waiters} == 1 }, 30), 'dqs pop is waiting';
    $q->push(41);
    ok wait_for(sub { slurp($out) eq "41\n" }, 30), 'the first item is printed (flushed) before it waits again';
    $q->push(42);
    reap($pid);
    is $? >> 8, 0, 'exit 0';
    is slurp($out), "41\n42\n", 'both printed';

    $q->push($_) for 1, 2;
    ($pid) = dqs_bg(['push', $p, 3, 4, '--wait', 'inf']);
    ok wait_for(sub { $q->stats->{push_waiters} == 1 }, 30), 'dqs push is waiting for room';
    is $q->pop, 1, 'Perl pops';
    ok wait_for(sub { $q->stats->{push_waiters} == 1 && $q->size == 2 }, 30),
        '3 went in; waiting again for 4';
    is $q->pop, 2, 'Perl pops again';
    reap($pid);
    is $? >> 8, 0, 'dqs push exits 0';
    is_deeply [$q->pop, $q->pop], [3, 4], 'both values arrived in order';
};

subtest 'signals end a wait cleanly' => sub {
    for my $sig (qw(INT TERM)) {
        my $p = fresh();
        my $q = Data::Queue::Shared::Str->new($p, 4);
        my ($pid, undef, $err) = dqs_bg(['pop', $p, '--wait', 'inf']);
        ok wait_for(sub { $q->stats->{pop_waiters} == 1 }, 30), "waiting (for SIG$sig)";
        kill $sig, $pid;
        reap($pid);
        my $st = $?;
        is $st & 127, POSIX->can("SIG$sig")->(), "dqs pop died of SIG$sig (shell status 128+N)";
        is $q->stats->{pop_waiters}, 0, 'and took itself out of the waiter count first';
        is $q->push('still fine'), 1, 'the queue works';
    }
    # A signal at any moment (before, while and just as the wait starts)
    # ends the command: none may be lost in the gap before the futex wait.
    # Under valgrind every one of these moments falls in the tool's own
    # start-up, where its signal emulation can swallow a signal that the
    # program then blocks and sigwait()s for (valgrind 3.19): nothing of
    # dqs's is tested there, so dev/valgrind.sh (DQS_VALGRIND=1) skips it.
    SKIP: {
        skip 'under valgrind its start-up can eat the signal', 2 if $ENV{DQS_VALGRIND};
        my $p = fresh();
        my $q = Data::Queue::Shared::Int->new($p, 4);
        my $dead = 0;
        for my $i (1 .. 30) {
            my ($pid) = dqs_bg(['pop', $p, '--wait', 'inf']);
            Time::HiRes::sleep(($i % 10) * 0.003);
            kill 'INT', $pid;
            reap($pid);
            $dead++ if ($? & 127) == POSIX::SIGINT();
        }
        is $dead, 30, 'SIGINT at 30 different moments: every dqs pop died of it';
        ok wait_for(sub { $q->stats->{pop_waiters} == 0 }, 5), 'no waiter left behind';
    }
};

subtest 'watch --count: size, rates and waiters' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int->new($p, 1024);
    $q->push($_) for 1 .. 5;
    my $r = dqs(['watch', $p, '--count', 2, '--interval', '0.05']);
    is $r->{code}, 0, 'watch --count 2: exit 0';
    my @lines = split /\n/, $r->{out};
    is scalar @lines, 2, 'two lines (not a terminal: one line per refresh)';
    like $_, qr{^size 5/1024  push/s 0\.0  pop/s 0\.0  waiting: push 0 pop 0$}, 'an idle queue'
        for @lines;

    $q->pop for 1 .. 5;
    my ($waiter) = dqs_bg(['pop', $p, '--wait', 60]);
    ok wait_for(sub { $q->stats->{pop_waiters} == 1 }, 30), 'a dqs pop waits';
    $r = dqs(['watch', $p, '--count', 1, '--interval', '0.05']);
    like $r->{out}, qr/waiting: push 0 pop 1$/, 'watch shows the waiter';
    $q->push(99);
    reap($waiter);
    is $? >> 8, 0, 'the waiter got its item';

    # Rates: push all the time watch runs; every refresh then sees pushes.
    my ($w, $out) = dqs_bg(['watch', $p, '--count', 3, '--interval', '0.2']);
    my $n = 0;
    while (!defined reap($w, 1)) {
        $q->push($n++) or $q->clear;
        Time::HiRes::sleep(0.002);
    }
    is $? >> 8, 0, 'watch exits 0 after 3 refreshes';
    my @rates = slurp($out) =~ m{push/s ([\d.]+)  pop/s ([\d.]+)}g;
    is scalar @rates, 6, 'three lines with two rates each';
    my @push = @rates[0, 2, 4];
    ok((grep { $_ > 0 } @push) >= 1, 'push rates are positive while pushing') or diag "@push";

    my $s = Data::Queue::Shared::Str->new(fresh(), 4, 4096);
    $s->push('abc');
    $r = dqs(['watch', $s->path, '--count', 1, '--interval', '0.01']);
    like $r->{out}, qr{^size 1/4 .* arena \d+/4096$}, 'str queues show the arena';
};

subtest 'watch on a terminal redraws in place' => sub {
    my $script = '/usr/bin/script';
    plan skip_all => 'script(1) not available' unless -x $script;
    my $p = fresh();
    Data::Queue::Shared::Int->new($p, 8)->push(1);
    my $cmd = "$DQSQ watch " . sh_quote($p) . ' --count 3 --interval 0.05';
    my $out = `$script -qec @{[sh_quote($cmd)]} /dev/null 2>&1`;
    is $? >> 8, 0, 'exit 0 under a pseudo-terminal';
    my @draws = $out =~ /\r\e\[K(size [^\r\n]*)/g;
    is scalar @draws, 3, 'three redraws, each a carriage return and erase-line';
    like $out, qr/\n\s*\z/, 'ends with a newline';
};

done_testing;
