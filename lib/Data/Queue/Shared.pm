package Data::Queue::Shared;
use strict;
use warnings;

our $VERSION = '0.20';

# 1 when the keyword API (q_int_push ...) was built in, else 0: set by the
# XS when it loads.
our $HAVE_KEYWORDS;

# The %^H key that enables the method short cut (see import below).
our $METHODS_HINT = 'Data::Queue::Shared/methods';

require XSLoader;
XSLoader::load('Data::Queue::Shared', $VERSION);

# The classes' import and unimport: no arguments (nothing is exported);
# they switch the class's keywords on or off in the lexical scope being
# compiled, through the %^H key the keyword plugin checks.
sub _keywords {
    my ($class, $on, @args) = @_;
    if (@args) {
        require Carp;
        Carp::croak("$class does not export anything (asked for: @args)");
    }
    if ($on) { $^H{"$class/keywords"} = 1; $^H{$METHODS_HINT} = 1 }
    else     { delete $^H{"$class/keywords"} }
    return;
}

# `use Data::Queue::Shared;` (and `use` of a class module) lets the XS
# compile the queue method calls of the lexical scope being compiled to a
# guarded short cut (see fastcall.h): `$q->push($v)` then costs little more
# than a keyword, with nothing visible changed. `use Data::Queue::Shared ();`
# loads the classes without it; `no Data::Queue::Shared;` turns it off.
sub import   { $^H{$METHODS_HINT} = 1; return }
sub unimport { delete $^H{$METHODS_HINT}; return }

1;

__END__

=encoding utf8

=head1 NAME

Data::Queue::Shared - bounded multi-producer, multi-consumer queues in shared memory for Linux

=head1 SYNOPSIS

    use Data::Queue::Shared;

    # A queue of 64-bit integers in a file any process can open.
    my $q = Data::Queue::Shared::Int->new('/tmp/jobs.shm', 1000);
    printf "room for %d items\n", $q->capacity;      # 1024

    $q->push(42) or warn "queue full\n";               # never blocks
    my $job = $q->pop;                                 # undef when empty

    $q->push_wait(7, 2.5);           # wait up to 2.5 s for room
    $job = $q->pop_wait(0.5);        # wait up to 0.5 s for an item
    $q->push(8);
    $job = $q->pop_wait;             # no timeout: as long as it takes

    my $n    = $q->push_multi(1 .. 10);    # how many fitted
    my @jobs = $q->pop_multi(4);           # up to four items
    my @rest = $q->drain;                  # everything left

    # Producer and consumer in two processes.
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $child = Data::Queue::Shared::Int->new('/tmp/jobs.shm', 1000);
        $child->push_wait($_) for 1 .. 100;
        exit 0;
    }
    my $sum = 0;
    $sum += $q->pop_wait for 1 .. 100;
    waitpid $pid, 0;
    print "sum $sum\n";                    # 5050

    # No file: anonymous memory shared with children forked later.
    my $anon = Data::Queue::Shared::Int32->new(undef, 256);

    # A memfd: hand the descriptor to another process (fork, SCM_RIGHTS).
    my $mq   = Data::Queue::Shared::Int16->new_memfd('ticks', 64);
    my $same = Data::Queue::Shared::Int16->new_from_fd($mq->memfd);

    # Strings: a deque whose bytes live in a shared arena (here 64 KiB).
    my $sq = Data::Queue::Shared::Str->new('/tmp/msgs.shm', 256, 65536);
    $sq->push('hello');
    $sq->push("caf\x{e9} \x{263a}");       # the UTF-8 flag travels along
    $sq->push_front('urgent');             # jumps the line
    my $msg  = $sq->pop;                   # 'urgent'
    my $last = $sq->pop_back;              # "caf\x{e9} \x{263a}"
    my @some = $sq->pop_multi(10, 4096);   # ('hello'): <= 10 items, ~4 KiB
    printf "arena: %d of %d bytes in use\n",
        @{ $sq->stats }{qw(arena_used arena_cap)};
    $sq->unlink;                           # remove /tmp/msgs.shm

    my $s = $q->stats;
    print "pushed $s->{push_ok}, popped $s->{pop_ok}\n";

    $q->unlink;                            # remove /tmp/jobs.shm

=head1 DESCRIPTION

A queue made by this module is a fixed-size ring of slots in a shared
mapping. Every process that opens the same file (or inherits an anonymous
queue across C<fork>, or receives a memfd) sees the same items, and any
number of them can push and pop at the same time. The integer queues are
lock-free: a push or a pop claims its slot with one compare-and-swap and
never waits for another process, except in the instant between another
process's claim and its publish. Blocking variants sleep on a futex in the
shared header and cost no system call while nobody is waiting.

The string queue holds items of any length, so it keeps their bytes in a
byte arena after the slots and takes a short lock in the shared header for
every operation. In exchange it is a deque (push and pop at both ends), and
its C<peek>, C<size> and C<clear> are exact.

The engine is written in Rust and linked into the XS module; nothing else is
needed at run time. Linux and a 64-bit perl are required.

Loading C<Data::Queue::Shared> makes every class below available; each class
also has its own module (C<use Data::Queue::Shared::Int;>) that loads the
same code.

=head1 CLASSES

=over 4

=item Data::Queue::Shared::Int

Signed 64-bit integers, 16 bytes per slot.

=item Data::Queue::Shared::Int32

Signed 32-bit integers, 8 bytes per slot. A value outside the range but
within the signed 64-bit range is truncated the way a C cast to
C<int32_t> truncates it: C<< 2**32 + 5 >> comes back as C<5>, C<2**31> as
C<-2147483648>. Beyond 64 bits it croaks, as for Int (see L</push>).

=item Data::Queue::Shared::Int16

Signed 16-bit integers, 8 bytes per slot, truncated like a cast to
C<int16_t> (C<65537> comes back as C<1>) within the signed 64-bit range,
as Int32.

=item Data::Queue::Shared::Str

Byte and character strings of any length up to the arena size, with their
UTF-8 flag. 16 bytes per slot, plus a byte arena that holds the strings
(by default 256 bytes per slot). It adds C<push_front> and C<pop_back> to
the methods below, and a byte budget to its batch pops. Described in
L<Data::Queue::Shared::Str>, its own page.

=back

The three integer classes have the same methods, described once below with
C<Int> standing for any of them. C<Data::Queue::Shared::Str> has the same
methods too, with the differences and additions given on its own page,
L<Data::Queue::Shared::Str>.
Every argument is converted (to a number, or to a string for paths and
names) before the queue is touched, so a tied or overloaded argument runs
its code first, and a die inside that code leaves the queue as it was.

Every class can be subclassed: C<< My::Queue->new(...) >> blesses into
C<My::Queue> when it inherits from one of these classes, and a handle
already made can be re-blessed (C<bless $q, 'My::Queue'>). A handle is a
reference to a number that must not change: assigning to C<$$q> croaks
C<Modification of a read-only value attempted> and leaves the handle
working.

=head1 THE MANUAL

The manual has a page per class and topic:

=over 4

=item *

L<Data::Queue::Shared>, this page: the constructors and methods of the
integer classes, which the Str class shares, and what all four classes
share: L</"EVENT LOOPS">, L</"FAST METHOD CALLS">, L</KEYWORDS>,
L</ERRORS>, L</"WAKE-UPS AND SIGNALS">, L</"FORK AND THREADS">,
L</SECURITY>, L</"CRASH SAFETY">, L</COMPATIBILITY> with the C
implementation, the L</"RUST AND C"> interfaces and the L</BENCHMARKS>.

=item *

L<Data::Queue::Shared::Str>: the string deque. Its arena argument,
values, the arena, the methods only it has (C<push_front>, C<pop_back>
and their C<_wait> forms, the byte budget of its batch pops,
C<compress>, C<lock_timeout>), how each shared method differs for it,
its statistics, its lock and its wake-ups.

=item *

L<Data::Queue::Shared::Int>, L<Data::Queue::Shared::Int32> and
L<Data::Queue::Shared::Int16>: short pages for the integer classes, with
their value ranges and links into this page.

=item *

L<Data::Queue::Shared::Leases>: leased pops for all four classes
(C<pop_lease>, C<ack>, C<release>, ...): items whose consumer dies come
back; the guarantee, the create options, crash safety and the lease table's
format.

