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

An integer queue like L<Data::Queue::Shared::Int>, whose page is its
manual: the same constructors, methods, event loop methods and
L<keywords|Data::Queue::Shared::Int/KEYWORDS> (here C<q_int32_push>,
C<q_int32_pop>, C<q_int32_peek> and C<q_int32_size>). Loading this
module loads L<Data::Queue::Shared> and enables those keywords in the
scope of the C<use>.

What differs is the value:

=over 4

=item *

Values are signed 32-bit integers (C<-2**31> to C<2**31 - 1>), 8 bytes per slot.

=item *

A value outside that range but within the signed 64-bit range wraps
around the way a C cast to C<int32_t> truncates it: C<< 2**32 + 5 >> comes back as C<5>, C<2**31> as C<-2147483648>. Beyond 64 bits
it croaks, as for Int (see L<Data::Queue::Shared::Int/push>).

=back

=head1 SEE ALSO

L<Data::Queue::Shared::Int> (the methods), L<Data::Queue::Shared> (the
overview), L<Data::Queue::Shared::Format/SLOTS> (the slot layout).

=cut
