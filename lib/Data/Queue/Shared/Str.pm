package Data::Queue::Shared::Str;
use strict;
use warnings;

use Data::Queue::Shared ();

our $VERSION = '0.20';

# `use Data::Queue::Shared::Str;` enables the q_str_* keywords in the
# lexical scope being compiled (when they were built: see
# $Data::Queue::Shared::HAVE_KEYWORDS); `no Data::Queue::Shared::Str;`
# disables them again.
sub import   { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 1, @_) }
sub unimport { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 0, @_) }

1;

__END__

=encoding utf8

=head1 NAME

Data::Queue::Shared::Str - bounded deque of strings in shared memory

=head1 SYNOPSIS

    use Data::Queue::Shared::Str;

    # 1024 slots, a 1 MiB arena for the strings' bytes.
    my $q = Data::Queue::Shared::Str->new('/tmp/strq.shm', 1024, 1 << 20);
    $q->push("hello");
    $q->push_front("first");             # the other end
    my $msg  = $q->pop;                  # "first"
    my $last = $q->pop_back;             # "hello"
    my @msgs = $q->pop_wait_multi(100, 1.5, 65536);
    $q->unlink;

=head1 DESCRIPTION

Loading this module loads L<Data::Queue::Shared>, which defines the class,
and enables the C<q_str_*> keywords in the scope of the C<use> (see
L<Data::Queue::Shared::Int/KEYWORDS>).

Items are byte or character strings (the UTF-8 flag is kept), from the
empty string up to the arena size; they can be pushed and popped at both
ends. Every operation takes a short cross-process lock, so C<peek>,
C<size>, C<clear> and the batch operations are exact.

Each item takes one 16-byte slot, which
records where its bytes are, and its bytes go into a byte arena that
follows the slots in the same mapping. All of a queue's items share the
arena, so short and long strings mix freely; a push needs a free slot
I<and> room in the arena.

The queue has two ends with a lock each in the shared header (see
L</"THE LOCKS">): the back, where C<push> and C<push_multi> add items,
and the front, where C<pop>, C<pop_multi>, C<drain> and C<peek> take or
read them. Each of those takes its own end's lock only, so a producer
and a consumer never wait for each other; C<push_front>, C<pop_back>,
C<clear> and the lease calls take both. An operation works on the slots
and the arena under its lock or locks and releases them; only a
non-blocking C<pop> or C<pop_back> that finds the queue empty, or a
C<push> or C<push_front> that finds every slot taken, answers from the
two ends' header words without a lock (the words the last operations
wrote as they finished). So, unlike the integer queues, a Str queue is
exact: C<peek> sees the real front item, C<pop_multi> and C<drain> take
their batch in one piece, and C<clear> leaves nothing behind.

What the integer classes' page, L<Data::Queue::Shared::Int>, and the
overview, L<Data::Queue::Shared>, say about
L<timeouts|Data::Queue::Shared::Int/Timeouts>, L<wake-ups and
signals|Data::Queue::Shared/"WAKE-UPS AND SIGNALS"> (for the waiting
itself), L<sync|Data::Queue::Shared::Int/sync>,
L<unlink|Data::Queue::Shared::Int/unlink>, L<path|Data::Queue::Shared::Int/path>
and L<memfd|Data::Queue::Shared::Int/memfd> holds for Str unchanged, and so
does what they say under L<EVENT LOOPS|Data::Queue::Shared::Int/"EVENT LOOPS">,
L<FAST METHOD CALLS|Data::Queue::Shared::Int/"FAST METHOD CALLS">,
L<KEYWORDS|Data::Queue::Shared::Int/KEYWORDS> (C<q_str_push>, C<q_str_pop>,
C<q_str_peek>, C<q_str_size>), L<ERRORS|Data::Queue::Shared/ERRORS>,
L<FORK AND THREADS|Data::Queue::Shared/"FORK AND THREADS">,
L<SECURITY|Data::Queue::Shared/SECURITY>, L<CRASH
SAFETY|Data::Queue::Shared/"CRASH SAFETY"> and
L<COMPATIBILITY|Data::Queue::Shared/COMPATIBILITY>. This page has the
rest: how a Str queue differs from an integer queue, and what only a Str
queue has. The layout of a Str queue in memory, for other languages, is
in L<Data::Queue::Shared::Format/"STR QUEUES">.

