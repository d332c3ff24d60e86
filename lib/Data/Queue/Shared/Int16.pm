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

    my $q = Data::Queue::Shared::Int16->new_memfd('ticks', 64);
    $q->push(300);
    my $v = $q->pop;

=head1 DESCRIPTION

Loading this module loads L<Data::Queue::Shared>, which defines the class.

See L<Data::Queue::Shared> for the manual: constructors, methods, errors
and the on-disk format.

=cut
