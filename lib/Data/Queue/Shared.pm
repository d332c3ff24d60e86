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
# guarded short cut (see xs/fastcall.h): `$q->push($v)` then costs little more
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

Signed 64-bit integers, 16 bytes per slot. Its page,
L<Data::Queue::Shared::Int>, describes the methods of all three integer
classes.

=item Data::Queue::Shared::Int32

Signed 32-bit integers, 8 bytes per slot; values outside the range wrap
around as a C cast to C<int32_t> does (L<Data::Queue::Shared::Int32>).

=item Data::Queue::Shared::Int16

Signed 16-bit integers, 8 bytes per slot, wrapping around as a cast to
C<int16_t> (L<Data::Queue::Shared::Int16>).

=item Data::Queue::Shared::Str

Byte and character strings of any length up to the arena size, with their
UTF-8 flag. 16 bytes per slot, plus a byte arena that holds the strings
(by default 256 bytes per slot). It adds C<push_front> and C<pop_back> to
the integer classes' methods, and a byte budget to its batch pops. Described in
L<Data::Queue::Shared::Str>, its own page.

=back

The three integer classes have the same methods, and
C<Data::Queue::Shared::Str> has them too, with the differences and
additions given on its own page.
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

L<Data::Queue::Shared>, this page: the overview, and what all four
classes share beyond their methods: L</ERRORS>, L</"WAKE-UPS AND
SIGNALS">, L</"FORK AND THREADS">, L</SECURITY>, L</"CRASH SAFETY">,
L</COMPATIBILITY> with the C implementation, the L</"RUST AND C">
interfaces and where the L</BENCHMARKS> are.

=item *

L<Data::Queue::Shared::Int>: the integer classes' constructors and
methods, which the Str class shares, and what is the same for all four
classes: L<event loops|Data::Queue::Shared::Int/"EVENT LOOPS">, L<fast
method calls|Data::Queue::Shared::Int/"FAST METHOD CALLS"> and
L<keywords|Data::Queue::Shared::Int/KEYWORDS>.
L<Data::Queue::Shared::Int32> and L<Data::Queue::Shared::Int16> are short
pages saying what differs for those widths.

=item *

L<Data::Queue::Shared::Str>: the string deque. Its arena argument,
values, the arena, the methods only it has (C<push_front>, C<pop_back>
and their C<_wait> forms, the byte budget of its batch pops,
C<compress>, C<lock_timeout>), how each shared method differs for it,
its statistics, its lock and its wake-ups.

=item *

L<Data::Queue::Shared::Leases>: leased pops for all four classes
(C<pop_lease>, C<ack>, C<release>, ...): items whose consumer dies come
back; the guarantee, the create options and crash safety; and the work
queue: delivery counts, dead letters (C<max_deliveries>, C<bury>,
C<kick>), C<touch> and delays (C<release($lease, $delay)>,
C<push_delayed>), with a table of the same words in SQS, Beanstalkd and
NATS JetStream.

=item *

L<Data::Queue::Shared::Format>: the on-disk format (header, slots, the
Str arena and lock word, the lease table, the slot and waiter protocols,
versioning), for programs in other languages that share the queues.

=item *

L<Data::Queue::Shared::dqs>: the command-line tool, C<dqs>, installed
with its manual as L<dqs(1)>.

=item *

F<bench/RESULTS.pod> in the distribution (not installed): the numbers of
the last benchmark runs (see L</BENCHMARKS>).

=back

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
L<Data::Queue::Shared::Int/clear> wakes every producer. The Str queue wakes producers more
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
duplicates L<Data::Queue::Shared::Int/new_from_fd> makes close-on-exec, so a program you C<exec>
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
C<$XDG_RUNTIME_DIR>), or use L<Data::Queue::Shared::Int/new_memfd> and pass the descriptor on.

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

L<Data::Queue::Shared::Int/unlink> (and C<dqs unlink>) removes whatever is at the path, without
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
items keep their order. An item taken with C<pop_lease> (see L<Data::Queue::Shared::Int/Leases>)
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
only their users can write them (see C<$mode> under L<Data::Queue::Shared::Int/new>). A queue in a
memfd (L<Data::Queue::Shared::Int/new_memfd>) is sealed against shrinking and growing
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

The tests kill processes at each of these steps, and at each step of an
integer push and pop and of a create, through the environment variable
C<DQS_TEST_KILL_POINT> (its points are listed in F<HACKING.pod> in the
distribution). Never set it in production: a process that finds it set
kills itself there.

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
not numbers croak (see L<Data::Queue::Shared::Int/push>), in every push method and keyword, and a
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

The distribution has benchmarks against other queues (F<bench/vs.pl>), of
the Rust engine alone (C<cargo bench>) and of single features
(F<bench/keywords.pl>, F<bench/compress.pl>, F<bench/signal_delay.pl>).
How to run them and what they measure is in F<HACKING.pod>; the numbers of
the last runs on the development machine, with what they show, are in
F<bench/RESULTS.pod> (C<perldoc bench/RESULTS.pod> in an unpacked tarball
or a checkout), because measured numbers belong to one machine and one
day.

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