=head1 CONSTRUCTORS

    my $q = Data::Queue::Shared::Str->new($path, $capacity);
    my $q = Data::Queue::Shared::Str->new($path, $capacity, $arena_bytes);
    my $q = Data::Queue::Shared::Str->new($path, $capacity, $arena_bytes, $mode);
    my $q = Data::Queue::Shared::Str->new(undef, $capacity, $arena_bytes);
    my $q = Data::Queue::Shared::Str->new_memfd($name, $capacity, $arena_bytes);
    my $q = Data::Queue::Shared::Str->new_from_fd($fd);

They work as the integer L<new|Data::Queue::Shared::Int/new>, L<new
(anonymous)|Data::Queue::Shared::Int/"new (anonymous)">,
L<new_memfd|Data::Queue::Shared::Int/new_memfd> and
L<new_from_fd|Data::Queue::Shared::Int/new_from_fd> do: same capacity rule, file
creation and mode, header
checks and errors. The one addition is C<$arena_bytes>, the size of the
string arena:

=over 4

=item *

omitted or C<undef>: C<capacity * 256>, with the capacity after rounding
(C<< new(undef, 1000) >> gets 1024 slots and a 262144-byte arena). Pass
C<undef> to keep the default and still give a C<$mode>.

=item *

below 4096: raised to 4096, the smallest arena.

=item *

above C<2**32> (4 GiB): croaks, naming the value:

    Data::Queue::Shared::Str->new: arena size 4294967297 exceeds the maximum of 4294967296 bytes

=item *

zero, negative or not a number: croaks
C<< Data::Queue::Shared::Str->new: arena size must be a positive integer, got 0 >>.

=back

Any other value is used as given and reported exactly by
C<< $q->stats->{arena_cap} >>. Items are placed on 8-byte boundaries, so
the usable part is that size rounded down to a multiple of 8: an arena of
5001 bytes holds at most 5000 bytes of strings. The mapping is
C<320 + 16 * capacity + arena_cap> bytes, then the lease table and its
lease data area (see L</LEASES>), and for files and memfds all of it is
reserved when the queue is created.

When C<new> attaches to an existing file, the arena size stored in it wins,
as the capacity does. A file or descriptor holding an integer queue croaks
when opened as Str (and a Str queue when opened as an integer class):

    Data::Queue::Shared::Str->new: /tmp/q.shm: invalid or incompatible queue file (it holds an Int queue)

=head1 VALUES

A value pushed is converted to a string once, before the queue is touched:
numbers become their usual string form, and objects with an overloaded
C<""> are pushed as that string. Refused, with nothing pushed:

    Data::Queue::Shared::Str->push: cannot push undef
    Data::Queue::Shared::Str->push: cannot push a reference (ARRAY(0x55d0c8a3e2a0))

(C<undef> is what C<pop> returns for an empty queue, so it cannot be an
item; a reference would lose its referent on the way through.)

The queue stores the string's bytes, as Perl holds them, together with its
UTF-8 flag, and gives back a string with the same bytes and the same flag:
C<eq> holds between what went in and what comes out, and so does
C<utf8::is_utf8>. NUL bytes, every byte value from 0 to 255 and the empty
string all round-trip exactly; an empty string is an item like any other
and pops as C<''>, never as C<undef>. Lengths in this section (limits,
C<$max_bytes>, error messages) count those bytes: a string of 1366
characters C<"\x{263a}"> takes 4098 bytes.

