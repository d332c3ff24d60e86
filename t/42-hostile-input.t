# Hostile and broken input, the cheap cases: integer pushes of undef or a
# reference croak (as Str's do); 1000 create/destroy cycles of each backing
# leak no file descriptor and no mapping; a filesystem with no room gives a
# clear ENOSPC croak at create, never SIGBUS (only as root, where a small
# tmpfs can be mounted).
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
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

sub fd_count   { opendir my $d, '/proc/self/fd' or return -1; scalar grep { !/^\./ } readdir $d }
sub maps_count { open my $f, '<', '/proc/self/maps' or return -1; my @l = <$f>; scalar @l }

SKIP: {
    skip 'no /proc/self', 1 unless -d '/proc/self/fd';
    subtest '1000 create/destroy cycles of each backing leak nothing' => sub {
        my $n = 0;
        my %backing = (
            anonymous => sub { $_[0]->new(undef, 64) },
            file      => sub {
                my $p = "$dir/leak" . $n++ . '.shm';
                my $q = $_[0]->new($p, 64);
                $q->unlink;
                $q;
            },
            memfd     => sub { $_[0]->new_memfd('dqs-leak', 64) },
            from_fd   => sub {
                my $m = $_[0]->new_memfd('dqs-leak2', 64);
                my $q = $_[0]->new_from_fd($m->memfd);
                undef $m;
                $q;
            },
        );
        for my $class ('Data::Queue::Shared::Int', 'Data::Queue::Shared::Str') {
            for my $b (sort keys %backing) {
                # warm up (lazily loaded bits, caches), then measure
                for (1 .. 5) { my $q = $backing{$b}->($class); $q->push(1) }
                my ($fd0, $map0) = (fd_count(), maps_count());
                for (1 .. 1000) {
                    my $q = $backing{$b}->($class);
                    $q->push(1);
                    $q->eventfd if $_ % 10 == 0;
                }
                is(fd_count(), $fd0, "$class $b: no fd leaked");
                is(maps_count(), $map0, "$class $b: no mapping leaked");
            }
        }
    };
}

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
