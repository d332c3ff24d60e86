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

Loading this module loads L<Data::Queue::Shared>, which defines the class.

See L<Data::Queue::Shared> for the manual: constructors, methods, errors
and the on-disk format.

=cut
