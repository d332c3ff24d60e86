# File-backed queues: permissions, symlink refusal, concurrent creation,
# existing and damaged files, crash safety of an interrupted create, and the
# messages users match on.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Files;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;

watchdog(90);

my $dir = scratch_dir();

sub works_ok {
    my ($q, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $ok = $q->push(-3) && $q->push(4);
    my @got = ($q->pop, $q->pop);
    ok($ok && $got[0] == -3 && $got[1] == 4 && !defined $q->pop, "$name: push and pop work");
}

for my $class (@INT_CLASSES) {
    # Runs first and in children with their own short alarm, so that a
    # creator that keeps the file locked fails here, by name, instead of
    # hanging everything after it.
    subtest "$class: opening a file that another live handle maps does not block" => sub {
        my $p = fresh_path();
        my $q = $class->new($p, 8);
        $q->push(3);
        my $pid = spawn(sub {
            my $q2 = $class->new($p, 8);
            $q2->pop == 3 or die "child did not see the item\n";
            $q2->push(4) or die "push\n";
        }, timeout => 10);
        my $status = reap($pid);
        is($status, 0, 'another process opens the existing queue file while the creator still has it mapped')
            or diag($status & 127 ? 'child killed by signal ' . ($status & 127) . ' (alarm: it blocked in new)'
                                  : 'child exit ' . ($status >> 8));
        if ($status == 0) {
            my $q3 = $class->new($p, 8);
            is($q3->pop, 4, 'a second handle in this process opens it too');
        }
        else {
            fail('skipping the same-process reopen: it would hang');
        }
    };

    my $incompat = qr/^\Q$class\E->new: .*invalid or incompatible queue file/;

    subtest "$class: file modes" => sub {
        my $old = umask;
        for my $mask (022, 077, 0) {
            umask $mask;
            my $p = fresh_path();
            $class->new($p, 4);
            is(sprintf('%04o', mode_of($p)), '0600',
               sprintf('default mode is 0600 under umask %03o', $mask));
        }
        umask 022;
        for my $mode (0640, 0660, 0600, 0666, 0604) {
            my $p = fresh_path();
            my $q = $class->new($p, 4, $mode);
            is(sprintf('%04o', mode_of($p)), sprintf('%04o', $mode),
               sprintf('mode %04o is applied exactly under umask 022', $mode));
            works_ok($q, sprintf 'mode %04o', $mode);
        }
        my $p = fresh_path();
        $class->new($p, 4, 0600);
        $class->new($p, 4, 0666);
        is(sprintf('%04o', mode_of($p)), '0600', 'reopening does not change the mode of a file in use');
        umask $old;
    };

    subtest "$class: a symlink at the path is refused" => sub {
        my $target = fresh_path('target');
        my $link   = fresh_path();
        symlink($target, $link) or die "symlink: $!";
        eval { $class->new($link, 4) };
        like($@, qr/^\Q$class\E->new: .*(?:symlink|symbolic link)/i, 'dangling symlink: croaks, mentioning the symlink');
        ok(!-e $target, 'nothing created through the symlink');

        my $real = fresh_path();
        my $q = $class->new($real, 4);
        $q->push(1);
        my $link2 = fresh_path();
        symlink($real, $link2) or die "symlink: $!";
        eval { $class->new($link2, 4) };
        like($@, qr/^\Q$class\E->new: .*(?:symlink|symbolic link)/i, 'symlink to a valid queue: croaks too');
        is($q->size, 1, 'the real queue is untouched');
    };

    subtest "$class: eight processes create the same new path at once" => sub {
        for my $round (1 .. 4) {
            my $p = fresh_path();
            my $clean = race_creators(8, sub {
                my ($i) = @_;
                my $q = $class->new($p, 64);
                $q->capacity == 64 or die "capacity ", $q->capacity, "\n";
                $q->push(100 + $i) or die "push failed\n";
            });
            is($clean, 8, "round $round: all eight creators succeeded");
            my $q = $class->new($p, 64);
            is($q->capacity, 64, "round $round: capacity");
            is_deeply([sort { $a <=> $b } $q->drain], [100 .. 107],
                      "round $round: one queue holds every push");
            is(-s $p, mmap_size_for($class, 64), "round $round: file size");
        }
    };

    subtest "$class: an existing empty file is initialised" => sub {
        my $p = fresh_path();
        spew($p, '');
        chmod 0644, $p;
        my $q = $class->new($p, 8);
        is($q->capacity, 8, 'capacity');
        is(-s $p, mmap_size_for($class, 8), 'file sized to header + slots');
        works_ok($q, 'empty file');
        my $q2 = $class->new($p, 8);
        $q->push(9);
        is($q2->pop, 9, 'a second open attaches to it');
    };

    subtest "$class: another variant's file is refused" => sub {
        for my $other (grep { $_ ne $class } @INT_CLASSES) {
            my $p = fresh_path();
            my $q = $other->new($p, 16);
            $q->push(5);
            my $before = slurp($p);
            eval { $class->new($p, 16) };
            like($@, $incompat, "$other file opened as $class croaks");
            unlike($@, qr/\n./, 'one-line message');
            like($@, qr/\Q$p\E/, 'message names the path');
            is(slurp($p), $before, 'file untouched');
            is($q->pop, 5, 'the original queue still works');
        }
    };

    subtest "$class: garbage, tiny and truncated files are refused" => sub {
        my $p = fresh_path();
        spew($p, join '', map { chr(1 + int rand 255) } 1 .. 4096);
        my $before = slurp($p);
        eval { $class->new($p, 16) };
        like($@, $incompat, '4096 bytes of garbage');
        is(slurp($p), $before, 'garbage file untouched');

        $p = fresh_path();
        spew($p, "0123456789");
        eval { $class->new($p, 16) };
        like($@, $incompat, 'a 10-byte file');
        is(-s $p, 10, 'tiny file untouched');

        for my $len (HEADER_SIZE + 8 * slot_size($class), HEADER_SIZE, 200, 17) {
            $p = fresh_path();
            my $q = $class->new($p, 16);
            $q->push(1);
            undef $q;
            truncate($p, $len) or die "truncate: $!";
            eval { $class->new($p, 16) };
            like($@, $incompat, "a queue file truncated to $len bytes");
        }

        $p = fresh_path();
        my $q = $class->new($p, 16);
        undef $q;
        open my $fh, '+<:raw', $p or die;
        print {$fh} "XXXXXXXX";    # clobber the magic
        close $fh;
        eval { $class->new($p, 16) };
        like($@, $incompat, 'a queue file with a damaged magic');

    };

    subtest "$class: crash safety of an interrupted create" => sub {
        my $size = mmap_size_for($class, 16);

        my $p = fresh_path();
        spew($p, "\0" x $size);
        chmod 0600, $p;
        my $q = eval { $class->new($p, 16) };
        is($@, '', 'a full-size all-zero file is re-initialised');
        if ($q) {
            is($q->capacity, 16, 'capacity');
            works_ok($q, 're-initialised file');
        }

        $p = fresh_path();
        spew($p, "\0" x $size);
        chmod 0644, $p;
        my $old = umask 022;
        $q = eval { $class->new($p, 16, 0660) };
        umask $old;
        is($@, '', 'an all-zero file is re-initialised with an explicit mode');
        is(sprintf('%04o', mode_of($p)), '0660', 'and the mode is applied');

        $p = fresh_path();
        my $bytes = "\0" x $size;
        substr($bytes, 8, 8) = "\x01\x00\x00\x00\x10\x00\x00\x00";
        spew($p, $bytes);
        eval { $class->new($p, 16) };
        like($@, qr/^\Q$class\E->new: .*incomplete queue file left by an interrupted create; remove it and retry/,
             'a partial header (magic still zero) croaks with the documented message');
        is(slurp($p), $bytes, 'the file is not modified');
        unlink $p;
        $q = $class->new($p, 16);
        works_ok($q, 'after removing it, a retry works');

        $p = fresh_path();
        $bytes = "\0" x $size;
        substr($bytes, HEADER_SIZE + 3, 1) = "\x07";
        spew($p, $bytes);
        eval { $class->new($p, 16) };
        like($@, qr/^\Q$class\E->new: .*(?:incomplete queue file|invalid or incompatible)/,
             'a zero header with data after it is never re-initialised');
        is(slurp($p), $bytes, 'the file is not modified');

        $p = fresh_path();
        $bytes = "\0" x mmap_size_for($class, 32);
        spew($p, $bytes);
        eval { $class->new($p, 16) };
        like($@, qr/^\Q$class\E->new: .*(?:incomplete queue file|invalid or incompatible)/,
             'an all-zero file of another size is not re-initialised');
        is(slurp($p), $bytes, 'the file is not modified');

        SKIP: {
            skip 'needs root to give a file to another uid', 4 if $> != 0;
            $p = fresh_path();
            $bytes = "\0" x $size;
            spew($p, $bytes);
            chmod 0666, $p;
            chown(65534, 65534, $p) or skip "chown to 65534: $!", 4;
            eval { $class->new($p, 16) };
            like($@, qr/^\Q$class\E->new: \Q$p\E: refusing to initialize file not owned by us \(owner uid 65534, we are uid 0\)/,
                 "a full-size all-zero file owned by another uid is not re-initialised (the croak names the owner)");
            is(slurp($p), $bytes, 'the file is not modified');
            is((stat $p)[4], 65534, 'and still belongs to that uid');
            is(sprintf('%04o', mode_of($p)), '0666', 'with its mode');
        }
    };

    subtest "$class: bad paths" => sub {
        my $p = fresh_path('nul');
        eval { $class->new("$p\0tail", 4) };
        like($@, qr/^\Q$class\E->new: /, 'a path with an embedded NUL croaks');
        ok(!-e $p, 'nothing created at the truncated path');

        eval { $class->new($dir, 4) };
        like($@, qr/^\Q$class\E->new: /, 'a directory croaks');

        eval { $class->new("$dir/no/such/dir/q.shm", 4) };
        like($@, qr/^\Q$class\E->new: .*\Q$dir\E\/no\/such/, 'a missing directory croaks, naming the path');

        eval { $class->new('/dev/null', 4) };
        like($@, qr/^\Q$class\E->new: /, 'a character device croaks');
    };
}

done_testing;
