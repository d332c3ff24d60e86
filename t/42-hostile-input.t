# Hostile and broken input, the cheap cases: integer pushes of undef or a
# reference croak (as Str's do); headers with wrong geometry (capacity not a
# power of two, offsets past the end of the file, absurd sizes) croak on
# attach, naming what is wrong; 1000 create/destroy cycles of each backing
# leak no file descriptor and no mapping; a filesystem with no room gives a
# clear ENOSPC croak at create, never SIGBUS (only as root, where a small
# tmpfs can be mounted); scribbled compressed items croak or come back
# exact, never crash.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSTest::Backing;
use DQSTest::Files;
use Test::More;
use POSIX ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(120);
my $dir = tmpdir();

subtest 'integer pushes refuse undef and references' => sub {
    for my $class (@INT_CLASSES) {
        my $q = $class->new(undef, 8);
        my $re = qr/^\Q$class\E->/;
        for my $m (qw(push push_wait)) {
            eval { $q->$m(undef) };
            like($@, qr/${re}$m: cannot push undef at /, "$class->$m(undef) croaks");
            for my $ref ([], {}, \1, sub { 1 }) {
                eval { $q->$m($ref) };
                like($@, qr/${re}$m: cannot push a reference/, "$class->$m(" . ref($ref) . ') croaks');
            }
        }
        eval { $q->push_multi(1, undef, 3) };
        like($@, qr/${re}push_multi: cannot push undef/, 'push_multi with an undef croaks');
        eval { $q->push_wait_multi(0, 1, [2]) };
        like($@, qr/${re}push_wait_multi: cannot push a reference/, 'push_wait_multi with a ref croaks');
        is($q->size, 0, 'nothing was pushed');
        {
            package Num;
            use overload '0+' => sub { 42 }, fallback => 1;
        }
        ok($q->push(bless {}, 'Num'), 'an object with numeric overloading is fine');
        is($q->pop, 42, 'and pushes its number');
        ok($q->push('12'), 'a numeric string is fine');
        is($q->pop, 12, 'and pushes its number');
    }
};

# Geometry fields of the header: offset and pack format (HEADER in
# Data::Queue::Shared::Format: all little-endian).
my %FIELD = (
    version     => [8,  'V'],
    variant     => [12, 'V'],
    capacity    => [16, 'Q<'],
    slot_size   => [24, 'V'],
    header_size => [28, 'V'],
    slots_off   => [32, 'Q<'],
    arena_off   => [40, 'Q<'],
    arena_cap   => [48, 'Q<'],
    total_size  => [56, 'Q<'],
    max_leases  => [280, 'Q<'],
    lease_off   => [288, 'Q<'],
    lease_bytes => [296, 'Q<'],
);

sub read_file  { open my $fh, '<:raw', $_[0] or die "$_[0]: $!"; local $/; scalar <$fh> }
sub write_file { open my $fh, '>:raw', $_[0] or die "$_[0]: $!"; print {$fh} $_[1]; close $fh or die }