=item *

L<Data::Queue::Shared::Format>: the on-disk format (header, slots, the
Str arena and lock word, the slot and waiter protocols, versioning), for
programs in other languages that share the queues.

=item *

L<Data::Queue::Shared::dqs>: the command-line tool, C<dqs>, installed
with its manual as L<dqs(1)>.

=item *

F<bench/RESULTS.pod> in the distribution (not installed): the numbers of
the last benchmark runs, described under L</BENCHMARKS>.

=back

=head1 CONSTRUCTORS

Every constructor returns a new handle or croaks. A handle is private to the
process (and thread) that holds it; the queue it points to is shared.

=head2 new

    my $q = Data::Queue::Shared::Int->new($path, $capacity);
    my $q = Data::Queue::Shared::Int->new($path, $capacity, $mode);

Creates the queue file at C<$path>, or attaches to the queue already there.

C<$capacity> is the number of items the queue holds. It is rounded up to a
power of two, and to at least 2; the largest is C<2**30>. Zero, a negative
number, a string that is not a number, or anything above C<2**30> croaks
with a message naming the value (nothing is allocated first).

A new file is created with C<O_CREAT|O_EXCL|O_NOFOLLOW>, given mode C<$mode>
exactly (a number such as C<0660>, up to C<07777>; default, or C<undef>,
C<0600>; the umask does not apply), its blocks reserved with
C<posix_fallocate> (so a full file system fails here with C<ENOSPC>, not later
with a C<SIGBUS>), and initialised while an exclusive C<flock> is held.
Several processes may call C<new> on the same new path at once: one creates,
the others wait for the lock and attach.

An existing file is opened with C<O_NOFOLLOW> (a symlink at C<$path> croaks)
and its header is checked: magic number, format version, variant, geometry
and file size. The geometry stored in the file wins: C<$capacity> and
C<$mode> are then ignored, so C<< ->capacity >> tells you what you got. An
existing file of length zero is initialised as if it had just been created,
and given C<$mode>, but only when your effective uid owns it; a file of
length zero that somebody else owns is left alone and croaks (see
L</SECURITY>):

    Data::Queue::Shared::Int->new: /tmp/q.shm: refusing to initialize file
    not owned by us (owner uid 65534, we are uid 1000): Operation not
    permitted (os error 1)

Anything at the path that is not a usable queue croaks with the words
C<invalid or incompatible queue file> and the reason in parentheses: another
variant, another format, a damaged header, a file too small for a header, a
directory, a device or FIFO, a file whose size says zero but that has
content when read (as in F</proc> and F</sys>), or a queue file of the C
implementation of this module (see L</COMPATIBILITY>). This is also the
error when the file cannot be opened for writing but can be read and is
not a queue; a queue file you may not write croaks with the system's
error (C<Permission denied>):

    Data::Queue::Shared::Int->new: /tmp/q.shm: invalid or incompatible queue
    file (it holds a Str queue)
    Data::Queue::Shared::Int->new: /tmp/q.shm: invalid or incompatible queue
    file (too small: 100 bytes, a queue header alone is 320)

=head2 new (anonymous)

    my $q = Data::Queue::Shared::Int->new(undef, $capacity);

With C<undef> for the path, the queue lives in anonymous shared memory
(C<MAP_SHARED|MAP_ANONYMOUS>). Children forked afterwards share it; no other
process can reach it. C<path> returns C<undef> and C<memfd> returns C<-1>.

=head2 new_memfd

    my $q = Data::Queue::Shared::Int->new_memfd($name, $capacity);

Creates the queue in a new memfd (see L<memfd_create(2)>). C<$name> is only a
label that shows up in F</proc/PID/fd>. The descriptor is close-on-exec and
sealed against shrinking and growing, so nobody holding it can truncate the
queue under another process. Get it with L</memfd> and pass it on through
C<fork> or C<SCM_RIGHTS>; the receiver calls L</new_from_fd>. The queue
exists as long as some process holds the descriptor or a mapping of it.

=head2 new_from_fd

    my $q = Data::Queue::Shared::Int->new_from_fd($fd);

Attaches to the queue behind the file descriptor C<$fd>, usually a memfd from
L</new_memfd>, though a descriptor of a queue file works too. The descriptor
is duplicated with C<F_DUPFD_CLOEXEC>: C<$fd> is left exactly as it was and
stays yours to close, and L</memfd> of the new handle returns the duplicate.
The header is validated as for L</new>. Errors:

    Data::Queue::Shared::Int->new_from_fd: fd 3: invalid or incompatible
    queue file (too small: 0 bytes, a queue header alone is 320)
    Data::Queue::Shared::Int->new_from_fd: fd 3: invalid or incompatible
    queue file (a character device, not a memfd or regular file)
    Data::Queue::Shared::Int->new_from_fd: fd 3: invalid or incompatible
    queue file (bad magic)

and a croak naming the fd when it is not an open descriptor.

=head1 METHODS

=head2 Timeouts

Every method whose name contains C<wait> takes a timeout in seconds;
fractions are fine (C<0.25>). It is measured on C<CLOCK_MONOTONIC>, so
changing the wall clock does not stretch or cut a wait.

=over 4

=item *

omitted, C<undef>, negative, or C<+Inf>: wait as long as it takes;

=item *

C<0>: try once and return at once, never sleeping;

=item *

positive: give up after that long;

=item *

NaN croaks C<< Data::Queue::Shared::Int->pop_wait: timeout is not a number >>.

=back

=head2 Single items

=over 4

=item push

    my $ok = $q->push($value);

Adds C<$value> at the tail if there is room. Returns true when it was added,
false when the queue was full. Never blocks.
C<$value> is taken as an integer (numified once; an object with numeric
overloading is fine). C<undef> and plain references croak with
C<cannot push undef> and C<cannot push a reference>, here and in every
other push method and keyword: C<undef> is how C<pop> says "empty".

What is stored, in every push method and keyword of the three integer
classes:

=over 4

=item * an integer from C<-2**63> to C<2**63 - 1> as it is;

=item * a number with a fraction cut off toward zero, as C<int()> cuts it
(C<1.9> is C<1>, C<-1.9> is C<-1>);

=item * a string that Perl takes as a number (C<looks_like_number>: leading
and trailing blanks, a sign, C<"2.5">, C<"1e3">, C<"0 but true">) as that
number, whole numbers exactly and fractions cut off as above.

=back

Anything else croaks before the queue is touched, naming the method, the
value and the range: a string that is not a number (C<"abc">,
C<"12abc">, C<"0x10">, C<"">), C<NaN>, and C<Inf>, C<-Inf> or any other
number outside the signed 64-bit range (C<2**63>, C<2**64 - 1>,
C<"-9223372036854775809">). Int32 and Int16 take the same values and
keep their low 32 or 16 bits (see L</CLASSES>); a value they cannot take
whole croaks the same way, with the same range:

    Data::Queue::Shared::Int->push: value "abc" is not a number
    Data::Queue::Shared::Int->push_multi: value 1.84467440737096e+19 is out of range (-9223372036854775808 .. 9223372036854775807)
    Data::Queue::Shared::Int32->q_int32_push: value NaN is not a number

A batch (C<push_multi>, C<push_wait_multi>) converts all its values first
and croaks before pushing any of them.

=item pop

    my $value = $q->pop;

Removes and returns the oldest item, or C<undef> when the queue is empty.
Never blocks. An empty queue gives one C<undef> in list context too, so
C<is($q-E<gt>pop, undef)> and C<my ($v) = $q-E<gt>pop> behave alike.

=item push_wait

    my $ok = $q->push_wait($value);
    my $ok = $q->push_wait($value, $timeout);

Like L</push>, but while the queue is full it sleeps until a consumer makes
room or the timeout passes. Returns true when the value was added, false on
timeout.

=item pop_wait

    my $value = $q->pop_wait;
    my $value = $q->pop_wait($timeout);

Like L</pop>, but while the queue is empty it sleeps until a producer adds
an item or the timeout passes. Returns the item, or C<undef> on timeout.

=item peek

    my $value = $q->peek;

Returns the oldest item without removing it, or C<undef> when the queue is
empty. With other processes popping at the same moment the answer is only a
best guess: the item may be gone by the time you look at it, and while
items are being pushed and popped around it C<peek> may return C<undef> for
a queue that is not empty.

