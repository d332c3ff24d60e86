# The leased kill storm of t/72 with 1000 kills per class and each
# max_deliveries it runs (author test).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../t/lib";
use Test::More;

plan skip_all => 'set AUTHOR_TESTING to run the long leased kill storm' unless $ENV{AUTHOR_TESTING};
$ENV{DQS_LEASE_STORM_KILLS} ||= 1000;
my $t = "$FindBin::Bin/../t/72-lease-kill-storm.t";
do $t or die $@ || "$t: $!";
