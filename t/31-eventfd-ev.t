# A real event loop: an EV io watcher on the queue's eventfd is woken by
# notify calls from child processes, drains the queue, and sees every
# item. Skipped when EV is not installed.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

BEGIN {
    eval { require EV; 1 } or plan skip_all => 'EV is not installed';
}

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Str;

watchdog(60);

my $dir = tmpdir();

for my $class (qw(Data::Queue::Shared::Int Data::Queue::Shared::Str)) {
    subtest "$class: EV wakes on notifications from other processes" => sub {
        my $path = "$dir/" . ($class =~ /(\w+)$/)[0] . '.shm';
        my $q = $class->new($path, 64);
        my $fd = $q->eventfd;

        my ($batches, $per_batch, $producers) = (5, 10, 2);
        my $want = $batches * $per_batch * $producers;
        my (@got, $wakeups, $notified);

        my $io = EV::io($fd, EV::READ(), sub {
            $wakeups++;
            $notified += $q->eventfd_consume;
            while (defined(my $v = $q->pop)) {
                push @got, $v;
            }
            EV::break() if @got >= $want;
        });
        my $timeout = EV::timer(30, 0, sub { EV::break() });

        # Producers: one with the inherited handle, one with its own handle
        # that adopts the inherited fd. Each pushes in batches and notifies
        # once per batch (waiting for room when the consumer is behind).
        # libev's default loop reaps every child that exits while it runs
        # (its SIGCHLD handler), which would steal the producers' exit
        # statuses from reap_ok: so they stay alive, blocked on a pipe,
        # until the loop is done.
        pipe(my $hold_r, my $hold_w) or die "pipe: $!";
        my @pids;
        for my $p (1 .. $producers) {
            push @pids, spawn(sub {
                close $hold_w;
                my $h = $q;
                if ($p == 2) {
                    $h = $class->new($path, 64);
                    $h->eventfd_set($fd);
                }
                for my $b (1 .. $batches) {
                    for my $i (1 .. $per_batch) {
                        $h->push_wait("$p$b" . sprintf('%02d', $i), 10) or die "push_wait timed out\n";
                    }
                    $h->notify or die "notify failed: $!\n";
                    Time::HiRes::sleep(0.01);
                }
                my $eof = <$hold_r>;    # until the parent closes its end
            });
        }
        close $hold_r;
        EV::run();
        close $hold_w;

        is(scalar @got, $want, "the watcher received all $want items");
        my @expect = sort map { my $p = $_; map { my $b = $_; map { "$p$b" . sprintf('%02d', $_) } 1 .. $per_batch } 1 .. $batches } 1 .. $producers;
        is_deeply([sort @got], \@expect, 'exactly the items pushed');
        ok($wakeups >= 1, "woken $wakeups time(s)");
        ok($notified >= 1 && $notified <= $batches * $producers,
           "eventfd_consume counted $notified notification(s)");
        reap_ok($_, "producer $_") for @pids;
        $q->unlink;
    };
}

subtest 'no watcher fires without notify' => sub {
    my $q = Data::Queue::Shared::Int->new(undef, 8);
    my $fired = 0;
    my $io = EV::io($q->eventfd, EV::READ(), sub { $fired++; $q->eventfd_consume; EV::break() });
    $q->push(1);
    my $t = EV::timer(0.2, 0, sub { EV::break() });
    EV::run();
    is($fired, 0, 'push alone does not wake the loop');
    $q->notify;
    $t = EV::timer(5, 0, sub { EV::break() });
    EV::run();
    is($fired, 1, 'notify does');
    is($q->pop, 1, 'the item is there');
};

done_testing;
