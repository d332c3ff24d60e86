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

=head1 NAME

Data::Queue::Shared::Int - queue of signed 64-bit integers in shared memory

=head1 SYNOPSIS

    use Data::Queue::Shared::Int;

    my $q = Data::Queue::Shared::Int->new('/tmp/int64.shm', 1024);
    $q->push(-5);
    my $v = $q->pop;

=head1 DESCRIPTION

Loading this module loads L<Data::Queue::Shared>, which defines the class,
and enables the C<q_int_*> keywords in the scope of the C<use> (see
L<Data::Queue::Shared/KEYWORDS>).

Values are signed 64-bit integers (C<-2**63> to C<2**63 - 1>), 16 bytes
per slot. A value is taken as an integer (numified once; an object with
numeric overloading is fine).

The three integer classes have the same methods, and L<Data::Queue::Shared> is
their manual, with C<Int> standing for any of them:

=over 4

=item *

L<CONSTRUCTORS|Data::Queue::Shared/CONSTRUCTORS>: C<new> (with a path, or C<undef> for
anonymous memory), C<new_memfd>, C<new_from_fd>.

=item *

L<METHODS|Data::Queue::Shared/METHODS>: L<timeouts|Data::Queue::Shared/Timeouts>, L<single
items|Data::Queue::Shared/"Single items"> (C<push>, C<pop>, C<push_wait>, C<pop_wait>,
C<peek>), L<batches|Data::Queue::Shared/Batches>, L<state|Data::Queue::Shared/State> (C<size>,
C<capacity>, C<is_empty>, C<is_full>, C<stats>) and
L<management|Data::Queue::Shared/Management> (C<clear>, C<sync>, C<unlink>, C<path>,
C<memfd>).

=item *

L<EVENT LOOPS|Data::Queue::Shared/"EVENT LOOPS">, L<FAST METHOD CALLS|Data::Queue::Shared/"FAST METHOD
CALLS">, L<KEYWORDS|Data::Queue::Shared/KEYWORDS> (C<q_int_push>, C<q_int_pop>,
C<q_int_peek>, C<q_int_size>), L<ERRORS|Data::Queue::Shared/ERRORS>, L<WAKE-UPS AND
SIGNALS|Data::Queue::Shared/"WAKE-UPS AND SIGNALS">, L<FORK AND THREADS|Data::Queue::Shared/"FORK AND
THREADS">, L<SECURITY|Data::Queue::Shared/SECURITY>, L<CRASH SAFETY|Data::Queue::Shared/"CRASH SAFETY">
and L<COMPATIBILITY|Data::Queue::Shared/COMPATIBILITY>.

=item *

L<Data::Queue::Shared::Leases>: leased pops (C<pop_lease>,
C<pop_lease_wait>, C<pop_lease_multi>, C<ack>, C<release>, C<lease_stats>,
C<leases>), whose items come back when their consumer dies.

=item *

L<Data::Queue::Shared::Format/SLOTS>: the layout of the slots in memory
and the protocol that claims them, for other languages.

=back

=head1 SEE ALSO

L<Data::Queue::Shared>, L<Data::Queue::Shared::Str>, L<Data::Queue::Shared::Format>.

=cut