# A header whose geometry is wrong in exactly one way (or consistently
# wrong, where noted) must give a clean croak naming what is wrong, through
# new and through new_from_fd, and leave the file as it was.
subtest 'attach refuses wrong geometry in the header' => sub {
    my $seq = 0;
    for my $class (@INT_CLASSES, 'Data::Queue::Shared::Str') {
        my $str  = $class =~ /Str$/;
        my $slot = $str ? 16 : slot_size($class);
        my $base = "$dir/geo-base.shm";
        unlink $base;
        my $q = $str ? $class->new($base, 16, 4096) : $class->new($base, 16);
        $q->push($str ? 'abc' : 7);
        my $size = $q->stats->{mmap_size};
        undef $q;
        my $good  = read_file($base);
        my $arena = $str ? 4096 : 0;
        my $lease_bytes = unpack 'Q<', substr($good, 296, 8);
        # A geometry consistent in itself for $cap slots and $arena_cap bytes
        # (and the default lease table after them: format 8, a 192-byte
        # head, 64 lease records of 128 bytes, 64 dead-letter records of 64).
        my $consistent = sub {
            my ($cap, $acap) = @_;
            $acap //= $arena;
            my $end = HEADER_SIZE + $cap * $slot;
            # Int (format 7): the ring's 32 intent records come first.
            my $lease_off = (($end + ($str ? $acap : 0) + 63) & ~63) + ($str ? 0 : 32 * 64);
            return (capacity => $cap, arena_cap => $acap, arena_off => $str ? $end : 0,
                    lease_off => $lease_off,
                    total_size => $lease_off + 192 + 64 * 128 + 64 * 64 + $lease_bytes);
        };
        my @cases = (
            ['capacity 24 (not a power of two), file sized to match',
             { $consistent->(24) }, 'bad capacity', 1],
            ['capacity 0',                    { capacity => 0 },        'bad capacity'],
            ['capacity 1 (below the minimum)', { capacity => 1 },       'bad capacity'],
            ['capacity 2**31 (above the maximum)', { $consistent->(1 << 31) }, 'bad capacity'],
            ['capacity 2**63',                { capacity => 1 << 63 },  'bad capacity'],
            ['capacity 2**64 - 1',            { capacity => ~0 },       'bad capacity'],
            ['slot_size doubled',             { slot_size => 2 * $slot }, 'bad slot geometry'],
            ['header_size 512',               { header_size => 512 },   'bad slot geometry'],
            ['slots_off past the end of the file', { slots_off => $size + 4096 }, 'bad slot geometry'],
            ['slots_off 2**63',               { slots_off => 1 << 63 }, 'bad slot geometry'],
            ['total_size past the end of the file', { total_size => $size + 4096 }, 'bad offsets'],
            ['total_size 2**64 - 1',          { total_size => ~0 },     'bad offsets'],
            ['capacity 2**20, consistent, past the end of the file',
             { $consistent->(1 << 20) }, 'truncated'],
            ['capacity 2**30 (the maximum), consistent, past the end of the file',
             { $consistent->(1 << 30) }, 'truncated'],
            ['max_leases 2**16 + 1',          { max_leases => 65537 },  'size overflow or bad lease table size'],
            ['max_leases 2**64 - 1',          { max_leases => ~0 },     'size overflow or bad lease table size'],
            ['max_leases 65, table size unchanged', { max_leases => 65 }, 'bad offsets'],
            ['lease_off inside the slots',    { lease_off => HEADER_SIZE }, 'bad offsets'],
            ['lease_off 2**63',               { lease_off => 1 << 63 }, 'bad offsets'],
            ['version 1',                     { version => 1 },         'unknown format version'],
            ['variant 99',                    { variant => 99 },        'unknown variant'],
        );
        if ($str) {
            push @cases,
                ['arena_off past the end of the file', { arena_off => $size + 4096 }, 'bad offsets'],
                ['arena_off inside the slots',   { arena_off => HEADER_SIZE }, 'bad offsets'],
                ['arena_off 2**63',              { arena_off => 1 << 63 }, 'bad offsets'],
                ['lease_bytes 2**33',            { lease_bytes => 2**33 }, 'size overflow or bad lease table size'],
                ['lease_bytes 8 more',           { lease_bytes => $lease_bytes + 8 }, 'bad offsets'],
                ['arena_cap 100 (below the minimum)', { $consistent->(16, 100) }, 'bad arena size'],
                ['arena_cap 2**32 + 8 (above the maximum)', { $consistent->(16, 2**32 + 8) }, 'bad arena size'],
                ['arena_cap 2**64 - 1',          { arena_cap => ~0 },      'bad arena size'],
                ['arena_cap 2**32, consistent, past the end of the file',
                 { $consistent->(16, 2**32) }, 'truncated'];
        }
        else {
            push @cases,
                ['arena_off set on an integer queue', { arena_off => $size }, 'bad offsets'],
                ['arena_cap set on an integer queue', { arena_cap => 4096 }, 'bad arena size'],
                ['lease_bytes set on an integer queue', { lease_bytes => 4096 },
                 'size overflow or bad lease table size'];
        }
        for my $c (@cases) {
            my ($name, $set, $why, $resize) = @$c;
            my $bytes = $good;
            for my $f (sort keys %$set) {
                my ($off, $fmt) = @{ $FIELD{$f} };
                substr($bytes, $off, length pack($fmt, 0)) = pack($fmt, $set->{$f});
            }
            $bytes .= "\0" x ($set->{total_size} - $size) if $resize;
            my $p = "$dir/geo" . $seq++ . '.shm';
            write_file($p, $bytes);
            my $r = eval { $class->new($p, 16) };
            like($@, qr/^\Q$class\E->new: \Q$p\E: invalid or incompatible queue file \(\Q$why\E\) at /,
                 "$class, $name: new croaks ($why)");
            open my $fh, '+<:raw', $p or die "$p: $!";
            my $fd = fileno $fh;
            $r = eval { $class->new_from_fd($fd) };
            like($@, qr/^\Q$class\E->new_from_fd: fd $fd: invalid or incompatible queue file \(\Q$why\E\) at /,
                 "$class, $name: new_from_fd croaks ($why)");
            close $fh;
            ok(read_file($p) eq $bytes, "$class, $name: the file is unchanged");
            unlink $p;
        }
        ok($class->new($base, 16)->pop, "$class: the unpatched file attaches");
        unlink $base;
    }
};

