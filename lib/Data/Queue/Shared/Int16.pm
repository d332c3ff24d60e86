package Data::Queue::Shared::Int16;
use strict;
use warnings;

use Data::Queue::Shared ();

our $VERSION = '0.20';

# `use Data::Queue::Shared::Int16;` enables the q_int16_* keywords in the
# lexical scope being compiled (when they were built: see
# $Data::Queue::Shared::HAVE_KEYWORDS); `no Data::Queue::Shared::Int16;`
# disables them again.
sub import   { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 1, @_) }
sub unimport { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 0, @_) }

1;

__END__

=head1 NAME

Data::Queue::Shared::Int16 - queue of signed 16-bit integers in shared memory

=head1 SYNOPSIS

    use Data::Queue::Shared::Int16;

    my $q = Data::Queue::Shared::Int16->new(undef, 1024);
    $q->push(65537);      # stored as 1, like a C cast
    my $v = $q->pop;

=head1 DESCRIPTION

An integer queue like L<Data::Queue::Shared::Int>, whose page is its
manual: the same constructors, methods, event loop methods and
L<keywords|Data::Queue::Shared::Int/KEYWORDS> (here C<q_int16_push>,
C<q_int16_pop>, C<q_int16_peek> and C<q_int16_size>). Loading this
module loads L<Data::Queue::Shared> and enables those keywords in the
scope of the C<use>.

What differs is the value:

=over 4

=item *

Values are signed 16-bit integers (C<-32768> to C<32767>), 8 bytes per slot.

=item *

A value outside that range but within the signed 64-bit range wraps
around the way a C cast to C<int16_t> truncates it: C<65537> comes back as C<1>, C<32768> as C<-32768>. Beyond 64 bits
it croaks, as for Int (see L<Data::Queue::Shared::Int/push>).

=back

=head1 SEE ALSO

L<Data::Queue::Shared::Int> (the methods), L<Data::Queue::Shared> (the
overview), L<Data::Queue::Shared::Format/SLOTS> (the slot layout).

=cut
