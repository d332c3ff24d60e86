# PLACEHOLDER until the Str issue lands: Data::Queue::Shared::Str is a stub
# whose constructors croak "not implemented". Replace this file with the real
# Str tests when the class is implemented.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

use Data::Queue::Shared::Str;

my $dir = tmpdir();

subtest 'Str constructors croak "not implemented" for now' => sub {
    eval { Data::Queue::Shared::Str->new(undef, 16) };
    like($@, qr/^Data::Queue::Shared::Str->new: .*not implemented/, 'new(undef, 16)');
    eval { Data::Queue::Shared::Str->new("$dir/str.shm", 16) };
    like($@, qr/^Data::Queue::Shared::Str->new: .*not implemented/, 'new($path, 16)');
    ok(!-e "$dir/str.shm", 'no file created');
};

done_testing;