=back

=head2 Batches

=over 4

=item push_multi

    my $n = $q->push_multi(@values);

Pushes the values in order until one does not fit; never blocks. Returns the
number pushed, from C<0> (a number, not the empty string) to
C<scalar @values>. The values after the first one that did not fit are not
pushed. Wakes as many sleeping consumers as items pushed.

=item pop_multi

    my @values = $q->pop_multi($count);

Pops up to C<$count> items, oldest first, without blocking. Returns them as
a list, which is empty when the queue was (or when C<$count> is 0). A
negative C<$count> (C<-1>) means no limit, as in the C implementation;
fractions are dropped. Wakes as many sleeping producers as slots it freed.

=item push_wait_multi

    my $n = $q->push_wait_multi($timeout, @values);

Pushes every value in order, sleeping whenever the queue is full, until all
are in or the timeout passes. Note that the timeout comes first, and that
it is not optional: pass C<-1> to wait as long as it takes. C<undef> is
read as C<0>, try once, as the C implementation did (see
L</COMPATIBILITY>). Returns the number pushed, which is less than
C<scalar @values> only on timeout.

=item pop_wait_multi

    my @values = $q->pop_wait_multi($count);
    my @values = $q->pop_wait_multi($count, $timeout);

Sleeps until at least one item is there (or the timeout passes), then pops
up to C<$count> items without sleeping again (a negative C<$count>: all
there are). Returns the list, empty on timeout; C<$count> 0 returns at
once with nothing and removes nothing.

=item drain

    my @values = $q->drain;
    my @values = $q->drain($max);

Pops everything that is in the queue, or at most C<$max> items (C<undef>
or a negative number means no limit, 0 means none), without blocking, and
returns the
list (oldest first). Items pushed while C<drain> runs may or may not be
included; one call takes at most C<capacity> items, so a producer that
keeps pace with it cannot make it run (and its list grow) for ever.

=back

=head2 State

=over 4

=item size

    my $n = $q->size;

The number of items in the queue at one instant. With other processes
working on the queue it is a snapshot that may be stale when you read it;
it is never negative and never above the capacity, except by the items
back from leases that wait beside the ring or for room (see
L<Data::Queue::Shared::Leases/Where returned items go>), which it counts.

=item capacity

    my $cap = $q->capacity;

The number of slots: the requested capacity rounded up to a power of two,
or the capacity stored in an existing file.

=item is_empty

=item is_full

    print "idle\n" if $q->is_empty;
    print "backlog\n" if $q->is_full;

True when the queue holds no item, or when it has no free slot, at one
instant (the same snapshot rule as L</size>).

=item stats

    my $s = $q->stats;

Returns a new hash reference of counters and gauges:

=over 4

=item size

Items in the queue now.

=item capacity

Slot count.

=item mmap_size

Bytes mapped: the 320-byte header plus the slots; for the integer queues
the intent records next (32 records of 64 bytes, on a 64-byte boundary);
then (unless the queue was created with C<max_leases> 0) the lease table
on a 64-byte boundary, 64 bytes per lease plus 64 (see
L<Data::Queue::Shared::Format>). An Int queue of capacity 2 without
leases maps 2432 bytes.

=item push_ok, pop_ok

Items pushed and popped since the queue was created, by all processes.
Each item counts once, however often it was leased: an item back from a
lease (see L<Data::Queue::Shared::Leases/Where returned items go>) is not
pushed again, and its pop stops counting until it is taken again.
In the integer queues the items L</clear> removes count as popped (as in
the C implementation); in a Str queue they do not (see L<Data::Queue::Shared::Str/clear>).

=item push_full, pop_empty

Non-blocking attempts that found the queue full or empty, and waits that
timed out full or empty.

=item recoveries

Crash recoveries performed since the queue was created, by all processes.
In the integer queues: positions a producer reserved and was killed before
it filled them, given up by a consumer, and slots a consumer claimed and
was killed before it freed them, freed by a producer (one count per
position; only ever after the owner died). In a Str
queue: takeovers of the lock from a holder that died. Normally 0; see
L</"CRASH SAFETY">.

=item push_waiters, pop_waiters

Producers and consumers asleep in a C<*_wait> method right now.

=back

While other processes are busy the numbers are read one at a time and need
not agree with each other. Once every process has finished, C<push_ok> and
C<pop_ok> are exact: in an integer queue C<push_ok - pop_ok == size>, and
in a Str queue too as long as nothing was cleared.

=back

=head2 Management

=over 4

=item clear

    $q->clear;

Pops every item and throws it away, then wakes every producer that sleeps in
a C<*_wait> method so it can use the room. Returns nothing. Cleared items do
not count as C<pop_ok>. The ring stays lock-free, so an item pushed by
another process while C<clear> runs may survive it; like C<drain>, one
call removes at most C<capacity> items.

=item sync

    $q->sync;

Flushes the mapping to the backing file with C<msync>, for a queue that must
survive a machine crash. Returns true, or croaks if C<msync> fails.
Anonymous and memfd queues have no file to flush. Not needed for processes
to see each other's items: they share the same memory.

=item unlink

    my $ok = $q->unlink;
    my $ok = Data::Queue::Shared::Int->unlink($path);

Removes the backing file, as the instance method, or the file at C<$path>,
as the class method. Processes that have the queue open keep using it; a
later C<new> with that path creates a new queue. Returns true on success;
on failure returns false with C<$!> set (for example to C<ENOENT>). Calling
it on an anonymous or memfd queue croaks:

    Data::Queue::Shared::Int->unlink: cannot unlink anonymous or memfd queue

=item path

    my $path = $q->path;

The path the queue was opened with, or C<undef> for an anonymous or memfd
queue.

=item memfd

    my $fd = $q->memfd;

