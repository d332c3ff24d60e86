# Event-loop integration: eventfd, eventfd_set, fileno, notify and
# eventfd_consume on all four classes. Readability is checked with 4-arg
# select and IO::Select; notification crosses fork both through an
# inherited handle and through a fresh handle given the inherited fd.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;
use Errno ();
use IO::Select;
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(60);

my $dir = tmpdir();
my $seq = 0;
my @CLASSES = (@INT_CLASSES, 'Data::Queue::Shared::Str');

sub item_for { $_[0] =~ /Str$/ ? "item-$_[1]" : $_[1] }

# Whether $fd is readable now (4-arg select, timeout $t seconds, default 0).
sub readable {
    my ($fd, $t) = @_;
    my $rin = '';
    vec($rin, $fd, 1) = 1;
    my $n = select(my $rout = $rin, undef, undef, $t // 0);
    return $n > 0 && vec($rout, $fd, 1);
}

sub fd_open { defined readlink("/proc/self/fd/$_[0]") }

sub fd_target { readlink("/proc/self/fd/$_[0]") // '' }

# The open flags of $fd, from /proc/self/fdinfo (octal there).
sub fd_flags {
    open my $fh, '<', "/proc/self/fdinfo/$_[0]" or return undef;
    while (<$fh>) { return oct $1 if /^flags:\s+(\d+)/ }
    return undef;
}

sub open_fds {
    opendir my $d, '/proc/self/fd' or die "opendir /proc/self/fd: $!";
    return scalar grep { /^\d+$/ } readdir $d;
}

for my $class (@CLASSES) {
    subtest "$class: eventfd, fileno, notify, eventfd_consume" => sub {
        my $q = $class->new(undef, 8);
        is($q->fileno, -1, 'fileno is -1 before any eventfd');
        ok(!$q->notify, 'notify without an eventfd returns false');
        is($q->eventfd_consume, undef, 'eventfd_consume without an eventfd returns undef');

        my $fd = $q->eventfd;
        like($fd, qr/^\d+$/, "eventfd returns an fd number ($fd)");
        is($q->eventfd, $fd, 'a second eventfd call returns the same fd');
        is($q->fileno, $fd, 'fileno returns it');
        like(fd_target($fd), qr/eventfd/, 'it is an eventfd');
        my $flags = fd_flags($fd);
        ok($flags & POSIX::O_NONBLOCK(), 'it is non-blocking');
        ok($flags & 02000000, 'it is close-on-exec');    # O_CLOEXEC

        ok(!readable($fd), 'not readable before a notify');
        is($q->eventfd_consume, undef, 'eventfd_consume with nothing pending returns undef');
        ok($q->push(item_for($class, 1)), 'push');
        ok(!readable($fd), 'push alone does not signal');

        ok($q->notify, 'notify returns true');
        ok(readable($fd), 'readable after notify (select)');
        my $sel = IO::Select->new($fd);
        is_deeply([$sel->can_read(0)], [$fd], 'readable after notify (IO::Select)');
        ok(readable($fd), 'checking readability does not consume');

        $q->notify for 1 .. 4;
        is($q->eventfd_consume, 5, 'eventfd_consume returns the accumulated count');
        ok(!readable($fd), 'not readable after eventfd_consume');
        is_deeply([$sel->can_read(0)], [], 'IO::Select agrees');
        is($q->eventfd_consume, undef, 'a second eventfd_consume returns undef');
        is($q->pop, item_for($class, 1), 'the queue itself is untouched by all this');
    };

    subtest "$class: eventfd_set uses the caller's fd and never closes it" => sub {
        my $owner = $class->new(undef, 4);
        my $fd = $owner->eventfd;

        my $q = $class->new(undef, 4);
        is($q->eventfd_set($fd), $fd, 'eventfd_set returns the fd');
        is($q->fileno, $fd, 'fileno returns exactly that fd');
        is($q->eventfd, $fd, 'eventfd then returns it too, creating nothing');
        ok($q->notify, 'notify through the lent fd');
        is($owner->eventfd_consume, 1, 'the owner sees the notification');
        undef $q;
        ok(fd_open($fd), 'destroying the borrower leaves the fd open');
        ok($owner->notify && $owner->eventfd_consume == 1, 'and working');

        my $r = $class->new(undef, 4);
        my $mine = $r->eventfd;
        $r->eventfd_set($fd);
        is($r->fileno, $fd, 'eventfd_set replaces an eventfd the queue created');
        ok(!fd_open($mine), 'the one it created is closed');

        my $s = $class->new(undef, 4);
        my $own = $s->eventfd;
        is($s->eventfd_set($own), $own, 'eventfd_set with its own eventfd');
        ok(fd_open($own), 'keeps it open');
        ok($s->notify && $s->eventfd_consume == 1, 'and working');
        undef $s;
        ok(!fd_open($own), 'still the queue\'s own: closed on DESTROY');
    };

    subtest "$class: eventfd_set refuses what is not an open fd" => sub {
        my $q = $class->new(undef, 4);
        my $re = qr/^\Q$class\E->eventfd_set: /;
        for my $bad (undef, 'abc', '') {
            eval { $q->eventfd_set($bad) };
            like($@, qr/${re}fd must be a file descriptor number/,
                 'eventfd_set(' . ($bad // 'undef') . ') croaks');
        }
        eval { $q->eventfd_set(-2) };
        like($@, qr/${re}fd -2 is not a valid file descriptor/, 'a negative fd other than -1 croaks');
        my $closed = do { my $t = $class->new(undef, 4); $t->eventfd };
        ok(!fd_open($closed), 'fixture: a closed fd');
        eval { $q->eventfd_set($closed) };
        like($@, qr/${re}fd \d+: Bad file descriptor/, 'a closed fd croaks');
        unlike($@, qr/\n./, 'one-line message');
        is($q->fileno, -1, 'nothing was set');
    };

    subtest "$class: an eventfd closed from Perl fails softly" => sub {
        my $q = $class->new(undef, 4);
        my $fd = $q->eventfd;
        POSIX::close($fd);
        $! = 0;
        ok(!$q->notify, 'notify returns false');
        ok($!{EBADF}, '... with $! set to EBADF') or diag("\$! = $!");
        $! = 0;
        is($q->eventfd_consume, undef, 'eventfd_consume returns undef');
        ok($!{EBADF}, '... with $! set to EBADF') or diag("\$! = $!");
        is($q->fileno, $fd, 'fileno still reports the number');
        ok(eval { undef $q; 1 }, 'DESTROY does not mind');
    };

    subtest "$class: DESTROY closes the eventfd; no fd leaks" => sub {
        my $q = $class->new(undef, 4);
        my $fd = $q->eventfd;
        $q->DESTROY;
        ok(!fd_open($fd), 'DESTROY closed the eventfd');
        for my $m (qw(eventfd fileno notify eventfd_consume)) {
            ok(!eval { $q->$m; 1 } && $@ =~ /has been destroyed/, "$m after DESTROY croaks");
        }
        ok(!eval { $q->eventfd_set(0); 1 } && $@ =~ /has been destroyed/,
           'eventfd_set after DESTROY croaks');

        my $before = open_fds();
        for (1 .. 50) {
            my $a = $class->new(undef, 4);
            my $b = $class->new(undef, 4);
            $b->eventfd_set($a->eventfd);
            $a->notify;
            $b->eventfd_consume;
            $b->eventfd;
        }
        is(open_fds(), $before, 'no eventfd leaked');
    };

    subtest "$class: methods croak on objects of the wrong type" => sub {
        no strict 'refs';
        for my $m (qw(eventfd fileno notify eventfd_consume)) {
            my $code = \&{"${class}::$m"};
            eval { $code->(bless {}, 'Foo') };
            like($@, qr/^\Q$class\E->$m: invocant is not of type \Q$class\E\b/, "$m on a foreign object");
        }
        my $other = $class =~ /Str$/ ? 'Data::Queue::Shared::Int' : 'Data::Queue::Shared::Str';
        my $o = $other->new(undef, 4);
        eval { &{"${class}::eventfd_set"}($o, 0) };
        like($@, qr/is not of type \Q$class\E\b/, "eventfd_set on a $other");
        is($o->fileno, -1, '... which is untouched');
    };

    subtest "$class: notification across fork" => sub {
        my $path = "$dir/x" . $seq++ . '.shm';
        my $q = $class->new($path, 16);
        my $fd = $q->eventfd;

        # A child using the handle it inherited: push, then notify.
        my $pid = spawn(sub {
            $q->push(item_for($class, 7)) or die "push failed\n";
            $q->notify or die "notify failed: $!\n";
        });
        ok(readable($fd, 20), 'the parent sees the fd readable (inherited handle)');
        reap_ok($pid, 'child with the inherited handle');
        is($q->eventfd_consume, 1, 'one notification');
        is($q->pop, item_for($class, 7), 'and the item it pushed');

        # A child opening its own handle and adopting the inherited fd.
        $pid = spawn(sub {
            my $c = $class->new($path, 16);
            $c->fileno == -1 or die "a new handle has an eventfd already\n";
            $c->eventfd_set($fd) == $fd or die "eventfd_set did not return the fd\n";
            for my $i (1 .. 3) {
                $c->push(item_for($class, $i)) or die "push failed\n";
            }
            $c->notify or die "notify failed: $!\n";
            $c->notify or die "notify failed: $!\n";
        });
        ok(readable($fd, 20), 'the parent sees the fd readable (eventfd_set in the child)');
        reap_ok($pid, 'child with its own handle');
        is($q->eventfd_consume, 2, 'both notifications counted');
        is_deeply([$q->drain], [map { item_for($class, $_) } 1 .. 3], 'the items arrived');
        ok(fd_open($fd), 'the parent\'s eventfd is still open');

        # The other way round: the parent notifies a child waiting in select.
        $pid = spawn(sub {
            readable($fd, 20) or die "not woken\n";
            my $n = $q->eventfd_consume;
            $n == 1 or die "consume returned $n\n";
            my $v = $q->pop;
            $v eq item_for($class, 42) or die "popped '$v'\n";
        });
        Time::HiRes::sleep(0.05);
        $q->push(item_for($class, 42));
        $q->notify;
        reap_ok($pid, 'a child woken by the parent\'s notify');
    };
}

done_testing;
