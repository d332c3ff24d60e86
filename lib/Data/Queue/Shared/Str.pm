package Data::Queue::Shared::Str;
use strict;
use warnings;

use Data::Queue::Shared ();

our $VERSION = '0.20';

# `use Data::Queue::Shared::Str;` enables the q_str_* keywords in the
# lexical scope being compiled (when they were built: see
# $Data::Queue::Shared::HAVE_KEYWORDS); `no Data::Queue::Shared::Str;`
# disables them again.
sub import   { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 1, @_) }
sub unimport { shift; Data::Queue::Shared::_keywords(__PACKAGE__, 0, @_) }

1;

__END__

=head1 NAME

Data::Queue::Shared::Str - bounded deque of strings in shared memory

=head1 SYNOPSIS

    use Data::Queue::Shared::Str;

    # 1024 slots, a 1 MiB arena for the strings' bytes.
    my $q = Data::Queue::Shared::Str->new('/tmp/strq.shm', 1024, 1 << 20);
    $q->push("hello");
    $q->push_front("first");             # the other end
    my $msg  = $q->pop;                  # "first"
    my $last = $q->pop_back;             # "hello"
    my @msgs = $q->pop_wait_multi(100, 1.5, 65536);
    $q->unlink;

=head1 DESCRIPTION

Loading this module loads L<Data::Queue::Shared>, which defines the class.

Items are byte or character strings (the UTF-8 flag is kept), from the
empty string up to the arena size; they can be pushed and popped at both
ends. Every operation takes a short cross-process lock, so C<peek>,
C<size>, C<clear> and the batch operations are exact.

See L<Data::Queue::Shared/"Data::Queue::Shared::Str"> for this class's
constructors, methods, arena rules, lock and errors, and
L<Data::Queue::Shared> for what it shares with the integer queues and for
the on-disk format.

=cut
