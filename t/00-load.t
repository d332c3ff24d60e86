use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use Test::More;

my @methods = qw(
    new new_memfd new_from_fd memfd
    push pop push_wait pop_wait peek
    push_multi pop_multi push_wait_multi pop_wait_multi drain
    size capacity is_empty is_full clear sync unlink path stats
    DESTROY CLONE_SKIP
);

subtest 'modules load' => sub {
    use_ok('Data::Queue::Shared');
    use_ok($_) for @INT_CLASSES, 'Data::Queue::Shared::Str';
};

subtest 'one version for every module' => sub {
    my $v = $Data::Queue::Shared::VERSION;
    ok(defined $v, 'Data::Queue::Shared has a $VERSION');
    like($v, qr/\A\d+\.\d+\z/, 'plain decimal version');
    for my $class (@INT_CLASSES, 'Data::Queue::Shared::Str') {
        no strict 'refs';
        is(${"${class}::VERSION"}, $v, "$class has the same version");
    }
};

subtest 'a version above the C implementation it replaces (0.12)' => sub {
    ok(eval 'use Data::Queue::Shared 0.12; 1', 'use Data::Queue::Shared 0.12') or diag($@);
    ok(eval 'use Data::Queue::Shared 0.06; 1', 'use Data::Queue::Shared 0.06 (the mode argument)')
        or diag($@);
    for my $class (@INT_CLASSES, 'Data::Queue::Shared::Str') {
        ok(eval "use $class 0.12; 1", "use $class 0.12") or diag($@);
    }
    ok(!eval 'use Data::Queue::Shared 99; 1', 'a version from the future is refused');
    cmp_ok($Data::Queue::Shared::VERSION, '>=', 0.20, '$VERSION is 0.20 or later');
};

for my $class (@INT_CLASSES) {
    subtest "$class has every method" => sub {
        can_ok($class, @methods);
    };
}

subtest 'Data::Queue::Shared::Str has every method, deque operations too' => sub {
    can_ok('Data::Queue::Shared::Str', @methods,
        qw(push_front push_front_wait pop_back pop_back_wait));
};

subtest 'deque operations are Str only' => sub {
    for my $class (@INT_CLASSES) {
        ok(!$class->can($_), "$class cannot $_")
            for qw(push_front push_front_wait pop_back pop_back_wait);
    }
};

subtest 'each class loads on its own' => sub {
    for my $class (@INT_CLASSES, 'Data::Queue::Shared::Str') {
        (my $file = "$class.pm") =~ s{::}{/}g;
        my @inc = map { "-I$_" } @INC;
        my $out = qx{$^X @inc -e "use $class; print $class->new(undef, 4)->capacity" 2>&1};
        is($?, 0, "perl -e 'use $class' runs");
        is($out, '4', "$class works after loading only $file");
    }
};

diag("Data::Queue::Shared $Data::Queue::Shared::VERSION, Perl $], $^X");

done_testing;
