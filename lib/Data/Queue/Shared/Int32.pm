package Data::Queue::Shared::Int32;
use strict;
use warnings;

use Data::Queue::Shared ();

our $VERSION = '0.20';

# `use Data::Queue::Shared::Int32;` enables the q_int32_* keywords in the
# lexical scope being compiled (when they were built: see
# $Data::Queue::Shared::HAVE_KEYWORDS); `no Data::Queue::Shared::Int32;`
# disables them again.
sub import   { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 1, @_) }
sub unimport { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 0, @_) }

1;

__END__

=head1 NAME

Data::Queue::Shared::Int32 - queue of signed 32-bit integers in shared memory

=head1 SYNOPSIS

    use Data::Queue::Shared::Int32;

    my $q = Data::Queue::Shared::Int32->new(undef, 1024);
    $q->push(2**31 + 1);      # stored as -2147483647, like a C cast
    my $v = $q->pop;

=head1 DESCRIPTION

Loading this module loads L<Data::Queue::Shared>, which defines the class,
and enables the C<q_int32_*> keywords in the scope of the C<use> (see
L<Data::Queue::Shared/KEYWORDS>).

Values are signed 32-bit integers, 8 bytes per slot. A value outside the
range is truncated the way a C cast to C<int32_t> truncates it:
C<< 2**32 + 5 >> comes back as C<5>, C<2**31> as C<-2147483648>.

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
CALLS">, L<KEYWORDS|Data::Queue::Shared/KEYWORDS> (C<q_int32_push>, C<q_int32_pop>,
C<q_int32_peek>, C<q_int32_size>), L<ERRORS|Data::Queue::Shared/ERRORS>, L<WAKE-UPS AND
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
