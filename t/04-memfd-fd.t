# memfd queues and new_from_fd: second handles, fd ownership, close-on-exec,
# seals, and the errors for fds that cannot hold a queue.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Files;
use Test::More;
use Fcntl qw(F_GETFD FD_CLOEXEC);
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;


watchdog(60);

use constant O_CLOEXEC_BIT => 02000000;

for my $class (@INT_CLASSES) {
    subtest "$class: new_memfd" => sub {
        my $q = $class->new_memfd('dqs-memfd', 5);
        is($q->capacity, 8, 'capacity rounded up');
        my $fd = $q->memfd;
        ok($fd >= 0, "memfd returns an fd ($fd)");
        ok(fd_open($fd), 'the fd is open');
        is($q->path, undef, 'no path');
        ok(-l "/proc/self/fd/$fd" && readlink("/proc/self/fd/$fd") =~ /memfd:/,
           'the fd is a memfd') or diag(readlink "/proc/self/fd/$fd");
        my @st = stat("/proc/self/fd/$fd");
        is($st[7], mmap_size_for($class, 8), 'memfd size is header + cap * slot size');
        ok($q->push(11), 'push');
        is($q->pop, 11, 'pop');

        my $q2 = $class->new_memfd('dqs-memfd', 4);
        isnt($q2->memfd, $fd, 'each new_memfd makes its own memfd');
        $q->push(1);
        is($q2->pop, undef, 'two memfd queues of the same name are separate');

        eval { $class->new_memfd("bad\0name", 4) };
        like($@, qr/^\Q$class\E->new_memfd: /, 'a name with a NUL croaks');
    };

    subtest "$class: memfd is close-on-exec and sealed" => sub {
        my $q = $class->new_memfd('dqs-sealed', 16);
        memfd_sealed_ok($q);

        ok($q->push(3) && $q->pop == 3, 'queue still works');
    };

    subtest "$class: new_from_fd on a memfd" => sub {
        my $q = $class->new_memfd('dqs-from-fd', 8);
        my $fd = $q->memfd;
        my $q2 = $class->new_from_fd($fd);
        isa_ok($q2, $class);
        is($q2->capacity, 8, 'capacity from the header');
        ok(fd_open($fd), 'the original fd stays open');
        $q->push(41);
        is($q2->pop, 41, 'push on one handle, pop on the other');
        $q2->push(42);
        is($q->pop, 42, 'and the other way round');
        is($q2->path, undef, 'no path');
        eval { $q2->unlink };
        like($@, qr/cannot unlink anonymous or memfd queue/, 'unlink croaks on it');

        my $dupfd = POSIX::dup($fd);
        my $q3 = $class->new_from_fd($dupfd);
        ok(fd_open($dupfd), 'the caller\'s fd is still open after new_from_fd');
        POSIX::close($dupfd);
        $q->push(43);
        is($q3->pop, 43, 'closing the caller\'s fd does not disturb the queue');

        undef $q;
        $q2->push(44);
        is($q3->pop, 44, 'handles from new_from_fd outlive the original');
    };

    subtest "$class: new_from_fd keeps its own close-on-exec dup" => sub {
        my $q = $class->new_memfd('dqs-dup', 4);
        # fds of this process that refer to our memfd
        my $list = sub {
            opendir my $d, '/proc/self/fd' or die;
            my %h = map { $_ => 1 }
                    grep { /^\d+$/ && (readlink("/proc/self/fd/$_") // '') =~ /memfd:dqs-dup/ } readdir $d;
            \%h;
        };
        my $before = $list->();
        is_deeply([keys %$before], [$q->memfd], 'only the memfd itself refers to the queue');
        my $q2 = $class->new_from_fd($q->memfd);
        my @new = grep { !$before->{$_} } keys %{ $list->() };
        is(scalar @new, 1, 'new_from_fd holds exactly one new fd') or diag("new fds: @new");
        for my $fd (@new) {
            my $flags = fd_flags($fd);
            ok(defined $flags && ($flags & O_CLOEXEC_BIT), "the dup ($fd) is close-on-exec");
            isnt($fd, $q->memfd, 'it is not the caller\'s fd');
        }
        undef $q2;
        my @left = grep { !$before->{$_} } keys %{ $list->() };
        is(scalar @left, 0, 'the dup is closed with the handle');
        ok(fd_open($q->memfd), 'the original memfd is still open');
    };

    subtest "$class: new_from_fd on a regular file" => sub {
        my $p = fresh_path('ff');
        my $fq = $class->new($p, 4);
        open(my $fh, '+<', $p) or die "open $p: $!";
        my $q = $class->new_from_fd(fileno $fh);
        is($q->capacity, 4, 'capacity');
        $fq->push(-8);
        is($q->pop, -8, 'attached to the same queue');
        ok(defined fcntl($fh, F_GETFD, 0), 'the caller\'s handle is still usable');
        close $fh;
        $q->push(9);
        is($fq->pop, 9, 'closing it does not disturb the queue');
    };

    subtest "$class: memfd shared with a forked child" => sub {
        my $q = $class->new_memfd('dqs-fork', 8);
        my $fd = $q->memfd;
        $q->push(78);
        my $pid = spawn(sub {
            my $c = $class->new_from_fd($fd);
            my $v = $c->pop_wait(10);
            defined $v && $v == 78 or die "child got ", $v // 'undef', "\n";
            $c->push(77) or die "push\n";
        });
        reap_ok($pid, 'child popped what the parent pushed, through new_from_fd');
        is($q->pop, 77, 'parent pops what the child pushed');
        is($q->size, 0, 'nothing else');
    };

    subtest "$class: new_from_fd errors" => sub {
        my $p = fresh_path('empty');
        open(my $fh, '+>', $p) or die;
        eval { $class->new_from_fd(fileno $fh) };
        like($@, qr/^\Q$class\E->new_from_fd: .*too small/, 'a 0-byte file: too small');
        print {$fh} 'x' x 100;
        $fh->flush;
        eval { $class->new_from_fd(fileno $fh) };
        like($@, qr/^\Q$class\E->new_from_fd: .*too small/, 'a 100-byte file: too small');
        close $fh;

        open(my $null, '+<', '/dev/null') or die;
        eval { $class->new_from_fd(fileno $null) };
        like($@, qr/^\Q$class\E->new_from_fd: .*(?:too small|not a memfd or regular file)/, '/dev/null');
        close $null;

        eval { $class->new_from_fd(-1) };
        like($@, qr/^\Q$class\E->new_from_fd: /, 'fd -1 croaks');

        open(my $tmp, '<', $0) or die;
        my $closed = fileno $tmp;
        close $tmp;
        eval { $class->new_from_fd($closed) };
        like($@, qr/^\Q$class\E->new_from_fd: /, 'a closed fd croaks');

        eval { $class->new_from_fd(undef) };
        like($@, qr/^\Q$class\E->new_from_fd: /, 'undef croaks');

        for my $other (grep { $_ ne $class } @INT_CLASSES) {
            my $oq = $other->new_memfd('other', 16);
            eval { $class->new_from_fd($oq->memfd) };
            like($@, qr/^\Q$class\E->new_from_fd: .*invalid or incompatible queue file/,
                 "a memfd of $other");
        }

        $p = fresh_path('garbage');
        open($fh, '+>', $p) or die;
        print {$fh} join '', map { chr(1 + int rand 255) } 1 .. 4096;
        $fh->flush;
        eval { $class->new_from_fd(fileno $fh) };
        like($@, qr/^\Q$class\E->new_from_fd: .*invalid or incompatible/, 'a garbage file');
        close $fh;
    };
}

subtest 'no fd leaks from memfd queues and new_from_fd' => sub {
    my $before = fd_count();
    for my $class (@INT_CLASSES) {
        for (1 .. 50) {
            my $q = $class->new_memfd('leak', 4);
            my $q2 = $class->new_from_fd($q->memfd);
            eval { $class->new_from_fd(-1) };
        }
    }
    is(fd_count(), $before, 'every fd is closed when the handles go away');
};

done_testing;
