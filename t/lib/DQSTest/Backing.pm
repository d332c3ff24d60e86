package DQSTest::Backing;

# The three kinds of backing a queue can have (a file, anonymous memory, a
# memfd), for the tests that run every method on each: a fresh queue of
# any class on a named backing, one of each at once, the checks of what a
# handle says about its backing, and an ok() for plain scalar results.
#
#     use DQSTest::Backing;
#     for my $kind (@KINDS) {
#         my $q = new_on($kind, $class, 8);
#         backing_ok($q, $kind);
#     }

use strict;
use warnings;

use Exporter 'import';
use Test::More ();

use DQSTest::Files qw(scratch_dir fresh_path fd_count maps_count);

our @EXPORT = qw(@KINDS new_on queues_of backing_ok unlink_ok leak_cycles_ok is_plain);

our @KINDS = qw(file anon memfd);

my $SEQ = 0;

# A fresh queue of $class on backing $kind: new($path, $cap, @rest) on a
# fresh file in scratch_dir, new(undef, $cap, @rest), or
# new_memfd($name, $cap, @rest).
sub new_on {
    my ($kind, $class, $cap, @rest) = @_;
    return $class->new(fresh_path(), $cap, @rest)                   if $kind eq 'file';
    return $class->new(undef, $cap, @rest)                          if $kind eq 'anon';
    return $class->new_memfd('dqs-test-' . $SEQ++, $cap, @rest)     if $kind eq 'memfd';
    die "unknown backing $kind";
}

# One fresh queue on each backing: (anon => $q, file => $q, memfd => $q).
sub queues_of {
    my ($class, $cap, @rest) = @_;
    return map { $_ => new_on($_, $class, $cap, @rest) } qw(anon file memfd);
}

# What a handle says about its backing $kind: sync returns true, and path
# and memfd are what that kind has (four checks, five for a memfd).
sub backing_ok {
    my ($q, $kind) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    Test::More::ok($q->sync, 'sync returns true');
    if ($kind eq 'file') {
        my $dir = scratch_dir();
        Test::More::like($q->path, qr{\A\Q$dir\E/f\d+\.shm\z}, 'path of a file queue');
        Test::More::is($q->memfd, -1, 'memfd of a file queue is -1');
    }
    elsif ($kind eq 'anon') {
        Test::More::is($q->path, undef, 'path of an anonymous queue is undef');
        Test::More::is($q->memfd, -1, 'memfd of an anonymous queue is -1');
    }
    else {
        Test::More::is($q->path, undef, 'path of a memfd queue is undef');
        my $fd = $q->memfd;
        Test::More::ok(defined $fd && $fd >= 0,
                       'memfd of a memfd queue is an fd (' . ($fd // 'undef') . ')');
        Test::More::is($q->memfd, $fd, 'memfd is stable');
    }
}

# The unlink checks of $class, with $item an item it holds (twelve
# checks): the instance and the class method remove the file (the mapping
# lives on), the class method on a missing file returns false with ENOENT,
# and unlink croaks on an anonymous or memfd queue.
sub unlink_ok {
    my ($class, $item) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my $path = fresh_path('unlink');
    my $q = $class->new($path, 4);
    Test::More::ok(-e $path, 'file exists');
    $q->push($item);
    Test::More::ok($q->unlink, 'instance unlink returns true');
    Test::More::ok(!-e $path, 'file removed');
    Test::More::is($q->pop, $item, 'the mapping still works after unlink');

    my $path2 = fresh_path('unlink');
    { my $q2 = $class->new($path2, 4) }
    Test::More::ok(-e $path2, 'file outlives the handle');
    Test::More::ok($class->unlink($path2), 'class method unlink returns true');
    Test::More::ok(!-e $path2, 'file removed by the class method');
    $! = 0;
    Test::More::ok(!$class->unlink($path2), 'class method unlink of a missing file returns false');
    Test::More::ok($!{ENOENT}, '... with $! set to ENOENT') or Test::More::diag("\$! = $!");

    for my $kind (qw(anon memfd)) {
        my $aq = new_on($kind, $class, 4);
        eval { $aq->unlink };
        Test::More::like($@, qr/^\Q$class\E->unlink: .*cannot unlink anonymous or memfd queue/,
                         "unlink on a $kind queue croaks");
    }
}

# For each class in @$classes and each way of making a queue (anonymous,
# an unlinked file, a memfd, new_from_fd on a memfd the maker then drops):
# after a warm-up, 1000 cycles of making a queue, pushing an item, asking
# every tenth one for its eventfd and letting it go (with $extra->($class)
# run in each cycle, when given) leave no fd and no mapping behind. Two
# checks per class and way.
sub leak_cycles_ok {
    my ($classes, $extra) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    my %backing = (
        anonymous => sub { $_[0]->new(undef, 64) },
        file      => sub {
            my $q = $_[0]->new(fresh_path('leak'), 64);
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
    for my $class (@$classes) {
        for my $b (sort keys %backing) {
            # warm up (lazily loaded bits, caches), then measure
            for (1 .. 5) { my $q = $backing{$b}->($class); $q->push(1) }
            my ($fd0, $map0) = (fd_count(), maps_count());
            for (1 .. 1000) {
                my $q = $backing{$b}->($class);
                $q->push(1);
                $q->eventfd if $_ % 10 == 0;
                $extra->($class) if $extra;
            }
            Test::More::is(fd_count(), $fd0, "$class $b: no fd leaked");
            Test::More::is(maps_count(), $map0, "$class $b: no mapping leaked");
        }
    }
}

# ok() that $v is a defined plain (non-reference) value equal to $expect
# as a string (so not "" or "0 but true" where a number is due).
sub is_plain {
    my ($v, $expect, $name) = @_;
    local $Test::Builder::Level = $Test::Builder::Level + 1;
    Test::More::ok(defined $v && !ref $v && "$v" eq "$expect", $name)
        or Test::More::diag('got ' . (defined $v ? "'$v'" : 'undef') . ", expected '$expect'");
}

1;