The handle's file descriptor for a queue made by L</new_memfd> or
L</new_from_fd> (for the latter, the handle's own duplicate), or C<-1> for a
file-backed or anonymous queue. The handle closes it when it is destroyed.

=back

=head2 Leases

A pop that is not final: C<pop_lease> takes the front item so that no other
consumer gets it, and the queue keeps it as held by this process until
C<ack> (gone for good) or C<release> (back to the front). B<If the holder
process dies first (killed by any signal, the OOM killer, a crash, an exit
without ack), or the lease's optional deadline passes, the item goes back
to the front of the queue by itself, found within milliseconds by the next
operation that looks; a stopped holder is alive and keeps it. Nothing is
lost, and an item is handed out again only when its lease ended without an
ack, so the one duplicate to expect is an item whose holder died after
doing the work and before its ack returned.> (Integer queues add one
narrower case, a leaser killed inside C<pop_lease> racing a plain C<pop>;
see L<Data::Queue::Shared::Leases>.) All four classes, and the C and Rust
APIs and C<dqs>, have them; the full explanation is
L<Data::Queue::Shared::Leases>.

    my ($value, $lease) = $q->pop_lease;                   # empty list if empty
    my ($value, $lease) = $q->pop_lease($lease_timeout);   # back after that long
    my ($value, $lease) = $q->pop_lease_wait($timeout, $lease_timeout);
    my @pairs = $q->pop_lease_multi($n);  # up to $n [$value, $lease] pairs
    my $ok = $q->ack($lease);       # false: the lease had ended (late, returned)
    my $ok = $q->release($lease);   # or nack: back at the front
    my $s  = $q->lease_stats;       # max_leases open waiting acked released
                                    # returned_dead returned_timeout
    my @l  = $q->leases;            # one hash per open or waiting lease

    # the size of the lease table is set at create (default 64 leases)
    Data::Queue::Shared::Int->new($path, $cap, { max_leases => 256 });
    Data::Queue::Shared::Str->new($path, $cap, undef, { max_leases => 256,
                                                       lease_bytes => 1 << 20 });

When every lease is taken, C<pop_lease> croaks C<... all N leases are taken
...> and plain C<pop> still works. An C<ack> after the lease's deadline
returns false: the item has gone back to the queue. A forked child is a
different holder from its parent. Plain C<push> and C<pop> do not touch the
lease table (an integer queue's C<pop> that finds its ring empty reads one
header word more). An integer queue keeps returned items beside its ring:
C<pop_lease> serves them first, plain pops once the ring is empty, and
C<size> does not count them (see
L<Data::Queue::Shared::Leases/Where returned items go>).

=head1 EVENT LOOPS

A consumer inside an event loop (L<EV>, L<AnyEvent>, L<IO::Async>, a plain
C<select> loop) cannot sleep in L</pop_wait>. It can instead watch a file
descriptor that becomes readable when there is work: every handle of every
class can have an L<eventfd(2)> for that purpose.

The eventfd belongs to the handle in one process, not to the queue in
shared memory. Signalling it is up to you: C<push> never writes to it, so a
queue nobody watches pays nothing, and a producer can push a whole batch
and signal once. The pattern is:

=over 4

=item *

the consumer gets an fd with L</eventfd> and watches it for reading;

=item *

a producer pushes, then calls L</notify>;

=item *

when the fd is readable, the consumer calls L</eventfd_consume> first and
then pops until the queue is empty.

=back

Consuming before popping means no notification is lost: an item pushed
after the last pop that found the queue empty comes with a notify that
makes the fd readable again. The opposite case, an item popped in this
round whose notify arrives afterwards, only costs one extra wake-up that
finds nothing. Loops report readiness for as long as the fd is readable,
so a callback that does not call C<eventfd_consume> is called again at
once.

=head2 Event loop methods

These are the same for all four classes.

=over 4

=item eventfd

    my $fd = $q->eventfd;

Returns the handle's eventfd, creating it the first time: non-blocking,
close-on-exec, counter at 0. Later calls return the same number (and so
does C<eventfd> after L</eventfd_set>). The handle closes an eventfd it
created when it is destroyed. Croaks when the system refuses a new
descriptor, for example C<< Data::Queue::Shared::Int->eventfd: eventfd: Too
many open files (os error 24) >>.

=item eventfd_set

    $q->eventfd_set($fd);

Makes C<$fd>, an open descriptor you got elsewhere (usually an eventfd
inherited across C<fork>), the handle's eventfd, and returns it.
L</fileno> then returns exactly C<$fd>. The handle never closes a
descriptor given to it this way: it stays yours. If the handle had created
an eventfd of its own before, that one is closed now (unless it is C<$fd>
itself). C<$fd> C<-1> (what L</fileno> returns for a handle without one)
turns notification off: the handle forgets its eventfd, closing it if it
created it, and returns C<-1>; L</notify> then does nothing and a later
L</eventfd> creates a new one. Croaks, naming the value, when C<$fd> is not
a number (C<fd must be a file descriptor number>), is negative but not
C<-1> (C<fd -2 is not a valid file descriptor>) or is not open
(C<fd 9: Bad file descriptor (os error 9)>).

=item fileno

    my $fd = $q->fileno;

The handle's eventfd, or C<-1> when it has none.

=item notify

    my $ok = $q->notify;

Adds one to the eventfd's counter, which makes it readable in every
process watching it. Returns true when it did; false, doing nothing, when
the handle has no eventfd. It never croaks: if the write fails, for
example because the descriptor was closed behind the handle's back, it
returns false with C<$!> set (C<EBADF> in that case).

=item eventfd_consume

    my $n = $q->eventfd_consume;

Reads the eventfd's counter and resets it to 0: returns the number of
notifications since the last call, and C<undef> when none is pending (the
read would block), as the C implementation did. Returns C<undef> too when
the handle has no eventfd, or, with C<$!> set, when the read fails: C<EBADF>
when the descriptor was closed behind the handle's back. A descriptor given
to L</eventfd_set> that is in blocking mode makes this call wait for a
notification instead of returning C<undef>; the ones L</eventfd> creates
never block.

=back

An eventfd is a number, not a Perl filehandle: L<EV> and L<IO::Select>
take the number as it is, and C<select> takes it in a bit vector. If you
wrap it in a filehandle (C<< open my $fh, '<&=', $fd >>), remember that
closing that filehandle, or letting it go out of scope, closes the
descriptor too. After that, C<notify> returns false and C<eventfd_consume>
C<undef> (with C<$!> set to C<EBADF>), nothing crashes, and a later
C<eventfd> keeps returning the dead number. Note also that a closed
number is soon reused by the next file you open, so close the eventfd
only when you are done with the handle.

=head2 With EV

    # fragment: handle() is yours (eg/ev-consumer.pl is a whole program)
    use EV;
    use Data::Queue::Shared::Str;

    my $q  = Data::Queue::Shared::Str->new('/tmp/events.shm', 1024);
    my $fd = $q->eventfd;

    my $w = EV::io $fd, EV::READ, sub {
        $q->eventfd_consume;
        while (defined(my $job = $q->pop)) {
            handle($job);
        }
    };
    EV::run;

    # In a producer (a process forked after $q->eventfd, see below):
    $q->push($job);
    $q->notify;

=head2 With select or IO::Select

    # fragment: $q is a queue, handle() is yours (see eg/select-loop.pl)
    my $fd  = $q->eventfd;
    my $rin = '';
    vec($rin, $fd, 1) = 1;
    while (1) {
        my $n = select(my $rout = $rin, undef, undef, 1.0);
        next unless $n > 0;                 # timeout, or EINTR
        $q->eventfd_consume;
        while (defined(my $job = $q->pop)) { handle($job) }
    }

    # or
    use IO::Select;
    my $sel = IO::Select->new($q->fileno);
    while (1) {
        next unless $sel->can_read(1.0);
        $q->eventfd_consume;
        while (defined(my $job = $q->pop)) { handle($job) }
    }

=head2 Across processes

An eventfd reaches another process by inheritance: create it before
C<fork>. A child that keeps using the handle it inherited has the eventfd
already and just calls C<notify>. A child that opens the queue again (by
path, or with L</new_from_fd>) gets a handle without one, and adopts the
inherited descriptor with L</eventfd_set>:

    # fragment: @batches holds the jobs, in array references
    my $q  = Data::Queue::Shared::Int->new('/tmp/batches.shm', 4096);
    my $fd = $q->eventfd;                   # before fork

    if (fork == 0) {
        my $p = Data::Queue::Shared::Int->new('/tmp/batches.shm', 4096);
        $p->eventfd_set($fd);               # the parent's eventfd
        for my $batch (@batches) {
            $p->push_wait($_) for @$batch;
            $p->notify;                     # once per batch
        }
        exit 0;
    }
    # the parent watches $fd as above

Every process holding the descriptor shares one counter. When several
consumers watch the same eventfd, a notify wakes all of them; one of them
reads the count and the others read C<0>, and all of them then pop, which
is what you want. The eventfd is close-on-exec, so a program you C<exec>
does not inherit it.

Two complete programs are in the distribution: F<eg/ev-consumer.pl> (an
EV loop fed by several producer processes) and F<eg/select-loop.pl> (a
C<select> loop and a forked producer).

=head1 FAST METHOD CALLS

Where C<use Data::Queue::Shared;> or the C<use> of a class module (such as
C<use Data::Queue::Shared::Int;>) is in effect, ordinary method calls on
the queues cost little more than the L</KEYWORDS>, with nothing to change
in the code:

    use Data::Queue::Shared::Int;

    my $q = Data::Queue::Shared::Int->new(undef, 1024);
    $q->push($_) for 1 .. 10;          # each call takes the short cut
    while (defined(my $v = $q->pop)) { print "$v\n" }

Calls of C<push>, C<pop>, C<peek>, C<size>, their C<_wait> and C<_multi>
forms, C<drain>, C<push_front>, C<pop_back> (and their C<_wait> forms),
C<capacity>, C<is_empty> and C<is_full>, written with a constant method
name, are compiled so that at run time they check, before anything else,
that the invocant is an object of exactly one of the four classes and that
the class's method of that name is still this module's own. When both
hold, the method is run without perl's method lookup and sub call; when
either does not (a subclass, another class with a method of the same name,
a redefined, C<local>ised or deleted method, a class name as invocant, a
tied invocant, code compiled under the debugger), the call is perl's
ordinary one. Either way the method does the same work: results, croak
messages and their line numbers, C<caller> inside a tied or overloaded
argument, signal handling, C<B::Deparse> output (apart from the lexical
hint itself, which it shows as for any pragma) and the debugger see no
difference.

Like a pragma, this holds from the C<use> to the end of the enclosing
block or file. C<use Data::Queue::Shared ();> (or C<require>) loads the
classes without it, and C<no Data::Queue::Shared;> turns it off for the
rest of its block. Calls through C<< $q->$name >>, C<< $q->can('pop') >>
or a fully qualified name (C<< $q->Data::Queue::Shared::Int::pop >>) are
always ordinary calls.

Counted with callgrind (instructions per pair, the loop included, perl 5.36,
x86_64), an Int push + pop pair through the methods costs about 715
instructions with it and 1,570 without; a keyword pair about 510.

=head1 KEYWORDS

When the module was built with L<XS::Parse::Keyword> available, each class
also offers four keywords, which do what the methods C<push>, C<pop>,
C<peek> and C<size> do without the cost of a method call:

    use Data::Queue::Shared::Int;           # enables the q_int_* keywords

    my $q = Data::Queue::Shared::Int->new('/tmp/keywords.shm', 1024);
    q_int_push $q, 42            or warn "full\n";
    my $job  = q_int_pop $q;                # undef when empty
    my $next = q_int_peek $q;
    my $n    = q_int_size $q;
    for my $i (1 .. 3) { q_int_push $q, $i }
    while (defined(my $v = q_int_pop $q)) { print "$v\n" }

    use Data::Queue::Shared::Str;           # and the q_str_* keywords
    my $sq = Data::Queue::Shared::Str->new(undef, 64);
    q_str_push $sq, "caf\x{e9}";
    my $s = q_str_pop $sq;
    $q->unlink;

The keywords of each class:

    Data::Queue::Shared::Int    q_int_push   q_int_pop   q_int_peek   q_int_size
    Data::Queue::Shared::Int32  q_int32_push q_int32_pop q_int32_peek q_int32_size
    Data::Queue::Shared::Int16  q_int16_push q_int16_pop q_int16_peek q_int16_size
    Data::Queue::Shared::Str    q_str_push   q_str_pop   q_str_peek   q_str_size

C<$Data::Queue::Shared::HAVE_KEYWORDS> is C<1> when the keywords were
built and C<0> when they were not; the methods are there either way.

=head2 Scope

C<use Data::Queue::Shared::Int;> enables the C<q_int_*> keywords from that
point to the end of the enclosing block or file, like a pragma, and only
there. C<no Data::Queue::Shared::Int;> disables them again for the rest of
its block. Each class enables only its own four keywords. Loading a class
with C<require>, or with C<use Data::Queue::Shared::Int ()>, enables
nothing. Where a keyword is not enabled, its name is an ordinary
identifier: a sub of that name is called as usual. The classes export
nothing; C<use Data::Queue::Shared::Int qw(...)> with any argument croaks.

=head2 Syntax

C<q_int_push> takes two expressions separated by a comma, the queue and
the value, like a list operator: C<q_int_push $q, $v or die ...> pushes
C<$v>. The other three take one expression and bind like a named unary
operator such as C<defined>: C<q_int_size $q == 0> compares the size, and
C<q_int_pop $q || 'none'> applies C<||> to the popped value. Parentheses
are optional and end the arguments: C<q_int_pop($q) + 1>. Keywords nest
(C<q_int32_push $out, q_int_pop $in>) and work anywhere an expression
does.

=head2 Behaviour

A keyword behaves as its method does: the same conversions (get-magic,
ties and overloading run exactly once, before the queue is touched), the
same results (C<push> returns true or false, C<pop> and C<peek> return the
item or C<undef>, C<size> a number; Int32 and Int16 truncate, Str restores
the UTF-8 flag) and the same errors. The queue must be a handle of the
keyword's class or of a subclass (C<q_int_pop> refuses an Int32 queue),
and croak messages name the keyword where the method's would name the
method:

    Data::Queue::Shared::Int->q_int_pop: invocant is not of type Data::Queue::Shared::Int
    Data::Queue::Shared::Int->q_int_push: the queue object has been destroyed
    Data::Queue::Shared::Str->q_str_push: cannot push undef

What differs is the cost. A method call looks the method up, sets up a
call frame and enters an XSUB (less of that with L</FAST METHOD CALLS>). A
keyword is compiled into a single op of its own that checks the handle and
calls the queue directly: no lookup, no sub call. A keyword call is never inherited or overridden, so a subclass
that overrides C<push> is not consulted by C<q_int_push>.

Measured with F<bench/keywords.pl> (C<perl -Mblib bench/keywords.pl>,
medians of 7 interleaved rounds of 1,000,000 push + pop pairs in one
process, perl 5.36, x86_64), an Int push + pop pair took 69 ns through
the methods and 26 ns through the keywords: 2.7 times the throughput
(3.3 times without the cost of the loop itself). Under callgrind the pair
costs about 1,545 instructions through the methods and 514 through the
keywords. For Str, where copying the string is a larger share of the
work, the gain is 1.7 times.

=head2 Building

The keywords need L<XS::Parse::Keyword> 0.33 or later. When
C<perl Makefile.PL> finds C<XS::Parse::Keyword::Builder>, it writes
F<XSParseKeyword.h> into the build directory and compiles them in; the
installed module then loads XS::Parse::Keyword at run time. Without it the
module builds and works the same, without keywords. Setting
C<DQS_NO_KEYWORDS=1> in the environment of C<perl Makefile.PL> builds
without them even when XS::Parse::Keyword is installed.

=head1 ERRORS

Methods croak (die) on bad arguments and on system errors; an empty or full
queue is never an error. Every message names the class and method, then the
file or descriptor concerned when there is one, then what went wrong, with
no trailing newline (so Perl appends your file and line):

    Data::Queue::Shared::Int->new: /tmp/q.shm: invalid or incompatible queue file (bad magic)
    Data::Queue::Shared::Int->unlink: cannot unlink anonymous or memfd queue
    Data::Queue::Shared::Int->new_from_fd: fd 3: invalid or incompatible queue file (too small: 0 bytes, a queue header alone is 320)
    Data::Queue::Shared::Str->push: string of 5001 bytes exceeds the arena of 5000 bytes
    Data::Queue::Shared::Str->push_multi: cannot push undef

Calling a method on something that is not a handle of the class croaks too,
as does calling it on a handle after it was destroyed.

After a croak C<$!> says why, so that C<die> (and a script that does not
catch the croak) exits with a status that matches the message:

=over 4

=item * a system call that failed (C<open>, C<mmap>, C<fallocate> ...):
its error, such as C<ENOENT>, C<EACCES> or C<ENOSPC>;

=item * a file or descriptor that is not a usable queue (C<invalid or
incompatible queue file>, C<too small>, an interrupted create), and an
argument refused by the queue itself (a capacity too large, a string
too long for the arena): C<EINVAL>, exit status 22;

=item * an operation that does not apply to the queue: C<EOPNOTSUPP>; an
item that cannot be decoded: C<EBADMSG>.

=back

A croak for an argument refused before the queue is touched (C<undef>, a
reference, a value that is not a number) leaves C<$!> as it was.

=head1 WAKE-UPS AND SIGNALS

A process that has to wait sleeps on a futex (see L<futex(2)>) in the shared
header: consumers on one word, producers on another. Before it looks at the
queue one last time and goes to sleep, it announces itself in a waiter
count, and every push or pop that could unblock it reads that count
afterwards; so a wake-up is never lost between the look and the sleep. When
the count is zero, which is the normal case for a busy queue, push and pop
make no system call at all. Before it announces itself, a waiter looks
again a few times, spinning, then yielding the CPU, since in a busy
stream the next item is usually a moment away; how many times adapts to
what the waits of this thread on this queue found: the looks double
(up to 128) when the item came during them or soon after the sleep began,
and halve (down to 4, a few hundred nanoseconds) when the sleep was
longer. So a worker waiting on an idle or slow queue costs about what a
process asleep in the kernel costs, and one in a busy stream keeps its
spin (see L</BENCHMARKS>). In the integer queues a push wakes one
sleeping consumer, a batch wakes as many as it made possible, and
L</clear> wakes every producer. The Str queue wakes producers more
generously; see L<Data::Queue::Shared::Str/WAKE-UPS>.

Perl signal handlers run while a process waits: a C<SIGALRM> or C<SIGINT>
interrupts the sleep, the handler runs as it would anywhere else, and if it
returns the wait goes on for whatever is left of the timeout (the deadline
is absolute, so signals neither extend nor shorten it). Perl defers its
handlers: the C-level handler only marks the signal pending. A wait looks
at that mark before each sleep and sleeps at most a quarter of a second at
a time, so a signal that arrives while the process is awake between two
sleeps is handled within that quarter second, not at the deadline. A
handler that dies leaves the wait cleanly; the process no longer counts as
a waiter. In a Str C<*_wait> call this covers the time spent waiting for
the queue's lock too. The non-blocking Str calls (C<push>, C<pop> and the
rest) do not run handlers while they wait for the lock; signals that arrive
meanwhile are handled when the call returns, and L<Data::Queue::Shared::Str/lock_timeout> bounds
how long that can be (see L<Data::Queue::Shared::Str/"THE LOCKS">).

