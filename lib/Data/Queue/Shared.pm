package Data::Queue::Shared;
use strict;
use warnings;

our $VERSION = '0.01';

require XSLoader;
XSLoader::load('Data::Queue::Shared', $VERSION);

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

Signed 32-bit integers, 8 bytes per slot. A value outside the range is
truncated the way a C cast to C<int32_t> truncates it: C<< 2**32 + 5 >>
comes back as C<5>, C<2**31> as C<-2147483648>.

=item Data::Queue::Shared::Int16

Signed 16-bit integers, 8 bytes per slot, truncated like a cast to
C<int16_t> (C<65537> comes back as C<1>).

=item Data::Queue::Shared::Str

Byte and character strings; see L</Data::Queue::Shared::Str>.

=back

The three integer classes have the same methods, described once below with
C<Int> standing for any of them. Every argument is converted (to a number,
or to a string for paths and names) before the queue is touched, so a tied
or overloaded argument runs its code first, and a die inside that code
leaves the queue as it was.

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
existing file of length zero is initialised as if it had just been created.
A file holding another variant, another format or a damaged header croaks:

    Data::Queue::Shared::Int->new: /tmp/q.shm: invalid or incompatible queue file

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

    Data::Queue::Shared::Int->new_from_fd: fd 3: too small for a queue (0 bytes)
    Data::Queue::Shared::Int->new_from_fd: fd 3: invalid or incompatible queue file

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
a list, which is empty when the queue was (or when C<$count> is 0 or less).
Wakes as many sleeping producers as slots it freed.

=item push_wait_multi

    my $n = $q->push_wait_multi($timeout, @values);

Pushes every value in order, sleeping whenever the queue is full, until all
are in or the timeout passes. Note that the timeout comes first; pass
C<undef> or C<-1> to wait as long as it takes. Returns the number pushed,
which is less than C<scalar @values> only on timeout.

=item pop_wait_multi

    my @values = $q->pop_wait_multi($count);
    my @values = $q->pop_wait_multi($count, $timeout);

Sleeps until at least one item is there (or the timeout passes), then pops
up to C<$count> items without sleeping again. Returns the list, empty on
timeout.

=item drain

    my @values = $q->drain;
    my @values = $q->drain($max);

Pops everything that is in the queue, or at most C<$max> items (C<undef>
means no limit, 0 or less means none), without blocking, and returns the
list (oldest first). Items pushed while C<drain> runs may or may not be
included.

=back

=head2 State

=over 4

=item size

    my $n = $q->size;

The number of items in the queue at one instant. With other processes
working on the queue it is a snapshot that may be stale when you read it;
it is never negative and never above the capacity.

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

Bytes mapped: the 256-byte header plus the slots.

=item push_ok, pop_ok

Items pushed and popped since the queue was created, by all processes.
Items removed by L</clear> are not counted as popped.

=item push_full, pop_empty

Non-blocking attempts that found the queue full or empty, and waits that
timed out full or empty.

=item recoveries

Crash recoveries performed (always 0 for the lock-free integer queues).

=item push_waiters, pop_waiters

Producers and consumers asleep in a C<*_wait> method right now.

=back

While other processes are busy the numbers are read one at a time and need
not agree with each other. Once every process has finished, C<push_ok> and
C<pop_ok> are exact: with nothing cleared, C<push_ok - pop_ok == size>.

=back

=head2 Management

=over 4

=item clear

    $q->clear;

Pops every item and throws it away, then wakes every producer that sleeps in
a C<*_wait> method so it can use the room. Returns nothing. Cleared items do
not count as C<pop_ok>. The ring stays lock-free, so an item pushed by
another process while C<clear> runs may survive it.

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

=head1 Data::Queue::Shared::Str

A queue of strings is being built under its own issue. Until it lands,
C<Data::Queue::Shared::Str> exists so that code can refer to it, and its
constructors croak C<not implemented>.

=head1 ERRORS

Methods croak (die) on bad arguments and on system errors; an empty or full
queue is never an error. Every message names the class and method, then the
file or descriptor concerned when there is one, then what went wrong, with
no trailing newline (so Perl appends your file and line):

    Data::Queue::Shared::Int->new: /tmp/q.shm: invalid or incompatible queue file
    Data::Queue::Shared::Int->unlink: cannot unlink anonymous or memfd queue
    Data::Queue::Shared::Int->new_from_fd: fd 3: too small for a queue (0 bytes)

Calling a method on something that is not a handle of the class croaks too,
as does calling it on a handle after it was destroyed.

=head1 WAKE-UPS AND SIGNALS

A process that has to wait sleeps on a futex (see L<futex(2)>) in the shared
header: consumers on one word, producers on another. Before it looks at the
queue one last time and goes to sleep, it announces itself in a waiter
count, and every push or pop that could unblock it reads that count
afterwards; so a wake-up is never lost between the look and the sleep. When
the count is zero, which is the normal case for a busy queue, push and pop
make no system call at all. A push wakes one sleeping consumer; a batch
wakes as many as it made possible; L</clear> wakes every producer.

Perl signal handlers run while a process waits: a C<SIGALRM> or C<SIGINT>
interrupts the sleep, the handler runs as it would anywhere else, and if it
returns the wait goes on for whatever is left of the timeout (the deadline
is absolute, so signals neither extend nor shorten it). A handler that dies
leaves the wait cleanly; the process no longer counts as a waiter.

=head1 FORK AND THREADS

A handle keeps working in a child made by C<fork>: file, anonymous and memfd
queues alike. Nothing is cached per process that a child could get wrong.
Destroying a handle only unmaps the memory and closes the handle's own
descriptor; it never changes the queue itself, so a child that exits (or a
parent that drops its handle) does not disturb anybody else.

