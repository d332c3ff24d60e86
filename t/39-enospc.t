# No room on the filesystem never means SIGBUS (root only: a small tmpfs is
# mounted; t/42 covers a create that does not fit):
#   * a queue created while there was room keeps working after the
#     filesystem is filled up, through every slot and arena byte (its
#     blocks were reserved at create);
#   * an all-zero file left by an interrupted create, but sparse (sized
#     with truncate), is re-initialised only if its blocks can be reserved:
#     on a full filesystem new() croaks with ENOSPC;
#   * a sparse copy of a Str queue file (its zero arena is holes) is
#     refused with ENOSPC at attach on a full filesystem, and works when
#     there is room again.
# Everything that touches the mapping runs in a child, where SIGBUS shows.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

plan skip_all => 'needs root to mount a small tmpfs' if $> != 0;
my $dir = tmpdir();
my $mnt = "$dir/small";
mkdir $mnt or die "mkdir $mnt: $!";
plan skip_all => 'mount -t tmpfs does not work here'
    if system("mount -t tmpfs -o size=256k dqs-enospc '$mnt' >/dev/null 2>&1") != 0;
END { system('umount', $mnt) if $mnt && -d $mnt }

watchdog(120);
my $STR = 'Data::Queue::Shared::Str';

# Fill the filesystem; returns the filler's path.
sub fill {
    my $f = "$mnt/filler";
    open(my $fh, '>', $f) or die "$f: $!";
    my $chunk = "\xAA" x 4096;
    while (1) {
        my $n = syswrite($fh, $chunk);
        last if !defined $n || $n < length $chunk;
    }
    close $fh;
    return $f;
}

sub make {
    my ($class, $path) = @_;
    return $class eq $STR ? $class->new($path, 64, 32768)
         : $class->new($path, $class eq 'Data::Queue::Shared::Int' ? 2048 : 4096);
}

# Push and pop through every slot (and, for Str, every arena byte), laps
# times.
sub churn {
    my ($q, $class, $laps) = @_;
    my $cap = $q->capacity;
    my $item = $class eq $STR ? ('z' x 500) : 12345;
    for (1 .. $laps) {
        my $n = 0;
        $n++ while $n <= $cap && $q->push($item);
        die "only $n pushes fit\n" if $n < ($class eq $STR ? 50 : $cap);
        my @got = $q->drain;
        die "drained " . scalar(@got) . " of $n\n" if @got != $n;
        die "bad item\n" if grep { $_ ne $item } @got;
        $q->push($item) && $q->pop for 1 .. 7;    # shift the cursors
    }
}

for my $class (@INT_CLASSES, $STR) {
    subtest "$class: a queue made while there was room survives a full filesystem" => sub {
        my $p = "$mnt/q.shm";
        my $q = make($class, $p);
        my $filler = fill();
        my $pid = spawn(sub { churn(make($class, $p), $class, 3) });
        reap_ok($pid, 'every slot and arena byte used on a full filesystem (in a child)');
        churn($q, $class, 1);
        pass('and in the creator');
        unlink $filler, $p;
    };
}

subtest 'a sparse all-zero file of the right size on a full filesystem' => sub {
    for my $class (@INT_CLASSES, $STR) {
        my $size = make($class, undef)->stats->{mmap_size};
        my $p = "$mnt/zero.shm";
        open(my $fh, '>', $p) or die;
        truncate($fh, $size) or die "truncate: $!";
        close $fh;
        my $filler = fill();
        my $pid = spawn(sub {
            my $ok = eval { make($class, $p); 1 };
            die "re-initialised a file whose blocks cannot be reserved\n" if $ok;
            die "wrong error: $@" unless $@ =~ /^\Q$class\E->new: \Q$p\E: reserve \d+ bytes: .*No space left/;
        });
        reap_ok($pid, "$class: croaks with ENOSPC (no SIGBUS)");
        unlink $filler;
        $pid = spawn(sub { churn(make($class, $p), $class, 1) });
        reap_ok($pid, "$class: with room again, it is re-initialised and works");
        unlink $p;
    }
};

subtest 'a sparse copy of a Str queue file on a full filesystem' => sub {
    my $src = "$dir/str-src.shm";
    my $q = make($STR, $src);
    $q->push('a');
    $q->pop;
    undef $q;
    my $p = "$mnt/copy.shm";
    system('cp', '--sparse=always', $src, $p) == 0 or die "cp failed";
    my $blocks = (stat $p)[12];
    plan skip_all => 'cp did not make a sparse copy' if $blocks * 512 >= -s $p;
    my $filler = fill();
    my $pid = spawn(sub {
        my $ok = eval { make($STR, $p); 1 };
        die "attached a file whose blocks cannot be reserved\n" if $ok;
        die "wrong error: $@" unless $@ =~ /^\Q$STR\E->new: \Q$p\E: reserve \d+ bytes: .*No space left/;
    });
    reap_ok($pid, 'attach croaks with ENOSPC (no SIGBUS)');
    unlink $filler;
    $pid = spawn(sub { churn(make($STR, $p), $STR, 2) });
    reap_ok($pid, 'with room again, it attaches and works');
    unlink $p;
};

done_testing;
