# What a user of the C implementation of Data::Queue::Shared relies on
# where the spec is silent, one subtest per decision (COMPATIBILITY in the
# manual lists them): the behaviours kept from it, the bugs of it that are
# not kept, and the messages for files and descriptors that are not
# queues, its own queue files among them.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use POSIX ();
use Test::More;

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(60);

my $STR = 'Data::Queue::Shared::Str';
my @ALL = (@INT_CLASSES, $STR);
my $dir = tmpdir();
my $seq = 0;
sub fresh { "$dir/q" . $seq++ . '.shm' }

sub vals { my ($class, @n) = @_; $class eq $STR ? map { "s$_" } @n : @n }

# A subtest whose body may die on a build that decided otherwise: the die
# is a failure of that subtest, and the next ones still run.
sub case {
    my ($name, $body) = @_;
    subtest $name => sub { eval { $body->(); 1 } or fail("died: $@") };
}

sub is_eventfd { (readlink("/proc/self/fd/$_[0]") // '') =~ /eventfd/ }

sub spew {
    my ($path, $bytes) = @_;
    open my $fh, '>:raw', $path or die "open $path: $!";
    print {$fh} $bytes;
    close $fh or die;
}

# ---- kept from the C implementation ----------------------------------------

case 'a negative count takes everything (pop_multi, pop_wait_multi, drain)' => sub {
    for my $class (@ALL) {
        my $q = $class->new(undef, 8);
        my @v = vals($class, 1 .. 5);
        $q->push_multi(@v);
        is_deeply([$q->pop_multi(-1)], \@v, "$class: pop_multi(-1) takes all");
        $q->push_multi(@v);
        is_deeply([$q->pop_multi(-2.5)], \@v, "$class: pop_multi(-2.5) takes all");
        $q->push_multi(@v);
        is_deeply([$q->drain(-1)], \@v, "$class: drain(-1) takes all");
        $q->push_multi(@v);
        is_deeply([$q->pop_wait_multi(-1, 0)], \@v, "$class: pop_wait_multi(-1, 0) takes all");
        $q->push_multi(@v);
        is_deeply([$q->pop_multi(0)], [], "$class: pop_multi(0) takes none");
        is_deeply([$q->pop_multi(0.5)], [], "$class: pop_multi(0.5) takes none (the fraction is dropped)");
        is_deeply([$q->drain(0)], [], "$class: drain(0) takes none");
        is($q->size, 5, "$class: all still there");
    }
};

case 'push_wait_multi with an undef timeout tries once' => sub {
    for my $class (@ALL) {
        my $q = $class->new(undef, 2);
        local $SIG{ALRM} = sub { die "push_wait_multi(undef, ...) waited\n" };
        alarm 10;
        my $n = eval { $q->push_wait_multi(undef, vals($class, 1 .. 3)) };
        alarm 0;
        is($@, '', "$class: it returns at once on a full queue");
        is($n, 2, "$class: with the number pushed");
        is_deeply([$q->drain], [vals($class, 1, 2)], "$class: the first two are in");
    }
};

case 'eventfd_set(-1) turns notification off' => sub {
    for my $class (@ALL) {
        my $q = $class->new(undef, 4);
        my $fd = $q->eventfd;
        ok(is_eventfd($fd), "$class: fixture: an eventfd");
        is($q->eventfd_set(-1), -1, "$class: eventfd_set(-1) returns -1");
        is($q->fileno, -1, "$class: fileno is -1 afterwards");
        ok(!$q->notify, "$class: notify does nothing");
        ok(!is_eventfd($fd), "$class: the eventfd it had made is closed");
        is($q->eventfd_set(-1), -1, "$class: again, harmless");

        my $owner = $class->new(undef, 4);
        my $lent = $owner->eventfd;
        $q->eventfd_set($lent);
        $q->eventfd_set($q->fileno == $lent ? -1 : die);
        ok(is_eventfd($lent) && $owner->notify, "$class: a lent eventfd stays open");
        is($owner->eventfd_consume, 1, "$class: and works");

        eval { $q->eventfd_set(-2) };
        like($@, qr/^\Q$class\E->eventfd_set: fd -2 is not a valid file descriptor/,
             "$class: other negative numbers croak");
    }
};

case 'eventfd_consume with nothing pending returns undef' => sub {
    for my $class (@ALL) {
        my $q = $class->new(undef, 4);
        is($q->eventfd_consume, undef, "$class: undef without an eventfd");
        $q->eventfd;
        is($q->eventfd_consume, undef, "$class: undef with nothing pending");
        $q->notify for 1 .. 3;
        is($q->eventfd_consume, 3, "$class: the count when something was");
        is($q->eventfd_consume, undef, "$class: undef again after it");
    }
};

case 'an Int clear counts in pop_ok; a Str clear does not' => sub {
    for my $class (@INT_CLASSES) {
        my $q = $class->new(undef, 8);
        $q->push_multi(1 .. 5);
        $q->pop;
        $q->clear;
        my $s = $q->stats;
        is_deeply([@$s{qw(push_ok pop_ok size)}], [5, 5, 0], "$class: the 4 cleared count as popped");
    }
    my $q = $STR->new(undef, 8);
    $q->push_multi(vals($STR, 1 .. 5));
    $q->pop;
    $q->clear;
    my $s = $q->stats;
    is_deeply([@$s{qw(push_ok pop_ok size)}], [5, 1, 0], "$STR: the cleared do not count");
};

case 'an empty Str item takes a slot and no arena bytes' => sub {
    my $q = $STR->new(undef, 4, 4096);
    is($q->stats->{arena_cap}, 4096, 'fixture: a 4096-byte arena');
    ok($q->push('x' x 4096), 'an item fills the arena exactly');
    ok(!$q->push('y'), 'nothing with a byte more fits');
    ok($q->push(''), 'an empty string still does');
    ok($q->push_front(''), 'at the front too');
    is($q->stats->{arena_used}, 4096, 'and uses no arena bytes');
    is_deeply([$q->drain], ['', 'x' x 4096, ''], 'they come out in order');
};

{
    package My::IntQueue;
    our @ISA = ('Data::Queue::Shared::Int');
    our $destroyed = 0;
    sub DESTROY { $destroyed++; shift->SUPER::DESTROY }
    sub push_twice { my ($q, $v) = @_; $q->push($v) && $q->push($v) }
    package My::StrQueue;
    our @ISA = ('Data::Queue::Shared::Str');
    package Not::A::Queue;
}

case 'a handle can be re-blessed into a subclass' => sub {
    my $q = Data::Queue::Shared::Int->new(undef, 4);
    is(eval { bless $q, 'My::IntQueue'; ref $q }, 'My::IntQueue', 'bless into a subclass') or diag($@);
    ok($q->push_twice(7), 'its own methods work');
    is_deeply([$q->drain], [7, 7], 'and the inherited ones');
    undef $q;
    is($My::IntQueue::destroyed, 1, "the subclass's DESTROY ran");

    my $s = bless $STR->new(undef, 4), 'My::StrQueue';
    ok($s->push('a') && $s->pop eq 'a', 'a Str handle too');

    bless $s, 'Not::A::Queue';
    eval { Data::Queue::Shared::Str::size($s) };
    like($@, qr/invocant is not of type Data::Queue::Shared::Str/, 'an unrelated class is not a queue');
    bless $s, $STR;
    is($s->size, 0, 'blessed back, it works again');

    for my $change (sub { ${ $_[0] } = 42 }, sub { ${ $_[0] }++ }, sub { --${ $_[0] } },
                    sub { ${ $_[0] } += 1 }, sub { undef ${ $_[0] } }, sub { ${ $_[0] } = 'abc' }) {
        eval { $change->($s) };
        like($@, qr/^Modification of a read-only value attempted at /, 'the handle cannot be changed');
        ok($s->push('b') && $s->pop eq 'b', 'and still works');
    }
    my $forged = bless \(my $x = 12345), 'Data::Queue::Shared::Int';
    undef $forged;
    pass('destroying a forged object does nothing');
};

# ---- bugs of the C implementation, not kept --------------------------------

case 'counts and capacities are not cut to 32 bits' => sub {
    for my $class (@ALL) {
        my $q = $class->new(undef, 8);
        $q->push_multi(vals($class, 1 .. 3));
        is(scalar(my @v = $q->pop_multi(2**32 + 1)), 3, "$class: pop_multi(2**32+1) takes all 3, not 1");
        $q->push_multi(vals($class, 1 .. 3));
        is(scalar(@v = $q->drain(2**32 + 1)), 3, "$class: drain(2**32+1) too");
        eval { $class->new(undef, 2**32 + 2) };
        like($@, qr/^\Q$class\E->new: capacity 4294967298 is out of range/,
             "$class: a capacity of 2**32+2 croaks, not a queue of 2");
    }
};

case 'a path with a NUL or a reference as a path croaks' => sub {
    for my $class (@ALL) {
        my $p = fresh();
        eval { $class->new("$p\0junk", 4) };
        like($@, qr/^\Q$class\E->new: path contains a NUL byte/, "$class: NUL");
        ok(!-e $p, "$class: nothing created at the part before it");
        eval { $class->new([], 4) };
        like($@, qr/^\Q$class\E->new: path must be a string, not a reference/, "$class: a reference");
    }
};

case 'pop_wait_multi(0) removes nothing' => sub {
    for my $class (@ALL) {
        my $q = $class->new(undef, 4);
        $q->push(vals($class, 1));
        is_deeply([$q->pop_wait_multi(0, 0)], [], "$class: returns nothing");
        is($q->size, 1, "$class: and the item is still there");
    }
};

case 'a batch with a string that can never fit pushes nothing' => sub {
    my $q = $STR->new(undef, 8, 4096);
    for my $m (qw(push_multi push_wait_multi)) {
        my @args = ($m eq 'push_wait_multi' ? (0) : (), 'a', 'x' x 4097, 'b');
        eval { $q->$m(@args) };
        like($@, qr/^\Q$STR\E->$m: string of 4097 bytes exceeds the arena of 4096 bytes/, "$m croaks");
        is($q->size, 0, "$m: nothing was pushed");
    }
};

# ---- files and descriptors that are not queues ------------------------------

my $NOT = qr/invalid or incompatible queue file/;

case 'a queue file of the C implementation is named' => sub {
    for my $version (1, 2) {
        for my $len (64, 8192) {
            my $p = fresh();
            spew($p, pack('VV', 0x51554531, $version) . "\0" x ($len - 8));
            my $why = qr/$NOT \(a queue file of another version of Data::Queue::Shared \(the C implementation, its format $version\); remove it and create it again\)/;
            for my $class (@ALL) {
                eval { $class->new($p, 8) };
                like($@, qr/^\Q$class\E->new: \Q$p\E: $why at /, "$class->new: format $version, $len bytes");
                open my $fh, '<', $p or die;
                eval { $class->new_from_fd(fileno $fh) };
                like($@, qr/^\Q$class\E->new_from_fd: fd \d+: $why at /, "$class->new_from_fd: format $version, $len bytes");
            }
            is(-s $p, $len, 'the file is left as it was');
        }
    }
    my $p = fresh();
    spew($p, pack('VV', 0x51554531, 7) . "\0" x 4088);
    eval { Data::Queue::Shared::Int->new($p, 8) };
    like($@, qr/$NOT \(bad magic\)/, 'another version number after that magic: just a bad magic');
};

case 'too small, and what is not a file' => sub {
    for my $class (@ALL) {
        my $p = fresh();
        spew($p, 'x' x 100);
        eval { $class->new($p, 8) };
        like($@, qr/^\Q$class\E->new: \Q$p\E: $NOT \(too small: 100 bytes, a queue header alone is ${\ HEADER_SIZE}\) at /,
             "$class->new: a 100-byte file");
        open my $fh, '<', $p or die;
        eval { $class->new_from_fd(fileno $fh) };
        like($@, qr/^\Q$class\E->new_from_fd: fd \d+: $NOT \(too small: 100 bytes/, "$class->new_from_fd: too small");
        open my $null, '<', '/dev/null' or die;
        eval { $class->new_from_fd(fileno $null) };
        like($@, qr/^\Q$class\E->new_from_fd: fd \d+: $NOT \(a character device, not a memfd or regular file\) at /,
             "$class->new_from_fd: /dev/null");
        eval { $class->new($dir, 8) };
        like($@, qr/^\Q$class\E->new: \Q$dir\E: $NOT \(a directory, not a regular file\) at /, "$class->new: a directory");
    }
};

done_testing;