For tests, the environment variable C<DQS_TEST_NO_SLICE>, when set (not
empty or C<0>) as the module loads, turns the quarter-second slices off:
a wait then ends only by a wake-up, a signal or its deadline, so a missed
wake-up costs the whole wait and a test notices it. Never set it in
production (a signal landing just before a sleep would wait for the
deadline).

=head1 FORK AND THREADS

A handle keeps working in a child made by C<fork>: file, anonymous and memfd
queues alike. Nothing is cached per process that a child could get wrong.
Destroying a handle only unmaps the memory and closes the handle's own
descriptor; it never changes the queue itself, so a child that exits (or a
parent that drops its handle) does not disturb anybody else. A child that
uses a Str handle it inherited takes the Str lock under its own process id.

Perl interpreter threads (ithreads) do not copy handles: every class has
C<CLONE_SKIP> set, so in a new thread a handle variable holds a reference
to an unblessed C<undef> (Perl's way of skipping an object), and calling a
method on it dies. Open the queue again inside the thread. A Str handle must never be used
by two threads at once (see L<Data::Queue::Shared::Str/"THE LOCKS">); integer handles may be.

=head1 SECURITY

=head2 What is guaranteed

=over 4

=item *

A new file is created with C<O_CREAT|O_EXCL|O_NOFOLLOW>, so a file that
C<new> reports as created is really new, and gets the mode you pass
(default C<0600>, owner only) exactly, by C<fchmod>: the umask neither
widens nor narrows it.

=item *

An existing file is turned into a new queue only when it is empty (length
zero) or is the all-zero file an interrupted create leaves (see
L</CRASH SAFETY>), B<and> your effective uid owns it. It then gets the mode
you pass, by C<fchmod>, before a byte of the queue is written. A file of
either kind owned by anybody else is refused and left exactly as it was:

    Data::Queue::Shared::Int->new: /tmp/x/q.shm: refusing to initialize file
    not owned by us (owner uid 65534, we are uid 0): Operation not permitted
    (os error 1)

The owner of a file can always read it, write it and change its mode, so
a queue made in a file somebody else planted would be theirs to read and
to forge. This holds for root too, and for C<dqs create> and the Rust and
C interfaces, which share the code.

=item *

A symlink at the path is refused (C<O_NOFOLLOW>), and so is anything that
is not a regular file: a directory, a FIFO (opened non-blocking, so C<new>
does not hang on it), a device or a socket, each with C<invalid or
incompatible queue file> and what it is.

=item *

The header of every file or descriptor is checked once when it is
attached, with overflow-checked arithmetic against the real file size, and
every index read from shared memory afterwards is masked into range: a
damaged or hostile file gives a croak, never an access outside the mapping.

=item *

Memfds are close-on-exec and sealed against resizing, and so are the
duplicates L</new_from_fd> makes close-on-exec, so a program you C<exec>
inherits none of them.

=back

=head2 What is not

=over 4

=item *

A file that already holds a valid queue is attached whoever owns it and
whatever its mode, group- or world-writable included: that is how users
share a queue (a file made with mode C<0660> for a group, say). So in a
directory where others may create files, such as F</tmp>, somebody who
creates a queue at your path before you do owns the queue you attach to,
and reads and forges everything in it. Keep queue files in a directory
that only trusted users can write to (a C<0700> directory of your own, or
C<$XDG_RUNTIME_DIR>), or use L</new_memfd> and pass the descriptor on.

=item *

Only the last component of the path is protected against symlinks: the
directories on the way are followed as the system finds them, symlinks
included. They have to be trustworthy too.

=item *

Any process that can write to the queue (the file, the memfd, or a mapping
inherited across C<fork>) can change its items and counters. Validation
keeps your process from crashing or reading outside the mapping, not from
getting wrong items, losing some, or waiting on a queue that a hostile
writer keeps full or empty. Anybody who can read the file reads every
item. Give access only to processes you trust with the data.

=item *

A file that is already a queue keeps its own mode: C<$mode> is ignored
then, and nothing warns about a mode wider than you asked for.

=item *

C<new> takes an exclusive C<flock> on the file while it checks or creates
it, so any process that can open the file can make C<new> wait for as long
as it holds that lock.

=item *

L</unlink> (and C<dqs unlink>) removes whatever is at the path, without
opening or checking it first.

=back

=head1 CRASH SAFETY

The integer queues hold no lock. A push reserves its position (a batch:
its run of positions) with one atomic compare-and-swap of the queue's
C<tail> and then stores its values; a pop claims its position (or run)
with one compare-and-swap of C<head> and then frees the slots (see
L<Data::Queue::Shared::Format/SLOTS>). Before that compare-and-swap each
process notes the positions it is about to take in its own intent record
in the queue, with its process id and start time. A process killed at any
instruction (C<SIGKILL>, the OOM killer, a crash) either took nothing, or
leaves positions it owns and never finished: a push's unfilled positions,
or a pop's slots not yet freed. Those are repaired by the others, and only
once the owner is dead: a consumer that reaches an unfilled position, or a
producer that reaches an unfreed slot, waits a moment, then looks up the
owner in the records; if no live process owns the position, it gives the
position up (a push's item that was never stored is lost with its
producer) or frees the slot (the items a consumer had claimed go with it,
as any item a consumer dies holding), counts it in C<recoveries> and goes
on. Nothing else is lost, nothing comes out twice, and each producer's
items keep their order. An item taken with C<pop_lease> (see L</Leases>)
comes back instead.

A process that is alive but stopped (C<SIGSTOP>, a debugger) or merely
slow is never repaired: the positions it owns wait for it, as a lock it
held would, and the others see the queue full or empty there (waits keep
waiting, non-blocking calls return false or C<undef>). A process stopped in
the few instructions between noting its positions and taking them holds up
repairs of those positions too. Liveness is decided as for the Str lock
(C<kill(pid, 0)>, then the state and start time in C</proc/E<lt>pidE<gt>/stat>), so
processes sharing a queue must share a pid namespace, and repairing a dead
peer needs its C</proc> entry readable: a peer whose entry cannot be read
(no C</proc> mounted, C<hidepid>) while its pid exists counts as alive, so
a dead peer's positions then wait until its pid is gone.

Each thread of each process holds one intent record per queue handle it
uses, given back when the handle is destroyed and reused once the thread
has ended or the process has died. A queue has 31; beyond that, threads take turns on one spare
record, and a thread that cannot get it within a moment (its holder is
stopped, say) sees the queue full or empty for that call (non-blocking
calls return false or C<undef>, waits try again until their deadline).

A process killed while it sleeps in a C<*_wait> call cannot take back its
place in the waiter count. Until the count is corrected the other side
makes a useless C<FUTEX_WAKE> system call per operation; after 64 such
calls in a row that woke nobody, by any processes, the count is reset and
every sleeper woken, and the live ones count themselves again (see
L<Data::Queue::Shared::Format/SLOTS> for the details). Waiters that are alive are woken as usual
throughout.

A queue file that another process truncates (C<truncate>, C<ftruncate>,
or a C<cp> over it) while it is mapped kills every process that then
touches a page past the new end with C<SIGBUS>, as it does with every
design that shares memory through a mapped file: the kernel has no page to
give. Nothing in the queue can check for it first. Keep queue files where
only their users can write them (see C<$mode> under L</new>). A queue in a
memfd (L</new_memfd>) is sealed against shrinking and growing
(C<F_SEAL_SHRINK>, C<F_SEAL_GROW>): a truncate of it fails with C<EPERM>.

The Str queue holds a lock for a few instructions in every operation:
the back lock for a push, the front lock for a pop, both for
C<push_front>, C<pop_back>, C<clear> and the lease calls. A process
killed while holding one (C<SIGKILL>, the OOM killer, a crash) is
detected by the next process that needs that lock, which takes it over
within about 10 ms (see L<Data::Queue::Shared::Str/"THE LOCKS">) and
counts it in C<recoveries> (once per lock; meanwhile the other end goes
on). The queue it finds is consistent: every item is either wholly
present or absent, C<arena_used> matches the items, and C<push_ok> and
C<pop_ok> match what happened. That is because an operation never
changes the queue's state in place one field at a time; each end keeps
its own state, and every operation commits the state of one end:

=over 4

=item 1.

A push copies its bytes into arena space that no item owns and fills a
slot outside the live range. Nothing refers to them yet; dying here loses
only the push. A pop copies the item's bytes out; they stay its own until
step 3.

=item 2.

The end's counters are written to the copy of its state that is not
current. Each end keeps two copies, and nobody reads the other one; dying
here leaves the current copy, the state before the operation, as it was.

=item 3.

One store of the end's word (its position, its byte count and which copy
is current) commits the operation, and the lock is released.