SKIP: {
    skip 'no /proc/self', 1 unless -d '/proc/self/fd';
    subtest '1000 create/destroy cycles of each backing leak nothing' => sub {
        leak_cycles_ok(['Data::Queue::Shared::Int', 'Data::Queue::Shared::Str']);
    };
}

subtest 'scribbled compressed items: a croak or the exact bytes, never a crash' => sub {
    # Compressed items whose arena bytes are overwritten at random: every
    # pop gives back a document exactly as pushed or croaks naming a corrupt
    # item, and the queue is empty at the end. In a child, so a crash shows.
    my $path = "$dir/scribbled-compressed.shm";
    my $pid = spawn(sub {
        srand 42;
        my $hdr = HEADER_SIZE;
        my @docs = map {
            my $i = $_;
            '{"items":[' . join(',', map { qq({"id":$_,"name":"item $i.$_","ok":true}) } 1 .. 60 + $i) . ']}'
        } 1 .. 8;
        my ($croaked, $exact) = (0, 0);
        for my $round (1 .. 40) {
            my $q = Data::Queue::Shared::Str->new($path, 8, 1 << 15);
            $q->compress(64);
            $q->push($_) or die "push failed\n" for @docs;
            die "nothing compressed\n" unless $q->stats->{compressed} == @docs;
            my $cap = 8;
            open my $fh, '+<:raw', $path or die "$path: $!";
            for (1 .. 1 + int rand 4) {    # scribble inside the arena's used bytes
                my $used = $q->stats->{arena_used};
                sysseek($fh, $hdr + 16 * $cap + int rand $used, 0) or die "seek: $!";
                syswrite($fh, join '', map { chr int rand 256 } 1 .. 1 + int rand 8);
            }
            close $fh;
            my %want = map { $_ => 1 } @docs;
            while ($q->size) {
                my $got = eval { $round % 2 ? $q->pop : ($q->pop_multi(1))[0] };
                if (!defined $got) {
                    die "unexpected error: $@" unless $@ =~ /compressed item of \d+ bytes is corrupt/;
                    $croaked++;
                    next;
                }
                die "a document came back changed\n" unless $want{$got};
                $exact++;
            }
            die "arena not empty\n" if $q->stats->{arena_used};
            $q->unlink;
        }
        die "no scribble hit a document ($exact exact)\n" unless $croaked;
        die "every document croaked\n" unless $exact;
    });
    reap_ok($pid, 'every pop of 320 scribbled-on documents gave the exact bytes or a clear croak');
};

SKIP: {
    skip 'needs root to mount a small tmpfs', 1 if $> != 0;
    my $mnt = "$dir/small";
    mkdir $mnt or die "mkdir $mnt: $!";
    my $rc = system("mount -t tmpfs -o size=64k dqs-test-tmpfs '$mnt' >/dev/null 2>&1");
    skip 'mount -t tmpfs does not work here', 1 if $rc != 0;
    subtest 'no room on the filesystem: ENOSPC at create, never SIGBUS' => sub {
        for my $class ('Data::Queue::Shared::Int', 'Data::Queue::Shared::Str') {
            my $path = "$mnt/q-" . ($class =~ /(\w+)$/)[0] . '.shm';
            my $pid = spawn(sub {
                my $ok = eval { $class->new($path, 1 << 16); 1 };
                die "created a queue bigger than the filesystem\n" if $ok;
                die "wrong error: $@" unless $@ =~ /^\Q$class\E->new: \Q$path\E: .*(No space left|ENOSPC)/;
                die "\$! is not ENOSPC: $!\n" unless $!{ENOSPC};
            });
            reap_ok($pid, "$class: a clear ENOSPC croak (in a child, so SIGBUS would show)");
            ok(!-e $path || -s $path == 0, 'no half-made queue left behind');
            unlink $path;
            my $q = $class->new("$mnt/small.shm", 16);
            ok($q->push(1), 'a queue that fits works');
            $q->unlink;
        }
    };
    system('umount', $mnt);
}

done_testing;