A string that can never fit croaks instead of returning false, naming both
sizes:

    Data::Queue::Shared::Str->push: string of 5001 bytes exceeds the arena of 5000 bytes

A single item is also limited to C<2**31 - 1> bytes (just under 2 GiB),
which matters only for arenas larger than that; the message then ends
C<exceeds the maximum item size of 2147483647 bytes>.

=head1 THE ARENA

=over 4

=item *

An item takes its length rounded up to a multiple of 8 bytes, with no
header of its own (its slot holds the length). Two 2000-byte strings fit in
a 4096-byte arena, with 96 bytes to spare; an empty string takes a slot but
no arena bytes.

=item *

An item's bytes are always in one piece. When the next string does not fit
between the last item and the end of the arena, it goes to the start of the
arena instead, and the bytes it skipped at the end are charged to it: they
count in C<arena_used> until that item leaves the queue, by either end, and
then they are free again. A L</push_front> that does not fit before the
front item likewise goes to the very end of the arena, and the bytes before
the old front item are charged to it. So free space can be in two pieces,
and a push can fail although the free bytes add up to more than the
string needs.

=item *

When the queue becomes empty, by any pop, C<drain> or C<clear>, the arena
starts over from its first byte, so an empty queue takes any string up to
the usable size.

=item *

An arena that is exactly full is fine: nothing more fits except empty
strings, until an item leaves.

=back

For example, with a 4096-byte arena: push strings of 1000, 2000 and 1000
bytes (C<arena_used> 4000) and pop the first (3000). A push of 800 bytes
does not fit in the 96 bytes at the end, so it goes to offset 0 and is
charged 896 bytes (C<arena_used> 3896); C<pop_back> of it brings
C<arena_used> back to 3000.

Size the arena for the bytes you expect to be queued at once, plus some
slack for that waste; the default of 256 bytes per slot suits items of up
to a few hundred bytes.

=head1 METHODS

=head2 Single items

Each of these takes the lock once. The ones without C<wait> never sleep for
room or items, though they may wait a moment for another process's
operation to finish with the lock.

=over 4

=item push

=item push_front

    my $ok = $q->push($value);
    my $ok = $q->push_front($value);

Adds C<$value> at the back (C<push>) or at the front (C<push_front>: it
becomes the next item that C<pop> returns). Returns true when it was
added, false when there was no room: every slot taken, or no piece of the
arena large enough (see L</"THE ARENA">). A false return counts in
C<push_full>. Several C<push_front> calls stack: after
C<< $q->push_front($_) for qw(a b c) >>, C<pop> returns C<c>, C<b>, C<a>.
Croaks for C<undef>, a reference, or a string that can never fit (see
L</VALUES>).

=item pop

=item pop_back

    my $value = $q->pop;
    my $value = $q->pop_back;

Removes and returns the front item (C<pop>) or the back item (C<pop_back>:
the one most recently pushed at the back), or C<undef> when the queue is
empty (one C<undef> in list context too). An empty queue counts in
C<pop_empty>. Either end gives back exactly the slot and arena bytes the
item held, waste included.

=item peek

    my $value = $q->peek;

Returns a copy of the front item without removing it, or C<undef> when the
queue is empty. It is exact: it reads under the lock, so it never misses an
item that is there. Another process may of course pop it right after.

=item push_wait

=item push_front_wait

    my $ok = $q->push_wait($value);
    my $ok = $q->push_wait($value, $timeout);
    my $ok = $q->push_front_wait($value, $timeout);

Like C<push> and L</push_front>, but while there is no room they sleep
until a consumer frees some or the timeout passes. Return true when the
value was added, false on timeout (counted in C<push_full>). A string that
can never fit croaks at once instead of sleeping.

=item pop_wait

=item pop_back_wait

    my $value = $q->pop_wait;
    my $value = $q->pop_wait($timeout);
    my $value = $q->pop_back_wait($timeout);