=back

So whoever takes a lock next, after a death or not, reads one committed
state of that end and has nothing to replay or repair. A holder that
died before the store of step 3 leaves the old state current: its
operation did not happen. One that died after it leaves the new state
current: its operation happened. A pop writes nothing but its end's
state, so a pop killed after the store has removed its item, which its
caller never received, as with any consumer killed after a pop. The
counters C<push_full>, C<pop_empty>, C<lock_acquired>, C<lock_contended>
and C<cleared> are outside the state and may miss a count.
L<Data::Queue::Shared::Format/"STR QUEUES"> describes the two ends.

For tests, the environment variable C<DQS_TEST_KILL_POINT> makes a process
C<SIGKILL> itself at a chosen point. Never set it in production. For a Str
queue it is read when a handle is created or attached: C<str_lock_held>
(just after taking every lock the operation takes), C<str_after_bytes>
(a push has written its bytes and slot), C<str_mid_commit> (part of the
new state copy is written; the old copy is still current, so the
operation did not happen) or C<str_after_commit> (the new copy is current
and the lock is still held, so the operation happened) or
C<str_after_reset> (a C<push_front> into an arena holding no bytes has
committed the back end's write offset moved to 0, and not yet itself);
C<str_lock_stop> makes the process C<SIGSTOP> itself holding its locks
instead. For an
integer queue, also read when a handle is made: C<int_push_recorded> (a
push, single or batch, has noted its positions in its intent record and
not yet reserved them), C<int_push_claimed> (it has reserved them with
C<tail> and stored nothing), C<int_push_mid_run> (a batch push of two or
more has filled the first position of its run only), C<int_pop_recorded>,
C<int_pop_claimed> (a pop has claimed its items with C<head> and freed no
slot) and C<int_pop_mid_run> (a batch pop has freed the first slot of its
run only). An integer point name followed by C<:stop>
(C<int_push_claimed:stop>) makes the process C<SIGSTOP> itself there
instead, and go on after C<SIGCONT>. When a file is created: C<create_after_reserve> (the
new file is sized and its space reserved, nothing written yet) and
C<create_before_magic> (the header written, all but the magic).

A create that was interrupted is handled as follows. The header's magic
number is written last, so a creator killed after sizing the file leaves a
full-size file of zeros. C<new> initialises such a file again when it is
exactly the size the requested geometry needs, belongs to the effective uid
of the caller and holds nothing but zero bytes. If the creator got as far as
part of the header, the file cannot be told from a damaged one, and C<new>
croaks with C<incomplete queue file left by an interrupted create; remove it
and retry>. A file that has ever held data is never initialised again.
Before you delete a file that gives this croak, make sure it really is an
abandoned create: a header damaged later gives the same message.

=head1 COMPATIBILITY

This module replaces the C implementation of C<Data::Queue::Shared> (the
XS module it grew from, up to its version 0.12) for Perl code: the classes,
methods, arguments and return values are those of 0.12, and this release
is numbered 0.20 so that C<use Data::Queue::Shared 0.12;> (or 0.06, which
added the mode argument) loads it. Where the specification of the
interface says nothing, the behaviours below were decided one by one.

=head2 Kept as the C implementation had them

These are harmless and scripts may rely on them, so they stay:

=over 4

=item *

A negative count to C<pop_multi>, C<pop_wait_multi> or C<drain> (C<-1>,
say) means no limit: it takes everything there is. (C<0> takes nothing.)

=item *

C<push_wait_multi> takes its timeout as a required first argument, read
as a number: C<undef> is C<0>, one try without sleeping, not a wait
without end. (The optional timeouts of the other C<*_wait> methods still
wait as long as it takes when omitted or C<undef>.)

=item *

C<eventfd_set(-1)> turns notification off instead of croaking; C<-1> is
what C<fileno> returns for a handle without an eventfd.

=item *

C<eventfd_consume> returns C<undef>, not C<0>, when nothing is pending.

=item *

In the integer queues the items C<clear> removes count in C<pop_ok>, so
C<push_ok - pop_ok> is always the size. In a Str queue they do not, as
there.

=item *

An empty string is an item that takes a slot and no arena bytes: it can be
pushed into an arena that is exactly full.

=item *

A handle can be re-blessed into a subclass (C<bless $q, 'My::Queue'>).

=item *

Errors for files and descriptors that are not queues contain the words
C<invalid or incompatible> (and C<too small> for one too short for a
header), which log filters match, followed here by the precise reason.
The refusal to initialise a file somebody else owns keeps its wording,
C<refusing to initialize file not owned by us>, and adds the owner's uid.

=back

=head2 Different on purpose

=over 4

=item *

The queue files are not interchangeable. The on-disk format here is this
module's own (see L<Data::Queue::Shared::Format>), and a process of one implementation
cannot attach to a queue of the other, by path or by descriptor. A file
made by the C implementation (it starts with the 32-bit word
C<0x51554531>, then its format version 1 or 2) is recognised and refused
with

    Data::Queue::Shared::Int->new: /tmp/q.shm: invalid or incompatible
    queue file (a queue file of another version of Data::Queue::Shared (the
    C implementation, its format 2); remove it and create it again)

Drain such a queue with the old module, remove the file, and let C<new>
create it again, as its own 0.12 asked of files from its 0.08.

=item *

Counts and capacities are never cut to 32 bits. The C implementation
turned a capacity of C<2**32 + 2> into C<2> and a C<pop_multi> count of
C<2**32 + 1> into C<1>; here the capacity croaks as out of range and the
count takes everything there is.

=item *

A path with a NUL byte croaks (the C implementation used the part before
the NUL, a different file), and so does a reference given as a path (it
used the text C<ARRAY(0x...)> as a file name).

=item *

C<pop_wait_multi(0)> returns an empty list and removes nothing; the C
implementation removed an item and lost it.

=item *

An integer queue refuses what it cannot store as given: C<NaN>,
infinities, numbers outside the signed 64-bit range and strings that are
not numbers croak (see L</push>), in every push method and keyword, and a
batch croaks before pushing any of its values. The C implementation
stored C<2**63> and C<-2**64> as C<-2**63>, C<2**64 - 1> and C<Inf> as
C<-1>, C<NaN> and C<"abc"> as C<0> (with only Perl's C<isn't numeric>
warning for the string), so a job id could turn into another one.
Fractions are still cut off toward zero, and Int32 and Int16 still keep
the low bits of any value within 64 bits. An object whose overloading has
no conversion (C<0+>, C<""> or C<bool>) croaks as a reference, where its
address was stored.

=item *

After a croak, C<$!> holds the error that belongs to it (see L</ERRORS>):
C<EINVAL> for a file that is not a queue, where it was whatever the last
internal system call had left (C<EEXIST>, so that C<die> exited with
17).

=item *

A Str batch push (C<push_multi>, C<push_wait_multi>) with a string that
could never fit in the arena croaks before anything is pushed; the C
implementation pushed the strings before it, then croaked, and left half a
batch in the queue.

=back

=head1 RUST AND C

The engine is the Rust crate C<data-queue-shared> in this distribution,
usable on its own: C<< IntQueue<i64> >>, C<< IntQueue<i32> >>, C<< IntQueue<i16> >>
and C<StrQueue> are the four classes, with the same semantics (C<cargo doc
--open> shows its documentation). Its C interface,
F<include/data_queue_shared.h>, is generated when the crate is built and
documents every C<dqs_*> function: return values, who owns what, threads
and C<fork>. Programs in any of the three languages can share one queue
file at the same time, blocking waits and wake-ups included; F<examples/>
has a Rust producer and consumer and a C pair (F<examples/c/>), which the
tests F<t/60-interop-rust.t> and F<t/61-interop-c.t> run against Perl.
A Str item's UTF-8 flag is stored with it and comes back in every
language: a Perl string with the flag pops in Rust or C with the flag set,
and the bytes are Perl's internal (UTF-8) form of the string.

=head1 ON-DISK FORMAT

The layout of a queue in memory and in its file (header, slots, the Str
arena, the lock word, the slot protocol and the waiter protocol, and how
the format is versioned) is on its own page,
L<Data::Queue::Shared::Format>, for programs in other languages that
attach to the same queues. The format is stable within a format version;
a process refuses a queue of any other version (see
L<Data::Queue::Shared::Format/VERSIONING>).

=head1 BENCHMARKS

Two benchmarks come with the distribution. From a built tree:

    perl -Mblib bench/vs.pl            # Perl: this module against other queues
    perl -Mblib bench/vs.pl 200000 3   # N items per case, 3 runs, medians
    cargo bench                        # Rust: the engine alone (criterion)

The first command of the README's Quick start builds and runs both.
Three smaller ones measure one thing each (L</"Other benchmarks">).
Their results, which belong to the machine they ran on, are in
F<bench/RESULTS.pod> (see L</Results>).

=head2 bench/vs.pl

It runs every case in one process tree, on the machine at hand, and
prints:

=over 4

=item *

Two lines about the run: the module and perl versions and C<N> (the items
moved per case; default 200000), then the machine: CPU model, online
cores, kernel. Compare numbers only between runs with the same machine
line.

=item *

Five sections: single-process integer push+pop (one push then one pop,
C<N> times, on one queue); the same with a 50-byte string; batches of 100
integers (C<push_multi> then C<pop_multi>, or the peer's nearest batch
API); and two cross-process sections, one producer process and one
consumer process moving C<N> integers, then C<N> 50-byte strings, each
side blocking when it must (C<push_wait>/C<pop_wait> here, each peer's own
blocking call there), timed from the fork to the last item; the rows
C<(batches of 100)> move the same items in batches. Very slow peers move
fewer items than C<N>; the rate is comparable all the same.

=item *

A sixth section, C<CROSS-PROCESS, NON-BLOCKING>, is the pattern of the
original module's own benchmark, so that its published cross-process
numbers can be set beside ours: a forked child pushes C<N> items with the
non-blocking C<push>, retrying while the queue is full, and the parent
pops non-blocking until it has C<N>, on a queue of 1,048,576 slots
(created before the timer starts), integers and 50-byte strings. Its
L<MCE::Queue> rows are measured as that benchmark measures them: one MCE
worker enqueues all C<N> items, the manager runs it to completion, then
drains the queue with C<dequeue_nb>; each of our rows is compared with
the MCE row of the same kind of item. The last line is the median, over
the runs, of our string rate divided by our integer rate in the same run.
C<DQS_BENCH_SECTION=NON-BLOCKING> (a pattern matched against the section
titles) runs that section alone.

=item *

A last section, C<IDLE WAIT>, measures what a blocked consumer costs: a
forked consumer waits in its blocking call while the parent hands it one
item per millisecond for C<DQS_IDLE_SECS> seconds (default 10, so the
section takes about a minute per run), and the row is the consumer's own
CPU time (user and system, from F</proc/self/schedstat>, else C<times>)
as a percentage of one core. The floor is a consumer asleep in the
kernel, woken by the same producer: a pipe C<read> and, when installed,
L<IPC::Msg>'s C<msgrcv>. Our rows are C<pop_wait> of C<Int> and C<Str>;
the Str row also shows the lock acquisitions per item delivered (the
change of C<lock_acquired>, the producer's pushes included, so 2.00 is
one lock per push and one per pop). The L<MCE::Queue> row measures the
manager waiting in C<dequeue> while one worker enqueues.
C<DQS_BENCH_SECTION=IDLE> runs it alone.

=item *

In each section one row per queue, fastest first: items per second, and
the ratio to L<MCE::Queue> in the same section (C<1.0x>). Our classes
appear as method calls and, when the keywords were built, as keywords.
Peers: L<MCE::Queue>, L<Thread::Queue>, L<IPC::Msg> (SysV message
queues), L<POSIX::RT::MQ>, L<Forks::Queue> and L<IPC::Transit>; one that
is not installed, or has no API for a section, gets a C<skipped:> line
saying why.

=back

With C<RUNS> above 1, the cases of a section run interleaved, C<RUNS>
times each, and each row shows the median.

=head2 criterion

C<cargo bench> runs F<benches/ring.rs> (single-process: a push+pop pair
per variant, batches of 100, Str push+pop pairs of 8, 50 and 1024 bytes,
with crossbeam's C<ArrayQueue> as the in-process reference: of C<i64> for
the integer pairs, of C<< Vec<u8> >> (a heap copy per push) for the string
pair; and the group C<floor>, the locked instructions that a pair cannot
do without, timed alone: two compare-and-swaps, as in every MPMC push+pop,
and a 16-byte one plus an 8-byte one, as in an Int push+pop before
format 7, and the batch lever: two compare-and-swaps and plain stores for
100 items) and
F<benches/cross_process.rs> (forked producers and consumers: SPSC and two
producers with two consumers, integers and 50-byte strings). Criterion
prints a time per iteration for each; it keeps its data under
F<target/criterion/>, and compares each run with the previous one there.
C<cargo bench --bench ring -- str_pair> runs one group.

=head2 Other benchmarks

    perl -Mblib bench/keywords.pl [--class=Int|Int32|Int16|Str] [N [ROUNDS]]
    perl -Mblib bench/compress.pl [ITEMS [ROUNDS [LEVEL]]]
    perl -Mblib bench/signal_delay.pl [TRIALS [TIMEOUT]]

F<bench/keywords.pl> times a push + pop pair through the L</KEYWORDS>
against the same pair through method calls, in one process (interleaved
rounds, medians, and the cost of the empty loop); with C<--only=keyword>
(or C<method>, C<empty>) it runs one form alone, for instruction counts
under callgrind. F<bench/compress.pl> measures what Str compression buys
(see L<Data::Queue::Shared::Str/COMPRESSION>): arena bytes per item and
items in a 1 MiB arena, plain and compressed, and the throughput of one
producer and one consumer process moving the documents, on two corpora
of JSON objects generated from a fixed seed. F<bench/signal_delay.pl>
measures how long a Perl signal handler waits when its signal arrives
while C<pop_wait> sleeps on an empty queue. The opening comment of each
script says more.

=head2 Results

Measured numbers belong to one machine and one day, so they are not in
this manual: F<bench/RESULTS.pod> in the distribution holds the last
runs of F<bench/vs.pl>, of C<cargo bench --bench ring> and of
F<bench/compress.pl> on the development machine, with what the numbers
show (C<perldoc bench/RESULTS.pod> in an unpacked tarball or a checkout).
The measurements behind the L</KEYWORDS> and the L</"FAST METHOD CALLS">
are given where those are described.

=head1 SEE ALSO

L<MCE::Queue>, L<POSIX::RT::MQ>, L<IPC::Msg>, L<Forks::Queue> (other ways to
pass work between Perl processes), L<XSLoader>, L<futex(2)>,
L<memfd_create(2)>, L<mmap(2)>.

The Rust crate C<data-queue-shared> in this distribution is the engine; its
C interface is in F<include/data_queue_shared.h>, generated at build time.

=head1 AUTHOR

Data::Queue::Shared developers

=head1 LICENSE

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
