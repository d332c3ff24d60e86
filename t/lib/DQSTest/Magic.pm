package DQSTest::Magic;

# Arguments with magic, for the tests that check each argument is read
# exactly once (or that a conversion that dies leaves nothing half done):
# tied scalars that count their fetches, die, or call back, and objects
# whose numeric or string overload counts its calls. Loading this module
# defines the classes; it exports nothing.
#
#     use DQSTest::Magic;
#     tie my $t, 'Counting::Scalar', \$fetches, 21;
#     my $obj = Numish->new(\$calls, 13);               # 0+ gives 13
#     my $bomb = Stringy->new(\$calls, sub { die "no\n" });

use strict;
use warnings;

package Counting::Scalar;

# tie my $s, 'Counting::Scalar', \$count, $value: each fetch adds one to
# $count and gives $value.
sub TIESCALAR { my ($c, $count, $v) = @_; bless { count => $count, v => $v }, $c }
sub FETCH     { my $s = shift; ${ $s->{count} }++; $s->{v} }
sub STORE     { die "read-only tied scalar\n" }

package Dying::Scalar;

# tie my $s, 'Dying::Scalar', $msg: each fetch dies with $msg.
sub TIESCALAR { my ($c, $msg) = @_; bless { msg => $msg }, $c }
sub FETCH     { die $_[0]{msg} }
sub STORE     { die "read-only tied scalar\n" }

package Callback::Scalar;

# tie my $s, 'Callback::Scalar', $code: each fetch gives $code->().
sub TIESCALAR { my ($c, $code) = @_; bless { code => $code }, $c }
sub FETCH     { $_[0]{code}->() }
sub STORE     { die "read-only tied scalar\n" }

package Numish;

# Numish->new(\$calls, $v): numifies to $v (or to $v->() for a code ref),
# adding one to $calls each time.
use overload
    '0+'     => sub { my $s = shift; ${ $s->{calls} }++; ref $s->{v} ? $s->{v}->() : $s->{v} },
    fallback => 1;

sub new { my ($c, $calls, $v) = @_; bless { calls => $calls, v => $v }, $c }

package Stringy;

# Stringy->new(\$calls, $v): stringifies to $v (or to $v->() for a code
# ref), adding one to $calls each time.
use overload
    '""'     => sub { my $s = shift; ${ $s->{calls} }++; ref $s->{v} eq 'CODE' ? $s->{v}->() : $s->{v} },
    fallback => 1;

sub new { my ($c, $calls, $v) = @_; bless { calls => $calls, v => $v }, $c }

package Numberish;

# Numberish->new($v): numifies to $v, counting nothing.
use overload '0+' => sub { $_[0]{v} }, fallback => 1;

sub new { my ($c, $v) = @_; bless { v => $v }, $c }

1;
