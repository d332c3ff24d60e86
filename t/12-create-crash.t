# A creator really killed in the middle of a create (DQS_TEST_KILL_POINT,
# in src/region/) leaves what the CRASH SAFETY rules expect:
#   create_after_reserve  the file is sized and reserved, nothing written:
#                         an all-zero file of the exact size, which the next
#                         new() of that geometry re-initialises (and one of
#                         another geometry refuses, leaving it alone);
#   create_before_magic   header written, magic not yet: the next
#                         new() croaks "incomplete queue file left by an
#                         interrupted create; remove it and retry" and leaves
#                         the file unmodified; after removing it, a retry works.
# A re-initialisation killed the same way is handled the same way, and the
# hooks never fire for anonymous or memfd queues (nothing is left behind).
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

watchdog(120);
my $dir = tmpdir();
my $seq = 0;
my $STR = 'Data::Queue::Shared::Str';
my $INCOMPLETE = 'incomplete queue file left by an interrupted create; remove it and retry';

sub slurp { open my $f, '<:raw', $_[0] or die "$_[0]: $!"; local $/; <$f> }

# A child that calls $class->new($path, @args) with the kill point set.
# Returns its wait status.
sub killed_create {
    my ($point, $class, @args) = @_;
    my $pid = spawn(sub {
        $ENV{DQS_TEST_KILL_POINT} = $point;
        my $q = $class->new(@args);
        die "the kill point $point did not fire\n";
    });
    return reap($pid);
}

sub died_by_kill_ok {
    my ($status, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    ok(($status & 127) == 9, $name)
        or diag(sprintf 'exit %d, signal %d', $status >> 8, $status & 127);
}

sub value { $_[0] eq $STR ? "v$_[1]" : $_[1] }

sub works_ok {
    my ($q, $class, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my @v = map { value($class, $_) } 1 .. 5;
    is($q->push_multi(@v), 5, "$name: push_multi");
    is_deeply([$q->drain], \@v, "$name: drain gives them back in order");
}

for my $class (@INT_CLASSES, $STR) {
    my $size = $class->new(undef, 16)->stats->{mmap_size};

    subtest "$class: killed after sizing the file" => sub {
        my $p = "$dir/q" . $seq++;
        died_by_kill_ok(killed_create('create_after_reserve', $class, $p, 16), 'the creator was killed');
        ok(-e $p, 'it left a file');
        is(-s $p, $size, 'of the exact size');
        is(slurp($p), "\0" x $size, 'all zero');

        my $other = $class eq $STR ? 16 : 32;    # Str: same slots, another arena
        my @other = $class eq $STR ? ($p, 16, 8192) : ($p, $other);
        eval { $class->new(@other) };
        like($@, qr/^\Q$class\E->new: \Q$p\E: \Q$INCOMPLETE\E/, 'a new() of another size croaks');
        is(slurp($p), "\0" x $size, 'and leaves the file alone');

        my $q = eval { $class->new($p, 16) };
        is($@, '', 'a new() of the same geometry re-initialises it');
        is($q && $q->capacity, 16, 'capacity');
        works_ok($q, $class, 're-initialised') if $q;
        my $q2 = $class->new($p, 4);
        is($q2->capacity, 16, 'a second handle sees the stored geometry');
        ok($q->push(value($class, 9)) && $q2->pop eq value($class, 9), 'and the same queue');
        unlink $p;
    };

    subtest "$class: killed before committing the magic" => sub {
        my $p = "$dir/q" . $seq++;
        died_by_kill_ok(killed_create('create_before_magic', $class, $p, 16), 'the creator was killed');
        is(-s $p, $size, 'the file has the full size');
        my $bytes = slurp($p);
        is(substr($bytes, 0, 8), "\0" x 8, 'no magic');
        isnt($bytes, "\0" x $size, 'but part of the header is written');
        eval { $class->new($p, 16) };
        like($@, qr/^\Q$class\E->new: \Q$p\E: \Q$INCOMPLETE\E at /, 'new() croaks with the documented message');
        is(slurp($p), $bytes, 'the file is not modified');
        eval {
            open my $fh, '+<', $p or die;
            $class->new_from_fd(fileno $fh);
        };
        like($@, qr/^\Q$class\E->new_from_fd: .*(?:bad magic|invalid or incompatible)/,
             'new_from_fd refuses it too');
        unlink $p;
        my $q = $class->new($p, 16);
        works_ok($q, $class, 'after removing it, a retry');
        unlink $p;
    };

    subtest "$class: a re-initialisation killed before committing the magic" => sub {
        my $p = "$dir/q" . $seq++;
        died_by_kill_ok(killed_create('create_after_reserve', $class, $p, 16), 'the first creator was killed');
        died_by_kill_ok(killed_create('create_before_magic', $class, $p, 16),
                        'the one re-initialising its file was killed too');
        eval { $class->new($p, 16) };
        like($@, qr/^\Q$class\E->new: \Q$p\E: \Q$INCOMPLETE\E/, 'new() croaks with the documented message');
        unlink $p;
    };

    subtest "$class: the create hooks leave anonymous and memfd queues alone" => sub {
        for my $point (qw(create_after_reserve create_before_magic)) {
            my $pid = spawn(sub {
                $ENV{DQS_TEST_KILL_POINT} = $point;
                my $a = $class->new(undef, 16);
                my $m = $class->new_memfd('dqs', 16);
                $a->push(value($class, 1)) && $m->push(value($class, 2)) or die "push\n";
            });
            reap_ok($pid, "$point: no kill");
        }
    };
}

done_testing;
