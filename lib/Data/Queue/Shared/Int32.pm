package Data::Queue::Shared::Int32;
use strict;
use warnings;

use Data::Queue::Shared ();

our $VERSION = '0.01';

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
