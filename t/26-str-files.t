# Str queue files and fds: permissions, symlink refusal, Str and Int files
# told apart (both ways, by path and by fd), truncated and damaged files
# refused, stored geometry winning on reopen, concurrent creation, memfd
# seals and close-on-exec, new_from_fd.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Files;
use Test::More;

use Data::Queue::Shared::Str;
use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(90);

my $CLASS = 'Data::Queue::Shared::Str';

sub works_ok {
    my ($q, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $ok = $q->push("one\0") && $q->push_front('zero');
    my @got = ($q->pop, $q->pop_back);
    ok($ok && $got[0] eq 'zero' && $got[1] eq "one\0" && !defined $q->pop, "$name: push and pop work");
}

my $incompat = qr/^\Q$CLASS\E->new: .*invalid or incompatible queue file/;

subtest 'file modes' => sub {
    my $old = umask;
    for my $mask (022, 077, 0) {
        umask $mask;
        my $p = fresh_path();
        $CLASS->new($p, 4);
        is(sprintf('%04o', mode_of($p)), '0600', sprintf('default mode is 0600 under umask %03o', $mask));
        $p = fresh_path();
        $CLASS->new($p, 4, 8192);
        is(sprintf('%04o', mode_of($p)), '0600', sprintf('also with an arena size, umask %03o', $mask));
    }
    umask 022;
    for my $mode (0640, 0660, 0600, 0666) {
        my $p = fresh_path();
        my $q = $CLASS->new($p, 4, 4096, $mode);
        is(sprintf('%04o', mode_of($p)), sprintf('%04o', $mode), sprintf('mode %04o is applied exactly', $mode));
        works_ok($q, sprintf 'mode %04o', $mode);
    }
    my $p = fresh_path();
    $CLASS->new($p, 4, 4096, 0600);
    $CLASS->new($p, 4, 4096, 0666);
    is(sprintf('%04o', mode_of($p)), '0600', 'reopening does not change the mode of a file in use');
    umask $old;
};

subtest 'a symlink at the path is refused' => sub {
    my $target = fresh_path('target');
    my $link   = fresh_path();
    symlink($target, $link) or die "symlink: $!";
    eval { $CLASS->new($link, 4) };
    like($@, qr/^\Q$CLASS\E->new: .*(?:symlink|symbolic link)/i, 'dangling symlink: croaks, mentioning the symlink');
    ok(!-e $target, 'nothing created through the symlink');

    my $real = fresh_path();
    my $q = $CLASS->new($real, 4);
    $q->push('kept');
    my $link2 = fresh_path();
    symlink($real, $link2) or die "symlink: $!";
    eval { $CLASS->new($link2, 4) };
    like($@, qr/^\Q$CLASS\E->new: .*(?:symlink|symbolic link)/i, 'symlink to a valid Str queue: croaks too');
    is($q->peek, 'kept', 'the real queue is untouched');
};

subtest 'Str and Int files are told apart' => sub {
    for my $int (@INT_CLASSES) {
        my $p = fresh_path();
        my $iq = $int->new($p, 16);
        $iq->push(5);
        my $before = slurp($p);
        eval { $CLASS->new($p, 16) };
        like($@, $incompat, "a $int file opened as Str croaks");
        like($@, qr/\Q$p\E/, 'the message names the path');
        unlike($@, qr/\n./, 'one-line message');
        is(slurp($p), $before, 'file untouched');
        is($iq->pop, 5, 'the Int queue still works');

        $p = fresh_path();
        my $sq = $CLASS->new($p, 16);
        $sq->push('str');
        $before = slurp($p);
        eval { $int->new($p, 16) };
        like($@, qr/^\Q$int\E->new: .*invalid or incompatible queue file/, "a Str file opened as $int croaks");
        is(slurp($p), $before, 'file untouched');
        is($sq->pop, 'str', 'the Str queue still works');
    }
};

subtest 'truncated, garbage and damaged Str files are refused' => sub {
    my $p = fresh_path();
    my $q = $CLASS->new($p, 16, 8192);
    my $full = -s $p;
    undef $q;
    ok($full >= HEADER_SIZE + 16 * 16 + 8192, "a Str file holds header, slots and arena ($full bytes)");
    for my $len ($full - 8, $full - 4096, HEADER_SIZE + 16 * 16, HEADER_SIZE, 200, 17) {
        my $t = fresh_path();
        my $tq = $CLASS->new($t, 16, 8192);
        $tq->push('x' x 100);
        undef $tq;
        truncate($t, $len) or die "truncate: $!";
        my $before = slurp($t);
        eval { $CLASS->new($t, 16, 8192) };
        like($@, qr/^\Q$CLASS\E->new: .*invalid or incompatible/, "a Str file truncated to $len bytes is refused");
        is(slurp($t), $before, 'and left as it was');
    }

    $p = fresh_path();
    spew($p, join '', map { chr(1 + int rand 255) } 1 .. 8192);
    eval { $CLASS->new($p, 16) };
    like($@, $incompat, '8192 bytes of garbage');

    $p = fresh_path();
    $q = $CLASS->new($p, 16);
    undef $q;
    open my $fh, '+<:raw', $p or die;
    print {$fh} 'XXXXXXXX';
    close $fh;
    eval { $CLASS->new($p, 16) };
    like($@, $incompat, 'a Str file with a damaged magic');
};

subtest 'an existing empty file and an all-zero file of the right size are initialised' => sub {
    my $p = fresh_path();
    spew($p, '');
    my $q = $CLASS->new($p, 8, 4096);
    is($q->capacity, 8, 'empty file: capacity');
    is($q->stats->{arena_cap}, 4096, 'empty file: arena');
    works_ok($q, 'empty file');
    my $size = -s $p;
    is($q->stats->{mmap_size}, $size, 'mmap_size is the file size');

    my $z = fresh_path();
    spew($z, "\0" x $size);
    chmod 0600, $z;
    my $zq = eval { $CLASS->new($z, 8, 4096) };
    is($@, '', 'a full-size all-zero file is re-initialised');
    works_ok($zq, 'all-zero file') if $zq;

    SKIP: {
        skip 'needs root to give a file to another uid', 3 if $> != 0;
        my $o = fresh_path();
        spew($o, "\0" x $size);
        chmod 0666, $o;
        chown(65534, 65534, $o) or skip "chown to 65534: $!", 3;
        eval { $CLASS->new($o, 8, 4096) };
        like($@, qr/^\Q$CLASS\E->new: \Q$o\E: refusing to initialize file not owned by us \(owner uid 65534, we are uid 0\)/,
             "a full-size all-zero file owned by another uid is not re-initialised (the croak names the owner)");
        is(slurp($o), "\0" x $size, 'the file is not modified');
        is((stat $o)[4], 65534, 'and still belongs to that uid');
    }
};

subtest 'stored geometry wins on reopen' => sub {
    my $p = fresh_path();
    my $q = $CLASS->new($p, 8, 10_000);
    $q->push('y' x 9000);
    for my $req ([2], [64], [8, 4096], [1024, 1 << 20], [8, 10_000]) {
        my $r = $CLASS->new($p, @$req);
        is($r->capacity, 8, "reopen with (@$req): capacity 8");
        is($r->stats->{arena_cap}, 10_000, "reopen with (@$req): arena 10000");
        is(length $r->peek, 9000, "reopen with (@$req): sees the 9000-byte item");
    }
    is(-s $p, $q->stats->{mmap_size}, 'the file was not resized');
};

subtest 'eight processes create the same new path at once' => sub {
    for my $round (1 .. 3) {
        my $p = fresh_path();
        my $clean = race_creators(8, sub {
            my ($i) = @_;
            my $q = $CLASS->new($p, 64, 16384);
            $q->capacity == 64 or die "capacity ", $q->capacity, "\n";
            $q->stats->{arena_cap} == 16384 or die "arena\n";
            $q->push("creator $i") or die "push failed\n";
        });
        is($clean, 8, "round $round: all eight creators succeeded");
        my $q = $CLASS->new($p, 64);
        is_deeply([sort $q->drain], [map { "creator $_" } 0 .. 7], "round $round: one queue holds every push");
    }
};

subtest 'new_memfd: close-on-exec and sealed' => sub {
    my $q = $CLASS->new_memfd('dqs-str-sealed', 16, 8192);
    my $fd = $q->memfd;
    ok($fd >= 0, "memfd returns an fd ($fd)");
    ok(-l "/proc/self/fd/$fd" && readlink("/proc/self/fd/$fd") =~ /memfd:/, 'the fd is a memfd');
    my @st = stat("/proc/self/fd/$fd");
    is($st[7], $q->stats->{mmap_size}, 'memfd size is the mapping size');
    memfd_sealed_ok($q);
    works_ok($q, 'sealed memfd');
};

subtest 'new_from_fd on a Str memfd' => sub {
    my $q = $CLASS->new_memfd('dqs-str-from-fd', 8, 6000);
    my $fd = $q->memfd;
    my $q2 = $CLASS->new_from_fd($fd);
    isa_ok($q2, $CLASS);
    is($q2->capacity, 8, 'capacity from the header');
    is($q2->stats->{arena_cap}, 6000, 'arena from the header');
    ok(fd_open($fd), 'the original fd stays open');
    $q->push("\x{263a} from q");
    my $v = $q2->pop;
    ok($v eq "\x{263a} from q" && utf8::is_utf8($v), 'push on one handle, pop on the other');
    $q2->push_front('front');
    is($q->pop, 'front', 'and the other way round');
    is($q2->memfd >= 0 ? 1 : 0, 1, 'memfd of a handle from new_from_fd is an fd');
    is($q2->path, undef, 'no path');

    my $pid = spawn(sub {
        my $c = $CLASS->new_from_fd($fd);
        my $x = $c->pop_wait(10);
        defined $x && $x eq 'to child' or die "child got ", $x // 'undef', "\n";
        $c->push('from child') or die "push\n";
    });
    $q->push('to child');
    reap_ok($pid, 'a forked child attaches with new_from_fd');
    is($q->pop, 'from child', 'parent pops what the child pushed');
    undef $q;
    $q2->push('still');
    is($q2->pop, 'still', 'the handle from new_from_fd outlives the original');
};

subtest 'new_from_fd refuses Int fds, and Int refuses Str fds' => sub {
    for my $int (@INT_CLASSES) {
        my $iq = $int->new_memfd('dqs-int', 16);
        eval { $CLASS->new_from_fd($iq->memfd) };
        like($@, qr/^\Q$CLASS\E->new_from_fd: .*invalid or incompatible/, "a memfd of $int");
        my $sq = $CLASS->new_memfd('dqs-str', 16);
        eval { $int->new_from_fd($sq->memfd) };
        like($@, qr/^\Q$int\E->new_from_fd: .*invalid or incompatible/, "$int->new_from_fd on a Str memfd");
    }
    eval { $CLASS->new_from_fd(-1) };
    like($@, qr/^\Q$CLASS\E->new_from_fd: /, 'fd -1 croaks');
    open(my $null, '+<', '/dev/null') or die;
    eval { $CLASS->new_from_fd(fileno $null) };
    like($@, qr/^\Q$CLASS\E->new_from_fd: /, '/dev/null croaks');
    close $null;
};

subtest 'no fd leaks from Str memfd queues and new_from_fd' => sub {
    my $before = fd_count();
    for (1 .. 50) {
        my $q = $CLASS->new_memfd('leak', 4);
        my $q2 = $CLASS->new_from_fd($q->memfd);
        eval { $CLASS->new_from_fd(-1) };
        my $iq = Data::Queue::Shared::Int->new_memfd('leak', 4);
        eval { $CLASS->new_from_fd($iq->memfd) };
    }
    is(fd_count(), $before, 'every fd is closed when the handles go away');
};

done_testing;
