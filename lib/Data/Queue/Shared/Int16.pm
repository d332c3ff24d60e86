package Data::Queue::Shared::Int16;
use strict;
use warnings;

use Data::Queue::Shared ();

our $VERSION = '0.01';

# `use Data::Queue::Shared::Int16;` enables the q_int16_* keywords in the
# lexical scope being compiled (when they were built: see
# $Data::Queue::Shared::HAVE_KEYWORDS); `no Data::Queue::Shared::Int16;`
# disables them again.
my $KEYWORDS = 'Data::Queue::Shared::Int16/keywords';

sub import {
    my $class = shift;
    Data::Queue::Shared::_no_imports(__PACKAGE__, @_);
    $^H{$KEYWORDS} = 1;
    return;
}

sub unimport {
    my $class = shift;
    Data::Queue::Shared::_no_imports(__PACKAGE__, @_);
    delete $^H{$KEYWORDS};
    return;
}

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
