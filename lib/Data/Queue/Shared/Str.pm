package Data::Queue::Shared::Str;
use strict;
use warnings;

use Data::Queue::Shared ();

our $VERSION = '0.01';

1;

__END__

=head1 NAME

Data::Queue::Shared::Str - queue of strings in shared memory (not implemented yet)

=head1 SYNOPSIS

    use Data::Queue::Shared::Str;

    my $q = Data::Queue::Shared::Str->new('/tmp/strq.shm', 1024);
    $q->push("hello");
    my $msg = $q->pop;

=head1 DESCRIPTION

Loading this module loads L<Data::Queue::Shared>, which defines the class.

This class is still being written; for now its constructors croak
C<not implemented>.

See L<Data::Queue::Shared> for the manual: constructors, methods, errors
and the on-disk format.

=cut