Like C<pop> and L</pop_back>, but while the queue is empty they sleep
until a producer adds an item or the timeout passes. Return the item, or
C<undef> on timeout (counted in C<pop_empty>).

=back

=head2 Batches

=over 4

=item push_multi

    my $n = $q->push_multi(@values);

Converts every value first; if one of them is refused, dies in its
overloading or tie, or could never fit, the call croaks (or passes that
exception on unchanged) and nothing is pushed. Then, under one lock, it
pushes the values at the back in order until one does not fit, and returns
how many it pushed (C<0> to C<scalar @values>). The values from the first
one that did not fit on are not pushed, even those that would have fitted.
Stopping early counts once in C<push_full>. Never sleeps.

=item push_wait_multi

    my $n = $q->push_wait_multi($timeout, @values);

Converts and checks every value as C<push_multi> does, then pushes them in
order at the back, as many as fit at a time, sleeping whenever the next one
does not fit, until all are in or the timeout passes. The timeout comes
first and is required: C<-1> waits as long as it takes, C<0> and C<undef>
try once (see L<Data::Queue::Shared/COMPATIBILITY>). Returns the number pushed,
which is less than C<scalar @values> only on timeout. While it sleeps, other
producers' items may get in between its own. Its waits for the back lock
end at the timeout too (a stopped holder, say), not at the handle's
L</lock_timeout>.

=item pop_multi

    my @values = $q->pop_multi($n);
    my @values = $q->pop_multi($n, $max_bytes);

Under one lock, removes up to C<$n> items from the front and returns them,
oldest first. The list is empty when the queue was (counted once in
C<pop_empty>), and when C<$n> is 0; a negative C<$n> means no limit. C<$n>
is required: without it
C<pop_multi> croaks with Perl's usage message (use C<drain> to take
everything).

C<$max_bytes>, if given, is a byte budget: C<pop_multi> stops before the
total length of the items it has taken would exceed it. The first item is
always taken if there is one, however long, so a batch is never empty just
because of the budget (C<< pop_multi($n, 0) >> takes exactly one item).
Only string lengths count, not the rounding and waste of L</"THE ARENA">.
C<undef> means no budget; a negative number or NaN croaks
C<< Data::Queue::Shared::Str->pop_multi: max_bytes must be a non-negative number >>.
The C implementation has the byte budget from its version 0.12 on (see
L<Data::Queue::Shared/COMPATIBILITY>).

=item pop_wait_multi

    my @values = $q->pop_wait_multi($n);
    my @values = $q->pop_wait_multi($n, $timeout);
    my @values = $q->pop_wait_multi($n, $timeout, $max_bytes);

Sleeps until at least one item is there (or the timeout passes) and takes
the front item; then, without sleeping, takes up to C<$n - 1> more under
the budget that is left, as C<pop_multi> would. The first item is taken
whatever its length. Returns the list, empty on timeout or when C<$n> is 0
(a negative C<$n> means no limit). The first item and the rest are taken
under two separate holds of the lock, so another consumer may take items
in between. C<$max_bytes> as for C<pop_multi>.

=item drain

    my @values = $q->drain;
    my @values = $q->drain($max);

Under one lock, removes every item in the queue, or at most C<$max> items
(C<undef> or negative: no limit; 0: none), and returns them oldest first.
Because the lock is held throughout, nobody pushes while it runs. Every
string is copied into memory at once, so a full arena of C<arena_cap>
bytes needs that much memory in your process. More than one argument
croaks with Perl's usage message.

=back

=head2 State and management

=over 4

=item size

=item capacity

=item is_empty

=item is_full

The item count (read without taking the lock; a true count at one instant,
which others may change right after), the slot count, and whether the count
is 0 or equal to the capacity. C<is_full> is about slots only: the arena
can fill up first, so C<push> may return false while C<is_full> is false.

=item clear

    $q->clear;

