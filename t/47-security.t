# Files at the path that we did not make: an existing empty (or all-zero,
# interrupted-create) file is initialised only when the effective uid owns
# it, and then gets the requested mode; one owned by anybody else is
# refused with a croak naming the path and the owner, and left exactly as
# it was. Checked for the four Perl classes, `dqs create` and the C API
# (examples/c/producer.c). Then what else may sit at a path: a directory,
# a FIFO, a symlink, a device.
#
# A foreign owner needs root (chown to uid 65534): those subtests skip
# when the test does not run as root.
use strict;
use warnings;

use Config;
use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSInterop qw(find_cargo build_cargo root_dir);
use POSIX ();
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(300);

my @CLASSES = (@INT_CLASSES, 'Data::Queue::Shared::Str');
my $FOREIGN = 65534;
my $ROOT    = $> == 0;
my $dir     = tmpdir();
my $seq     = 0;
sub fresh   { "$dir/q" . $seq++ . '.shm' }
sub mode_of { (stat $_[0])[2] & 07777 }
sub uid_of  { (stat $_[0])[4] }
sub size_of { -s $_[0] // 0 }

# A file at a fresh path: $len zero bytes, owned by $uid, mode $mode.
sub plant {
    my (%o) = @_;
    my $p = fresh();
    open my $fh, '>', $p or die "open $p: $!";
    truncate $fh, $o{len} // 0 or die "truncate $p: $!";
    close $fh;
    chown $o{uid}, $o{uid}, $p or die "chown $p: $!" if defined $o{uid};
    chmod $o{mode} // 0666, $p or die "chmod $p: $!";
    return $p;
}

# The size a new queue of $class with capacity 8 (default arena) has.
sub size_for {
    my ($class) = @_;
    my $q = $class->new(undef, 8);
    return $q->stats->{mmap_size};
}

my $refusal = qr/refusing to initialize file not owned by us \(owner uid $FOREIGN, we are uid \d+\)/;

SKIP: {
    skip 'a foreign owner needs root (chown)', 3 unless $ROOT;

    subtest 'an empty file owned by another uid is refused, untouched' => sub {
        for my $class (@CLASSES) {
            my $p = plant(uid => $FOREIGN, mode => 0666);
            my $q = eval { $class->new($p, 8) };
            ok(!$q, "$class->new refuses it");
            like($@, qr/^\Q$class\E->new: \Q$p\E: $refusal/, "$class: the croak names path and owner");
            is(size_of($p), 0, "$class: the file is still empty");
            is(mode_of($p), 0666, "$class: its mode is unchanged");
            is(uid_of($p), $FOREIGN, "$class: its owner is unchanged");
        }
    };

    subtest 'an all-zero file of the right size owned by another uid is refused' => sub {
        for my $class (@CLASSES) {
            my $len = size_for($class);
            my $p = plant(uid => $FOREIGN, mode => 0666, len => $len);
            ok(!eval { $class->new($p, 8) }, "$class->new refuses it");
            like($@, qr/^\Q$class\E->new: \Q$p\E: $refusal/, "$class: the croak names path and owner");
            is(size_of($p), $len, "$class: the size is unchanged");
            is(mode_of($p), 0666, "$class: the mode is unchanged");
            open my $fh, '<:raw', $p or die;
            local $/;
            my $bytes = <$fh>;
            ok($bytes !~ /[^\0]/, "$class: still all zero (no header written)");
        }
    };

    subtest 'a valid queue owned by another uid is attached (sharing between users)' => sub {
        for my $class (@CLASSES) {
            my $p = fresh();
            $class->new($p, 8, ($class =~ /Str/ ? (undef) : ()), 0660)->push(7);
            chown $FOREIGN, $FOREIGN, $p or die "chown: $!";
            my $q = $class->new($p, 8);
            ok($q, "$class attaches to a queue another uid owns");
            is($q->pop, 7, "$class: and reads its item");
            is(mode_of($p), 0660, "$class: its mode is the owner's");
        }
    };
}

subtest 'an empty file we own is initialised with the requested mode' => sub {
    for my $class (@CLASSES) {
        my @arena = $class =~ /Str/ ? (undef) : ();
        my $p = plant(mode => 0666);
        my $q = $class->new($p, 8);
        ok($q, "$class->new initialises it");
        is(mode_of($p), 0600, "$class: the default mode 0600 replaces 0666");
        ok($q->push(1) && $q->pop == 1, "$class: it works as a queue");
        undef $q;

        $p = plant(mode => 0644);
        $q = $class->new($p, 8, @arena, 0640);
        is(mode_of($p), 0640, "$class: a mode given is applied exactly");

        my $len = size_for($class);
        $p = plant(mode => 0666, len => $len);
        $q = $class->new($p, 8, @arena, 0660);
        ok($q, "$class: an all-zero file of the right size is taken over");
        is(mode_of($p), 0660, "$class: and given the mode asked for");
    }
};

subtest 'what else may sit at the path' => sub {
    for my $class (@CLASSES) {
        my $d = "$dir/adir" . $seq++;
        mkdir $d or die;
        ok(!eval { $class->new($d, 8) }, "$class: a directory is refused");
        like($@, qr/^\Q$class\E->new: \Q$d\E: invalid or incompatible queue file \(a directory, not a regular file\)/,
            "$class: the croak says so");

        my $fifo = fresh();
        POSIX::mkfifo($fifo, 0600) or die "mkfifo: $!";
        ok(!eval { $class->new($fifo, 8) }, "$class: a FIFO is refused (without hanging)");
        like($@, qr/^\Q$class\E->new: \Q$fifo\E: invalid or incompatible queue file \(not a regular file\)/,
            "$class: the croak says so");

        my $target = plant(mode => 0600);
        my $link = fresh();
        symlink $target, $link or die;
        ok(!eval { $class->new($link, 8) }, "$class: a symlink is refused");
        like($@, qr/refusing to follow a symlink/, "$class: the croak says so");
        is(size_of($target), 0, "$class: the symlink's target is untouched");

        ok(!eval { $class->new('/dev/null', 8) }, "$class: a device is refused");
        like($@, qr/^\Q$class\E->new: \/dev\/null: invalid or incompatible queue file \(not a regular file\)/,
            "$class: the croak says so");
    }
};

# ---- dqs create -------------------------------------------------------------

my $dqs = "$FindBin::Bin/../target/release/dqs";
SKIP: {
    skip "the dqs binary is not built ($dqs)", 1 unless -x $dqs;
    subtest 'dqs create' => sub {
        my $run = sub {
            my $out = qx{$dqs @_ 2>&1};
            return ($? >> 8, $out);
        };
        SKIP: {
            skip 'a foreign owner needs root (chown)', 3 unless $ROOT;
            my $p = plant(uid => $FOREIGN, mode => 0666);
            my ($code, $out) = $run->('create', $p, '--type', 'str', '--capacity', 8);
            is($code, 2, 'dqs create on an empty file of another uid exits 2 (an error)');
            like($out, qr/\Q$p\E: $refusal/, 'and says why');
            is(size_of($p) . ' ' . mode_of($p), '0 ' . 0666, 'the file is untouched');
        }
        my $p = plant(mode => 0666);
        my ($code) = $run->('create', $p, '--type', 'int', '--capacity', 8);
        is($code, 0, 'dqs create initialises an empty file we own');
        is(mode_of($p), 0600, 'with mode 0600');
    };
}

# ---- the C API ---------------------------------------------------------------

SKIP: {
    my $cargo = find_cargo();
    my @cc = split ' ', $Config{cc};
    skip 'cargo or the C compiler is not available', 1
        unless $cargo && @cc && `$Config{cc} --version 2>/dev/null`;
    skip 'a foreign owner needs root (chown)', 1 unless $ROOT;
    subtest 'the C API (examples/c/producer.c)' => sub {
        build_cargo($cargo, '--lib');
        my $root = root_dir();
        my @cmd = (@cc, '-std=c99', '-D_POSIX_C_SOURCE=200809L', "-I$root/include",
                   "$root/examples/c/producer.c", "$root/target/release/libdata_queue_shared.a",
                   qw(-lpthread -ldl -lm), '-o', "$dir/producer");
        is(system({ $cmd[0] } @cmd), 0, 'producer.c compiles') or return;
        for my $type (qw(int int32 int16 str)) {
            my $p = plant(uid => $FOREIGN, mode => 0666);
            my $out = qx{$dir/producer $p $type 1 2>&1};
            is($? >> 8, 1, "$type: dqs_open_path fails on an empty file of another uid");
            like($out, qr/\Q$p\E: $refusal/, "$type: the message names path and owner");
            is(size_of($p) . ' ' . mode_of($p), '0 ' . 0666, "$type: the file is untouched");
        }
        my $p = plant(mode => 0666);
        is(system("$dir/producer", $p, 'int', 1), 0, 'an empty file we own is initialised');
        is(mode_of($p), 0600, 'with mode 0600');
    };
}

done_testing;