Perl interpreter threads (ithreads) do not copy handles: every class has
C<CLONE_SKIP> set, so in a new thread the handle variables are C<undef>.
Open the queue again inside the thread.

=head1 SECURITY

New files are mode C<0600> unless you pass another mode, and the mode you
pass is applied as given, whatever the umask. A file that already exists
keeps its own permissions. C<O_NOFOLLOW> makes C<new> refuse a symlink
planted at the path, and C<O_EXCL> makes sure a file it reports as created
is really new. Memfds are close-on-exec, and so are the duplicates made by
L</new_from_fd>, so a program you C<exec> inherits none of them.

The header of every file or descriptor is checked once when it is attached,
with overflow-checked arithmetic against the real file size, and every
index read from shared memory afterwards is masked into range: a damaged or
hostile file gives a croak, never an access outside the mapping. Still, any
process that can write to the queue can change its items and counters; give
write access only to processes you trust with the data.

=head1 CRASH SAFETY

The integer queues hold no lock, so a process killed at any moment leaves
no lock behind. Killing one in the few instructions between claiming a slot
and publishing it does leave that slot unfinished, and consumers that reach
it wait for it; stop producers and consumers with a signal they handle, not
with C<SIGKILL>, if that matters to you.

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

=head1 ON-DISK FORMAT

The format is meant to be read by other languages. All integers are native
little-endian (Linux on x86-64 and AArch64); fields marked atomic are updated
with atomic instructions by the processes using the queue. The file (or
memfd, or anonymous mapping) is a 256-byte header, then C<capacity> slots,
and nothing else: its size is exactly C<256 + capacity * slot_size>.

=head2 Header

The header is four 64-byte cache lines: the geometry (written once), the
consumer side, the producer side, and the rarely written fields. Unlisted
bytes are zero padding.

    offset type  field          meaning
    ------ ----  -------------  ------------------------------------------
         0 u64   magic          "DQSHARE1" read as a little-endian u64
                                (0x3145524148535144); 0 until initialised
         8 u32   version        format version, 1
        12 u32   variant        1 Int, 2 Int32, 3 Int16, 4 Str
        16 u64   capacity       slot count, a power of two, 2 .. 2**30
        24 u32   slot_size      16 (Int, Str) or 8 (Int32, Int16)
        28 u32   header_size    256
        32 u64   slots_off      offset of slot 0, 256
        40 u64   arena_off      Str: offset of the string arena, else 0
        48 u64   arena_cap      Str: arena bytes, else 0
        56 u64   total_size     bytes in the mapping
        64 u64   head           atomic: next position to pop
        72 u64   pop_empty      atomic: pops that found it empty
        80 u64   str_pop_ok     Str: items popped
        88 u64   arena_rd       Str: arena read offset
       128 u64   tail           atomic: next position to push
       136 u64   push_full      atomic: pushes that found it full
       144 u64   str_push_ok    Str: items pushed
       152 u64   arena_wr       Str: arena write offset
       160 u64   arena_used     Str: arena bytes in use
       192 u32   pop_waiters    atomic: consumers asleep
       196 u32   pop_futex      futex word consumers sleep on
       200 u32   push_waiters   atomic: producers asleep
       204 u32   push_futex     futex word producers sleep on
       208 u32   lock           Str: lock word
       216 u64   recoveries     crash recoveries
       224 u64   cleared        items removed by clear
       232 u64   lock_acquired  Str: lock acquisitions
       240 u64   lock_contended Str: acquisitions that had to wait

For the integer queues C<push_ok> is C<tail> and C<pop_ok> is
C<head - cleared>; C<head> and C<tail> only grow, and C<tail - head> is the
size.

=head2 Slots

    variant  size  layout
    -------  ----  -----------------------------------------
    Int       16   u64 seq, i64 value
    Int32      8   u32 seq, i32 value
    Int16      8   u32 seq, i16 value, u16 padding

Slot C<i> (counting from 0 at C<slots_off>) serves every position C<p> with
C<p & (capacity - 1) == i>. The rules are those of Dmitry Vyukov's bounded
MPMC queue:

=over 4

=item *

At creation slot C<i> has C<seq = i>.

=item *

A producer may use position C<p> when its slot has C<seq == p>. It claims
C<p> by advancing C<tail> from C<p> to C<p + 1> with compare-and-swap,
writes the value, then stores C<seq = p + 1> with release ordering.

=item *

A consumer may use position C<p> when its slot has C<seq == p + 1>. It
claims C<p> by advancing C<head> the same way, reads the value, then stores
C<seq = p + capacity> with release ordering, freeing the slot for the next
lap.

=item *

Readers of C<seq> use acquire ordering. The 32-bit sequences of Int32 and
Int16 hold the low 32 bits of the position and are compared with wrapping
arithmetic; capacity is capped at C<2**30> so that stays unambiguous.

=back

The claims of C<head> and C<tail> are sequentially consistent, and so is
the waiter protocol: a consumer about to sleep increments C<pop_waiters>,
reads C<pop_futex>, checks the queue once more, then calls C<FUTEX_WAIT> on
C<pop_futex> with the value it read and decrements C<pop_waiters> when it
wakes. A producer that sees C<pop_waiters> non-zero after its push
increments C<pop_futex> and calls C<FUTEX_WAKE> on it. The futexes are
shared, not process-private. Producers waiting for room use C<push_waiters>
and C<push_futex> the same way.

=head1 BENCHMARKS

The comparison with other Perl queues and IPC modules is produced by
C<perl -Mblib bench/vs.pl>; its results will be recorded here.

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
