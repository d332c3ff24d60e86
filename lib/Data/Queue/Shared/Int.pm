package Data::Queue::Shared::Int;
use strict;
use warnings;

use Data::Queue::Shared ();

our $VERSION = '0.20';

# `use Data::Queue::Shared::Int;` enables the q_int_* keywords in the
# lexical scope being compiled (when they were built: see
# $Data::Queue::Shared::HAVE_KEYWORDS); `no Data::Queue::Shared::Int;`
# disables them again.
sub import   { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 1, @_) }
sub unimport { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 0, @_) }

1;

__END__

=encoding utf8

=head1 NAME

Data::Queue::Shared::Int - the integer queues: constructors, methods, event loops and keywords

=head1 SYNOPSIS

    use Data::Queue::Shared::Int;

    my $q = Data::Queue::Shared::Int->new('/tmp/int64.shm', 1024);
    $q->push(-5) or warn "queue full\n";
    $q->push_multi(1 .. 3);
    my $v    = $q->pop;                  # -5; undef when empty
    my @rest = $q->pop_multi(10);        # (1, 2, 3)
    $v = $q->pop_wait(0.5);              # undef after 0.5 s of nothing
    printf "%d of %d\n", $q->size, $q->capacity;
    $q->unlink;

=head1 DESCRIPTION

This is the reference of the three integer classes, which differ only in
the width of their values:

=over 4

=item Data::Queue::Shared::Int

Signed 64-bit integers (C<-2**63> to C<2**63 - 1>), 16 bytes per slot.

=item Data::Queue::Shared::Int32

Signed 32-bit integers, 8 bytes per slot; a value outside that range
wraps around as a C cast to C<int32_t> does (see
L<Data::Queue::Shared::Int32>).

=item Data::Queue::Shared::Int16

Signed 16-bit integers, 8 bytes per slot, wrapping around as a cast to
C<int16_t> does (see L<Data::Queue::Shared::Int16>).

=back

They have the same methods, described once below with C<Int> standing for
any of them. A value is taken as an integer (numified once; an object with
numeric overloading is fine).

The string class, L<Data::Queue::Shared::Str>, has these methods too; its
page gives what differs for it and what it adds. The L</"EVENT LOOPS">,
L</"FAST METHOD CALLS"> and L</KEYWORDS> described here are the same for
all four classes. What all classes share beyond their methods (errors,
signals, fork, security, crash safety, compatibility with the C
implementation) is on the overview page, L<Data::Queue::Shared>.

Loading this module loads L<Data::Queue::Shared>, which defines all the
classes, and enables the C<q_int_*> keywords in the scope of the C<use>
(see L</KEYWORDS>).

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
L<Data::Queue::Shared/SECURITY>):

    Data::Queue::Shared::Int->new: /tmp/q.shm: refusing to initialize file
    not owned by us (owner uid 65534, we are uid 1000): Operation not
    permitted (os error 1)

Anything at the path that is not a usable queue croaks with the words
C<invalid or incompatible queue file> and the reason in parentheses: another
variant, another format, a damaged header, a file too small for a header, a
directory, a device or FIFO, a file whose size says zero but that has
content when read (as in F</proc> and F</sys>), or a queue file of the C
implementation of this module (see L<Data::Queue::Shared/COMPATIBILITY>). This is also the
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
keep their low 32 or 16 bits (see L<Data::Queue::Shared/CLASSES>); a value they cannot take
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
L<Data::Queue::Shared/COMPATIBILITY>). Returns the number pushed, which is less than
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
on a 64-byte boundary, a 192-byte head, 128 bytes per lease and 64 per
dead-letter record (see
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
L<Data::Queue::Shared/"CRASH SAFETY">.

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
    my ($value, $lease, $deliveries) = $q->pop_lease_wait($timeout, $lease_timeout);
    my @triples = $q->pop_lease_multi($n);  # up to $n [$value, $lease, $deliveries]
    my $ok = $q->ack($lease);       # false: the lease had ended (late, returned)
    my $ok = $q->release($lease);   # or nack: back at the front
    my $ok = $q->release($lease, $delay);  # back at the front after $delay s
    my $ok = $q->touch($lease);     # heartbeat: the deadline starts again
    my $ok = $q->bury($lease);      # to the dead-letter area
    my $n  = $q->deliveries($lease);
    $q->push_delayed($delay, $value);       # visible after $delay seconds
    my @d  = $q->dead_list;         # also dead_count, dead_peek, dead_drain
    my $k  = $q->kick;              # dead items back to the front
    my $s  = $q->lease_stats;       # max_leases open waiting acked released
                                    # returned_dead returned_timeout delivered
                                    # dead buried kicked delayed touched ...
    my @l  = $q->leases;            # one hash per open or waiting lease

    # the size of the lease table is set at create (default 64 leases), and
    # so are the delivery limit and the dead-letter area
    Data::Queue::Shared::Int->new($path, $cap, { max_leases => 256 });
    Data::Queue::Shared::Int->new($path, $cap, { max_deliveries => 5, max_dead => 100 });
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

Every leased hand-out counts one delivery in the shared memory; on a queue
created with C<max_deliveries>, an item that comes back after its last
delivery moves to the dead-letter area (C<dead_list>, C<kick>,
C<dead_drain>; C<dqs dead>, C<dqs kick>) instead of out again. Delayed
items (C<release($lease, $delay)>, C<push_delayed>) are invisible to pops
and to C<size> until due, then come out at the front. See
L<Data::Queue::Shared::Leases/DELIVERY COUNTS> and the sections after it.

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

An Int push + pop pair costs less than half the instructions with it than
without, and not much more than a keyword pair (the counts are in
F<bench/RESULTS.pod>).

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

Measured with F<bench/keywords.pl>, an Int push + pop pair through the
keywords has about 2.7 times the throughput of the same pair through
plain method calls; for Str, where copying the string is a larger share
of the work, about 1.7 times (the numbers are in F<bench/RESULTS.pod>).

=head2 Building

The keywords need L<XS::Parse::Keyword> 0.33 or later. When
C<perl Makefile.PL> finds C<XS::Parse::Keyword::Builder>, it writes
F<XSParseKeyword.h> into the build directory and compiles them in; the
installed module then loads XS::Parse::Keyword at run time. Without it the
module builds and works the same, without keywords. Setting
C<DQS_NO_KEYWORDS=1> in the environment of C<perl Makefile.PL> builds
without them even when XS::Parse::Keyword is installed.


=head1 SEE ALSO

L<Data::Queue::Shared> (the overview), L<Data::Queue::Shared::Str>,
L<Data::Queue::Shared::Leases>, L<Data::Queue::Shared::Format>.

=head1 LICENSE

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