Under the lock, removes every item and resets the arena. Returns nothing.
A push by another process happens either before C<clear> (and is removed)
or after it (and stays). Cleared items do not count in C<pop_ok>. Wakes
every producer and every consumer blocked in a C<*_wait> method.

=item sync, unlink, path, memfd

As for the integer queues (see L<Data::Queue::Shared::Int/Management>).

=item stats

    my $s = $q->stats;

Returns the keys described under L<Data::Queue::Shared::Int/stats> for the integer queues, with
these meanings for Str:

=over 4

=item size, capacity

As above.

=item mmap_size

Header, slots and arena (C<320 + 16 * capacity + arena_cap>), then the
lease table and its lease data area (see L</LEASES>).

=item push_ok, pop_ok

Exact counts, kept under the locks, of items pushed (at either end, singly
or in batches) and popped (at either end, singly, in batches or by
C<drain>; not by C<peek> or C<clear>).

=item push_full, pop_empty

Pushes that found no room (a batch that stopped early counts once),
pops and batch pops that found the queue empty, and waits that timed out.

=item recoveries

Times a process took a lock over from a holder that had died (see
L</"THE LOCKS"> and L<Data::Queue::Shared/"CRASH SAFETY">): once per lock,
so a process killed inside C<push_front>, C<pop_back>, C<clear> or a lease
call, which hold both, counts twice once both locks have been needed
again.

=item push_waiters, pop_waiters

As for the integer queues.

=item arena_cap

The arena size in bytes, as created: the requested size exactly, or the
default, after the 4096-byte minimum.

=item arena_used

Arena bytes charged to the items in the queue: their lengths rounded up to
multiples of 8, plus wrap waste. 0 when the queue is empty.

=item lock_acquired

How many times any process has taken one of the queue's two locks, the
sum of both: every acquisition counts once, whether the lock was free,
waited for, or taken over from a dead holder. A C<push> or C<pop> takes
one lock once, so a producer and a consumer moving N items take 2N;
C<push_front>, C<pop_back>, C<clear> and the lease calls take both,
counting 2, or more when they found the front lock held. A non-blocking
pop of an empty queue, or push to a queue with every slot taken, takes
none. The blocking calls count the same way: C<pop_wait> and
C<pop_back_wait> take their locks only when the look without a lock
shows an item, so a blocked consumer counts one acquisition per item it
receives (two for C<pop_back_wait>), plus one when, about to sleep, it
found a producer holding the back lock and waited for it (see
L</"THE LOCKS">); while it waits with nothing coming it counts none.
C<push_wait> likewise looks at the slot count without a lock while it
waits; a push that waits for arena bytes takes the back lock, and the
front lock once, at each look.

=item lock_contended

How many of those acquisitions found the lock held by another process
(or by a dead one, then taken over) and had to spin or sleep for it
before taking it (counted modulo 2**32 for each lock, then summed). A
call that only tries a lock and goes on without it (see L</"THE LOCKS">)
counts nothing until it takes it.
C<lock_contended / lock_acquired> tells how much producers get in each
other's way, and consumers in each other's (a producer and a consumer
take different locks).

=item compressed, compressed_saved

Items stored compressed since the queue was created (by any handle with
L</compress> on), and the arena bytes they did not take: for each, its
length rounded up to 8 minus its compressed length rounded up to 8.
Exact, kept under the back lock (a process killed in the middle of a push may
leave them one item off, as C<cleared>).

=back

The C implementation reports C<lock_acquired> and C<lock_contended> from
its version 0.12 on; C<compressed> and C<compressed_saved> are additions
of this implementation.

=back

=head1 COMPRESSION

=over 4

=item compress

    my $prev = $q->compress($min_bytes);           # zstd level 3
    my $prev = $q->compress($min_bytes, $level);
    $q->compress(0);                               # off again

