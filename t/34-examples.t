# The runnable examples in eg/ run to completion and report success (each
# exits 0 only when every item arrived). The EV one is skipped without EV.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

watchdog(120);

my $eg  = "$FindBin::Bin/../eg";
my $dir = tmpdir();

my %examples = (
    'select-loop.pl' => { args => [2000],   out => qr/^consumed 2000 jobs \(sum 2001000\)/ },
    'ev-consumer.pl' => { args => [3, 500], out => qr/^received 1500 messages from 3 producers/,
                          needs => 'EV' },
);

for my $name (sort keys %examples) {
    my $ex = $examples{$name};
    SKIP: {
        skip "$name needs $ex->{needs}", 2
            if $ex->{needs} && !eval "require $ex->{needs}; 1";
        my $out = "$dir/$name.out";
        # The child's alarm survives the exec: a hung example dies of SIGALRM.
        my $pid = spawn(sub {
            open STDOUT, '>', $out or die "open $out: $!";
            exec $^X, (map { "-I$_" } grep { !ref } @INC), "$eg/$name", @{ $ex->{args} };
            die "exec $^X: $!";
        }, timeout => 60);
        reap_ok($pid, "$name exits 0");
        open my $fh, '<', $out or die "open $out: $!";
        my $text = do { local $/; <$fh> };
        like($text, $ex->{out}, "$name reports every item");
    }
}

done_testing;