From now on, strings of at least C<$min_bytes> bytes that I<this handle>
pushes, by any push method or keyword (C<push>, C<push_front>, the
C<_wait> and C<_multi> forms, C<q_str_push>), are stored compressed with
zstd at C<$level> when that makes them shorter; shorter strings, and
strings that do not shrink, are stored as they are. Returns the previous
C<$min_bytes> (0 when it was off). C<$level> is a zstd level: 1 to 22, or
negative for zstd's faster modes; 3, the default, is zstd's own. Like
L</lock_timeout> it is a setting of the handle, not of the queue: nothing
about it is stored in the file beyond a flag on each compressed item, and
other handles keep their own.

Readers need no setting. Every pop, peek, batch and keyword, in any
process, and the Rust API, the C API and C<dqs pop>/C<dqs peek>, give back
exactly the bytes and UTF-8 flag that were pushed. The producer compresses
before it takes the queue's lock and the consumer decodes after it has
released it (into the handle's buffer), so the lock is never held while
zstd runs. A compressed item is charged its compressed length in the
arena, so a queue holds more of them, and one longer than the arena can
fit; the "exceeds the arena" croak then names both lengths. The byte
budget of C<pop_multi> and C<pop_wait_multi> counts decoded lengths.

Croaks C<< Data::Queue::Shared::Str->compress: min_bytes must be a
non-negative integer, got -1 >> and C<< ...: compression level 99 is out of
range (-131072 .. -1 or 1 .. 22) >>.

A compressed item carries zstd's checksum. One whose bytes were scribbled
over in shared memory croaks on the call that meets it, naming it:

    Data::Queue::Shared::Str->pop: compressed item of 1376 bytes is corrupt (zstd: Restored data doesn't match checksum)

The item has been removed (C<peek> leaves it) and the queue goes on. Items
are decoded after the lock is released, so a batch (C<pop_multi>,
C<drain>, C<pop_wait_multi>) has already taken its other items when it
meets a bad one: they are lost with it, and the croak says how many. A
build of this module without the C<zstd> feature (C<cargo build
--no-default-features>) cannot turn compression on, and croaks naming the
feature when it meets a compressed item.

The codec is libzstd, built from source by the Rust crate C<zstd-sys> and
linked statically into the module: nothing to install at run time, and
every build uses the same zstd.

What it buys, from F<bench/compress.pl> (two corpora of JSON objects
generated from a fixed seed: 180 B to 2 KB, and 1 to 10 KB; level 3):

    corpus (objects)        arena bytes per item       items in a 1 MiB arena
                            plain  compressed  ratio   plain  compressed
    160 B - 2 KB, ~1 KB      1051         498  0.47x     996        2103
    1 - 10 KB, ~5.3 KB       5358        1620  0.30x     199         641

So compression is for room, not for speed: a queue of such documents
holds two to three times as many, but a producer and a consumer moving
them between processes run at a small fraction of the plain rate (about a
twentieth at level 3, a twelfth at level -3, in the run that
F<bench/RESULTS.pod> in the distribution reports). Unlike a pipe, shared
memory has no per-message framing cost for compression to avoid: the
plain path is one copy in and one copy out, and zstd's work on both sides
is far more than that.

=back

=head1 THE LOCKS

Each end of the queue has its own lock, a mutex on a 32-bit futex word
in the shared header, with a count of the processes sleeping on it beside
the word, on the header line that holds that end's state (see
L<Data::Queue::Shared::Format/"STR QUEUES">). C<push> and C<push_multi>
take the back lock; C<pop>, C<pop_multi>, C<drain> and C<peek> the front
lock; C<push_front>, C<pop_back>, C<clear> and the lease calls both, the
back first. Those never wait for the front lock while holding the back
one: they take the back lock and only try the front one; when it is
held, they let the back lock go, wait for the front lock alone, let it
go, and start again (counting each lock taken in C<lock_acquired>). Taking a free lock is one atomic compare-and-swap and no
system call; releasing it is a plain store and a read of the count, with
no atomic read-modify-write (the few sleepers pay for that instead, with
one C<membarrier> call each, see L<Data::Queue::Shared::Format/"The lock
words">). A process that finds a lock held spins briefly, since the
holder only does a few loads and stores and one copy of a string, and
then sleeps on the futex until the holder wakes it. A blocked C<pop_wait>
looks at the two ends' positions without a lock, and takes a lock only
when they show an item; when they show none it looks at the back lock
before it believes them and sleeps (and, if a producer holds it, waits
for it once), and a blocked C<push_wait> at the front lock, with the back
lock let go, so that no push or pop it must see can slip past it.

So a consumer stopped (C<SIGSTOP>, a debugger) while it holds the front
lock holds up the other consumers and every call that needs both locks,
but not the producers: C<push> and C<push_multi> go on. What remains
coupled: after four rounds in which somebody else took the front lock
each time, a call that needs both waits for it holding the back lock
(if that front holder is stopped just then, the producers wait too); and
a process stopped holding the back lock holds up every producer and
every call that needs both locks. Set a L</lock_timeout> where that
matters.

Everything below holds for each lock. No Perl code runs while a process holds the lock. All arguments are
converted first, including C<FETCH> of tied variables and overloaded
stringification; popped strings are copied out under the lock into a
buffer of the handle and only turned into Perl strings after the lock is
released. So a C<die> in any of that code, or a signal handler, can never
leave the lock held. A C<*_wait> call
that finds the lock held waits for it no longer than its own timeout, and
a signal that arrives meanwhile runs its Perl handler (which may C<die>)
just as during any other wait.

While held, the lock word records the process id of its holder, taken
from C<getpid()> when the lock is taken; a child that uses a handle
inherited across C<fork> locks as itself. A process that has found the
lock held by the same process for a while (10 ms of its own waiting, one
poll interval: sleepers wake that often to look, and signals that cut
their sleep short do not restart the interval) asks the kernel whether
the holder still exists, and so does a process whose wait for the lock is
about to end (its timeout or lock timeout passed, or a signal arrived
during a C<*_wait> call), however short the wait was. A holder that is
gone, or a zombie (killed but not yet reaped by its parent), is dead: one
waiter takes the lock over, finds the queue consistent with nothing to
repair (see L<Data::Queue::Shared/"CRASH SAFETY">) and counts it in C<recoveries>. A reused
process id does not fool it: the holder also records its start time, and
a process with the holder's id but another start time is not the holder.
Measured on a 2-vCPU machine, a waiter asleep on the lock takes over 6 ms
(median; 11 ms at the 99th percentile) after the holder is killed. A
holder that is only stopped (C<SIGSTOP>, a debugger) is alive and is never
taken over; all processes sharing a queue must be in the same pid
namespace.

A lock word that no queue user wrote (the file scribbled on by a bug or
another program) is taken over too, as from a dead holder, so that a call
without a timeout does not wait for ever on it: a word whose process id
bits are 0 or whose high bit is set (no locker writes those), after one poll
interval; a word naming the waiting process itself when that process has
only one thread (it is waiting, so it cannot be holding); and a word naming
a live process that has not recorded itself as the holder for one second.
Every holder records its process id and start time next to the word right
after taking the lock, a few instructions later on the same cache line, so
a live process named by the word without that record for a second never
took the lock (pid 1, say, written over the word). The exception is a
process that is stopped or traced: it could have stopped in those few
instructions, so it counts as a holder, and only timeouts end a wait for
it. The Int lease lock (see L<Data::Queue::Shared::Leases>) is judged the
same way.

=over 4

=item lock_timeout

    $q->lock_timeout(0.5);      # seconds
    my $t = $q->lock_timeout;   # undef: wait as long as the holder lives

How long the non-blocking calls of this handle (C<push>, C<push_front>,
C<pop>, C<pop_back>, C<peek>, C<push_multi>, C<pop_multi>, C<drain>,
C<clear>) wait for a lock held by a live process, a stopped one say, before
they give up and return what they return for a full or empty queue (false,
C<undef>, an empty list, 0) with C<$!> set to C<ETIMEDOUT>. While a lock
timeout is set, those calls set C<$!> to 0 when they fail because the queue
is full or empty, so C<$!{ETIMEDOUT}> tells the two apart. The default,
C<undef>, waits as long as the holder lives. The setting belongs to this
handle in this process (it is not shared, and a child inherits its parent's
value with the handle); the C<*_wait> calls (C<push_wait_multi> included)
use their own timeout instead. The lease calls wait for the locks up to the
lock timeout too, but croak C<... lock timeout> when it passes (see
L<Data::Queue::Shared::Leases/"LOCK TIMEOUTS">); C<pop_lease_wait> also
stops at its own timeout, returning an empty list.
Returns the (new) setting; croaks on a negative or non-numeric value.

Signal handlers do not run while a non-blocking call waits for the lock
(see L<Data::Queue::Shared/"WAKE-UPS AND SIGNALS">), and perl dies with C<Maximal count of
pending signals (120) exceeded> when more than 120 of one signal arrive
before it can run their handler. A process that gets signals often (a
fast interval timer, many exiting children) and may meet a stopped holder
should set a lock timeout.

=back

A Str handle must not be used from two threads at once, because of that
per-handle buffer. Perl's ithreads never share handles (see
L<Data::Queue::Shared/"FORK AND THREADS">), so this concerns only C or XS code that passes one
handle between threads. Separate handles to the same queue, in any threads
or processes, are fine.

=head1 WAKE-UPS

=over 4

=item *

A push, at either end, wakes one blocked consumer: one item satisfies one
consumer. C<push_multi> and C<push_wait_multi> wake as many consumers as
items they pushed.

=item *

Every pop, at either end, singly or in a batch, wakes I<every> blocked
producer. A pop frees one slot and a varying number of arena bytes: the
first producer in line may wait with a string that still does not fit
while a shorter one behind it would. Those that still do not fit go back
to sleep. When nobody is blocked this costs one memory read.

=item *

C<clear> wakes every blocked producer and consumer.

=back

=head1 LEASES

C<pop_lease>, C<pop_lease_wait>, C<pop_lease_multi>, C<ack>, C<release>
(C<nack>), C<lease_stats> and C<leases>, and the work-queue methods
(C<deliveries>, C<touch>, C<bury>, C<push_delayed>, C<dead_count>,
C<dead_peek>, C<dead_list>, C<kick>, C<dead_drain>; the create options
C<max_deliveries> and C<max_dead>) work on Str queues as on the integer
ones, and are described for all four classes in
L<Data::Queue::Shared::Leases>.
What is Str's own: a leased item's stored bytes (compressed ones stay
compressed) wait in the lease data area until the lease ends, sized by the
C<lease_bytes> create option (see
L<Data::Queue::Shared::Leases/"CREATING A QUEUE WITH LEASES">), so
C<pop_lease> croaks when that area has no room now or could never hold
the front item; the Str queue lock guards the lease table; and a returned
item goes back into the queue itself, at the front, so that every pop,
C<peek> and C<size> sees it at once. A dead item's bytes, and a delayed
item's, also stay in the lease data area (its default size covers
C<max_leases + max_dead> items); C<push_delayed> croaks when that area has
no room for the new item, and keeps the value's UTF-8 flag as C<push>
does.

=head1 SEE ALSO

L<Data::Queue::Shared> (the overview: what all four classes share),
L<Data::Queue::Shared::Int> (the integer classes, whose methods Str
shares), L<Data::Queue::Shared::Format> (the on-disk format),
L<Data::Queue::Shared::dqs> (the command-line tool).

=head1 LICENSE

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
