# The dqs command-line tool, one subcommand at a time: create (types,
# modes, existing files), push and pop (values, ranges, full and empty,
# -0, --raw, lossy text), peek, stats (text and --json), clear, unlink,
# help, and the exit codes 0/1/2 with their one-line messages. Queues are
# checked from Perl with the module's own classes.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use DQSCli;
use Test::More;
use JSON::PP ();

use Data::Queue::Shared::Int;
use Data::Queue::Shared::Int32;
use Data::Queue::Shared::Int16;
use Data::Queue::Shared::Str;

watchdog(120);

my $dir = tmpdir();
my $seq = 0;
sub fresh { "$dir/q" . $seq++ . '.shm' }
sub mode_of { (stat $_[0])[2] & 07777 }

my %CLASS = (
    int   => 'Data::Queue::Shared::Int',
    int32 => 'Data::Queue::Shared::Int32',
    int16 => 'Data::Queue::Shared::Int16',
    str   => 'Data::Queue::Shared::Str',
);

subtest 'help for the tool and every subcommand' => sub {
    my $r = dqs(['--help']);
    is $r->{code}, 0, '--help exits 0';
    like $r->{out}, qr/\b$_\b/, "--help lists $_"
        for qw(create push pop peek stats watch clear unlink);
    like $r->{out}, qr/Exit codes/, '--help documents the exit codes';
    for my $sub (qw(create push pop peek stats watch clear unlink)) {
        my $h = dqs([$sub, '--help']);
        is $h->{code}, 0, "$sub --help exits 0";
        like $h->{out}, qr/Usage: dqs $sub/, "$sub --help shows its usage";
    }
    like dqs(['push', '--help'])->{out}, qr/never\s+truncated/, 'push --help documents the range rule';
    like dqs(['push', '--help'])->{out}, qr/UTF-8\s+flag/, 'push --help documents the UTF-8 flag';
    like dqs(['pop', '--help'])->{out}, qr/--raw/, 'pop --help documents --raw';
    is dqs(['--version'])->{out}, "dqs $Data::Queue::Shared::VERSION\n",
        "--version is the module's version ($Data::Queue::Shared::VERSION)";
    my $none = dqs([]);
    is $none->{code}, 2, 'no subcommand: exit 2';
    one_line_err($none, qr/^dqs: missing subcommand\b.*dqs --help/,
        'no subcommand: one line pointing at --help, not the whole help');
    is $none->{out}, '', 'no subcommand: nothing on stdout';
};

subtest 'usage errors: exit 2 and one line on stderr' => sub {
    my $p = fresh();
    for my $case (
        [[qw(frobnicate x)],                           qr/frobnicate/],
        [['create', $p, '--type', 'int'],              qr/--capacity/],
        [['create', $p, qw(--type float --capacity 4)], qr/float/],
        [['create', $p, qw(--type int -c 4 --mode 0999)], qr/0999/],
        [['create', $p, qw(--type int -c 4 --mode 4755)], qr/'4755' sets the setuid, setgid or sticky bit/],
        [['create', $p, qw(--type int -c 4 --mode 2770)], qr/2770.*setgid/],
        [['create', $p, qw(--type int -c 4 --mode 1777)], qr/1777.*sticky/],
        [['pop', $p, qw(--wait NaN)],                  qr/NaN/],
        [['pop', $p, qw(--wait soon)],                 qr/soon/],
        [['pop', $p, qw(-n 2 --all)],                  qr/--all/],
        [['push', $p],                                 qr/VALUE/],
        [['stats', $p, '--yaml'],                      qr/--yaml/],
        [['watch', $p, qw(--interval 0)],              qr/interval/],
    ) {
        my ($args, $re) = @$case;
        my $r = dqs($args);
        is $r->{code}, 2, "@$args: exit 2";
        one_line_err($r, $re, "@$args: one line naming the problem");
        is $r->{out}, '', "@$args: nothing on stdout";
    }
    ok !-e $p, 'no file was created by any of them';
};

subtest 'create: every type, attached from Perl' => sub {
    for my $type (sort keys %CLASS) {
        my $p = fresh();
        my $r = dqs(['create', $p, '--type', $type, '--capacity', 5]);
        is $r->{code}, 0, "create $type: exit 0" or diag $r->{err};
        is $r->{err}, '', 'quietly';
        is mode_of($p), 0600, 'default mode 0600';
        my $q = $CLASS{$type}->new($p, 64);
        is $q->capacity, 8, "$CLASS{$type} attaches; capacity rounded up to 8";
        my $again = dqs(['create', $p, '--type', $type, '--capacity', 7]);
        is $again->{code}, 0, 'create again with the same geometry: exit 0';
        my $other = $type eq 'str' ? 'int' : 'str';
        my $bad = dqs(['create', $p, '--type', $other, '--capacity', 8]);
        is $bad->{code}, 2, "create as $other over a $type queue: exit 2";
        one_line_err($bad, qr/\Q$p\E.*holds an? \w+ queue/, 'the message says what it holds');
        my $big = dqs(['create', $p, '--type', $type, '--capacity', 16]);
        is $big->{code}, 2, 'another capacity: exit 2';
        one_line_err($big, qr/capacity 8\b.*, not 16\b/, 'the message names both capacities');
        is $q->capacity, 8, 'the file is untouched';
    }
    my $p = fresh();
    is dqs(['create', $p, qw(--type str --capacity 4 --arena 10000 --mode 0640)])->{code}, 0,
        'str with --arena and --mode';
    is mode_of($p), 0640, 'mode applied exactly';
    is dqs(['stats', $p, '--json'])->{out} =~ /"arena_cap":10000\b/ ? 1 : 0, 1, 'arena as asked';
    my $r = dqs(['create', $p, qw(--type str --capacity 4)]);
    is $r->{code}, 2, 'same capacity, default arena differs: exit 2';
    one_line_err($r, qr/10000-byte arena/, 'names the arena');
    $r = dqs(['create', fresh(), qw(--type int --capacity 4 --arena 8192)]);
    is $r->{code}, 2, '--arena on an int queue: exit 2';
    one_line_err($r, qr/--arena/, 'says so');
    $r = dqs(['create', fresh(), qw(--type int --capacity 0)]);
    is $r->{code}, 2, 'capacity 0: exit 2';
    one_line_err($r, qr/capacity 0/, 'names the capacity');
};

subtest 'attaching never creates; bad files are exit 2' => sub {
    my $p = "$dir/missing.shm";
    for my $args (
        ['push', $p, 1], ['pop', $p], ['peek', $p], ['stats', $p],
        ['watch', $p, '--count', 1], ['clear', $p], ['unlink', $p],
    ) {
        my $r = dqs($args);
        is $r->{code}, 2, "$args->[0] on a missing path: exit 2";
        one_line_err($r, qr/^dqs $args->[0]: \Q$p\E: no such queue file/, 'one line naming the path');
        ok !-e $p, 'nothing created';
    }
    my $junk = fresh();
    spew($junk, "x" x 4096);
    for my $sub (qw(pop stats unlink)) {
        my $r = dqs([$sub, $junk]);
        is $r->{code}, 2, "$sub on a file that is no queue: exit 2";
        one_line_err($r, qr/invalid or incompatible queue file \(bad magic\)/, 'says why');
    }
    ok -e $junk, 'unlink refused to remove it';
    my $r = dqs(['pop', $dir]);
    is $r->{code}, 2, 'a directory: exit 2';
    symlink(fresh(), my $link = "$dir/link") or die "symlink: $!";
    Data::Queue::Shared::Int->new(readlink($link), 4);
    $r = dqs(['pop', $link]);
    is $r->{code}, 2, 'a symlink: exit 2';
    one_line_err($r, qr/symlink/, 'refuses to follow it');
};

subtest 'push and pop integers; ranges are checked, never truncated' => sub {
    for my $type (qw(int int32 int16)) {
        my $p = fresh();
        my $q = $CLASS{$type}->new($p, 8);
        my $r = dqs(['push', $p, 1, -5, '+7', ' 42 ']);
        is $r->{code}, 0, "$type: push 4 values" or diag $r->{err};
        is_deeply [map { $q->pop } 1 .. 4], [1, -5, 7, 42], 'Perl pops them in order';
        my ($lo, $hi) = $type eq 'int16' ? (-32768, 32767)
                      : $type eq 'int32' ? (-2147483648, 2147483647)
                      : ('-9223372036854775808', '9223372036854775807');
        is dqs(['push', $p, $lo, $hi])->{code}, 0, "$type: the extremes fit";
        is_deeply [$q->pop, $q->pop], [$lo, $hi], 'and come back exactly';
        my $over = $type eq 'int16' ? 32768
                 : $type eq 'int32' ? 2147483648
                 : '9223372036854775808';
        $r = dqs(['push', $p, 3, $over]);
        is $r->{code}, 2, "$type: $over is exit 2";
        one_line_err($r, qr/value \Q$over\E is out of range/, 'the message names the value');
        is $q->size, 0, 'and nothing was pushed (arguments are checked first)';
        $r = dqs(['push', $p, 'abc']);
        is $r->{code}, 2, 'not a number: exit 2';
        one_line_err($r, qr/'abc' is not an integer/, 'names it');
    }
};

subtest '--wait -1 waits for ever, as in the Perl API' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int->new($p, 2);
    $q->push(1);
    my $r = dqs(['pop', $p, '--wait', '-1']);
    is_deeply [$r->{code}, $r->{out}], [0, "1\n"], 'pop --wait -1 takes an item that is there';
    # Waits until a count of waiters is 1, or the dqs process has ended
    # (then its status is kept for $finish).
    my %ended;
    my $until_waiting = sub {
        my ($pid, $key) = @_;
        until ($q->stats->{$key} > 0) {
            my $st = DQSTest::reap($pid, 1);
            if (defined $st) { $ended{$pid} = $st; return }
            select undef, undef, undef, 0.02;
        }
    };
    my $finish = sub {
        my ($pid, $out) = @_;
        my $st = delete $ended{$pid} // DQSTest::reap($pid);
        return [$st >> 8, slurp($out)];
    };
    # Blocked until an item comes: the pop is still waiting when it is pushed.
    my ($pid, $out) = dqs_bg(['pop', $p, '--wait', '-1']);
    $until_waiting->($pid, 'pop_waiters');
    $q->push(42);
    is_deeply $finish->($pid, $out), [0, "42\n"], 'pop --wait -1 waited for the push';
    $q->push($_) for 1, 2;
    ($pid, $out) = dqs_bg(['push', $p, '--wait', '-1', 3]);
    $until_waiting->($pid, 'push_waiters');
    is $q->pop, 1, 'room made';
    is $finish->($pid, $out)->[0], 0, 'push --wait -1 waited for room';
    is_deeply [$q->drain], [2, 3], 'and pushed';
};

subtest 'full and empty are exit 1' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int->new($p, 2);
    my $r = dqs(['push', $p, 10, 20, 30]);
    is $r->{code}, 1, 'push onto a queue with room for 2 of 3: exit 1';
    one_line_err($r, qr/queue is full \(pushed 2 of 3 items\)/, 'says how many');
    is_deeply [$q->pop, $q->pop, $q->pop], [10, 20, undef], 'the first two are there';
    $p = fresh();
    $q = Data::Queue::Shared::Int->new($p, 8);
    $q->push($_) for 1, 2;
    $r = dqs(['pop', $p, '-n', 5]);
    is $r->{code}, 1, 'pop -n 5 with 2 items: exit 1';
    is $r->{out}, "1\n2\n", 'prints the two';
    one_line_err($r, qr/queue is empty \(popped 2 of 5 items\)/, 'says how many');
    $r = dqs(['pop', $p]);
    is $r->{code}, 1, 'pop on an empty queue: exit 1';
    is $r->{out}, '', 'prints nothing';
    one_line_err($r, qr/^dqs pop: queue is empty$/, 'one line');
    $r = dqs(['peek', $p]);
    is $r->{code}, 1, 'peek on an empty queue: exit 1';
    $q->push($_) for 7, 8, 9;
    $r = dqs(['peek', $p]);
    is_deeply [$r->{code}, $r->{out}], [0, "7\n"], 'peek shows the front';
    is $q->size, 3, 'and leaves it';
    $r = dqs(['pop', $p, '--all']);
    is_deeply [$r->{code}, $r->{out}], [0, "7\n8\n9\n"], 'pop --all drains';
    is dqs(['pop', $p, '--all'])->{code}, 1, 'pop --all on an empty queue: exit 1';
    $q->push($_) for 1, 2;
    $r = dqs(['pop', $p, '-n', 2, '-0']);
    is_deeply [$r->{code}, $r->{out}], [0, "1\0002\000"], 'integers with -0';
    my $st = $q->stats;
    is $st->{pop_ok}, 7, 'pop_ok counts every pop by dqs';
};

subtest 'str: text, -0 and --raw output of Perl items' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Str->new($p, 16);
    my $smile = "caf\x{e9} \x{263a}";
    my @items = ($smile, "\xff\x00bytes", '', "two\nlines");
    $q->push($_) for @items;
    my $r = dqs(['pop', $p, '-n', 4, '-0']);
    is $r->{code}, 0, 'pop -n 4 -0';
    my $want = join '', map { "$_\0" } do { my $u = $smile; utf8::encode($u); $u }, @items[1 .. 3];
    is $r->{out}, $want, 'exact bytes, NUL after each (UTF-8 items as their encoding)';
    $q->push($_) for @items;
    $r = dqs(['pop', $p, '-n', 4]);
    my $text = $smile;
    utf8::encode($text);
    is $r->{out}, "$text\n\x{ef}\x{bf}\x{bd}\x{00}bytes\n\ntwo\nlines\n",
        'text output: one item per line, bytes that are not UTF-8 as U+FFFD'
        or diag explain $r->{out};
    $q->push("\xff\n\x00");
    $r = dqs(['peek', $p, '--raw']);
    is $r->{out}, "\xff\n\x00", 'peek --raw: the exact bytes, nothing added';
    $r = dqs(['pop', $p, '--raw']);
    is $r->{out}, "\xff\n\x00", 'pop --raw likewise';
    is $q->size, 0, 'popped';
};

subtest 'str: the UTF-8 flag of items pushed by dqs' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Str->new($p, 16);
    my $cafe = "caf\xc3\xa9";                     # UTF-8 bytes of "caf\x{e9}"
    is dqs(['push', $p, 'plain', $cafe])->{code}, 0, 'push plain and UTF-8 arguments';
    is dqs(['push', $p, '-', '-0'], stdin => "\xff\xfe\0$cafe\0\0last")->{code}, 0,
        'push NUL-separated from stdin (an empty item, a last item without NUL)';
    my @got = map { my $s = $q->pop; [$s, utf8::is_utf8($s) ? 1 : 0] } 1 .. 6;
    is_deeply \@got, [
        ['plain', 0], ["caf\x{e9}", 1], ["\xff\xfe", 0], ["caf\x{e9}", 1], ['', 0], ['last', 0],
    ], 'flag set only on valid UTF-8 with non-ASCII; ASCII and bytes stay byte strings';
    is dqs(['push', $p, '--utf8', 'plain', $cafe])->{code}, 0, 'push --utf8';
    @got = map { my $s = $q->pop; [$s, utf8::is_utf8($s) ? 1 : 0] } 1 .. 2;
    is_deeply \@got, [['plain', 1], ["caf\x{e9}", 1]], '--utf8 flags every item';
    my $r = dqs(['push', $p, '--utf8', "ok", "bad\xff"]);
    is $r->{code}, 2, '--utf8 with invalid UTF-8: exit 2';
    one_line_err($r, qr/not valid UTF-8/, 'says so');
    is $q->size, 0, 'nothing pushed';
    is dqs(['push', $p, '--bytes', $cafe])->{code}, 0, 'push --bytes';
    my $s = $q->pop;
    ok !utf8::is_utf8($s) && $s eq $cafe, '--bytes never sets the flag';
    is dqs(['push', $p, '-'], stdin => "a\n\nb\r\nc")->{code}, 0, 'lines from stdin';
    is_deeply [map { $q->pop } 1 .. 4], ['a', '', "b\r", 'c'],
        'one item per line: empty lines are items, CR kept, last line without newline';
    is dqs(['push', $p, '--', '-x', '-0'])->{code}, 0, 'values after -- may start with -';
    is_deeply [$q->pop, $q->pop], ['-x', '-0'], 'pushed literally';
    $r = dqs(['push', $p, 'a', '-']);
    is $r->{code}, 2, '- mixed with values: exit 2';
    $r = dqs(['push', $p, 'x' x 5000]);
    is $r->{code}, 2, 'an item that can never fit: exit 2';
    one_line_err($r, qr/5000/, 'names its size');
};

subtest 'push from stdin: integers, a bad line, -0' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int16->new($p, 16);
    is dqs(['push', $p, '-'], stdin => "1\n-2\n 3 \n")->{code}, 0, 'lines';
    is_deeply [map { $q->pop } 1 .. 3], [1, -2, 3], 'in order';
    my $r = dqs(['push', $p, '-'], stdin => "4\n5\n70000\n6\n");
    is $r->{code}, 2, 'an out-of-range line: exit 2';
    one_line_err($r, qr/line 3 of standard input: value 70000 is out of range for an Int16 queue \(-32768 \.\. 32767\); the 2 items before it were pushed, nothing after it/,
        'names the line, the value and what was pushed');
    is_deeply [$q->pop, $q->pop, $q->pop], [4, 5, undef], 'the lines before it were pushed';
    $r = dqs(['push', $p, '-'], stdin => "1\n\n2\n \t\n3\n\n");
    is $r->{code}, 0, 'blank lines are skipped, not the end of the input';
    is $r->{err}, '', '... silently';
    is_deeply [map { $q->pop } 1 .. 4], [1, 2, 3, undef], '... and every number went in';
    $r = dqs(['push', $p, '-'], stdin => "7\n\nx\n8\n");
    one_line_err($r, qr/line 3 of standard input: 'x' is not an integer; the 1 items before it/,
        'the line number counts the blank lines');
    is_deeply [$q->pop, $q->pop], [7, undef], '... 7 went in, 8 did not';
    is dqs(['push', $p, '-', '-0'], stdin => "10\0\0 \00011")->{code}, 0, '-0: blank records are skipped';
    is_deeply [$q->pop, $q->pop, $q->pop], [10, 11, undef], '... and the rest pushed';
    is dqs(['push', $p, '-', '-0'], stdin => "8\0009\000")->{code}, 0, '-0';
    is_deeply [$q->pop, $q->pop, $q->pop], [8, 9, undef], 'NUL-separated integers';
    is dqs(['push', $p, '-'], stdin => '')->{code}, 0, 'empty input pushes nothing, exit 0';
    $r = dqs(['push', $p, '-'], stdin => join '', map { "$_\n" } 1 .. 20);
    is $r->{code}, 1, '20 lines into 16 slots: exit 1';
    one_line_err($r, qr/queue is full \(pushed 16 items/, 'says how many');
};

subtest 'stats: text and --json agree with Perl' => sub {
    for my $type (qw(int str)) {
        my $p = fresh();
        my $q = $CLASS{$type}->new($p, 8);
        $q->push($_) for 1 .. 3;
        $q->pop;
        $q->pop for 1 .. 3;    # two of them find it empty
        $q->push(9);
        my $r = dqs(['stats', $p, '--json']);
        is $r->{code}, 0, "$type: stats --json";
        like $r->{out}, qr/\A\{[^\n]*\}\n\z/, 'one object on one line';
        my $j = JSON::PP::decode_json($r->{out});
        my $s = $q->stats;
        is $j->{path}, $p, 'path';
        is $j->{type}, ucfirst $type, 'type';
        for my $k (sort keys %$s) {
            is $j->{$k}, $s->{$k}, "$k == Perl's ($s->{$k})";
        }
        my @str = qw(arena_cap arena_used lock_acquired lock_contended compressed compressed_saved);
        if ($type eq 'str') {
            ok exists $j->{$_}, "str has $_" for @str;
        } else {
            ok !exists $j->{$_}, "int has no $_" for @str;
        }
        my $t = dqs(['stats', $p]);
        is $t->{code}, 0, 'stats (text)';
        my @lines = split /\n/, $t->{out};
        my @bad = grep { !/\A[a-z_]+ +\S/ } @lines;
        is_deeply \@bad, [], 'every line is a name, spaces, a value';
        my %kv = map { /\A(\S+) +(.*)\z/ } @lines;
        is_deeply [map { /\A(\S+)/ } @lines], ['path', 'type', grep { !/\A(?:path|type)\z/ } @{ [$r->{out} =~ /"(\w+)":/g] }],
            'the same names as --json, in the same order';
        is $kv{$_}, $j->{$_}, "text $_ == JSON's" for grep { $_ ne 'path' } keys %$j;
        is $kv{size}, 1, 'size line';
        is $kv{pop_empty}, $s->{pop_empty}, 'pop_empty line';
        is $kv{type}, ucfirst $type, 'type line';
    }
};

subtest 'clear and unlink' => sub {
    my $p = fresh();
    my $q = Data::Queue::Shared::Int32->new($p, 8);
    $q->push($_) for 1 .. 5;
    my $r = dqs(['clear', $p]);
    is_deeply [$r->{code}, $r->{out}], [0, "5\n"], 'clear prints how many it removed';
    is $q->size, 0, 'empty for Perl';
    is dqs(['unlink', $p])->{code}, 0, 'unlink';
    ok !-e $p, 'file gone';
    is $q->push(1), 1, 'the attached handle still works';
    my $half = fresh();
    spew($half, "\0" x 4096);
    $r = dqs(['pop', $half]);
    is $r->{code}, 2, 'an interrupted create: exit 2';
    one_line_err($r, qr/incomplete queue file/, 'says so');
    is dqs(['unlink', $half])->{code}, 0, 'but unlink removes it';
    ok !-e $half, 'gone';
    for my $version (1, 2) {
        for my $len (64, 8192) {
            my $c = fresh();
            spew($c, pack('VV', 0x51554531, $version) . "\0" x ($len - 8));
            $r = dqs(['pop', $c]);
            one_line_err($r, qr/the C implementation.*remove it/, "a C-format file ($version, $len bytes): pop says to remove it");
            $r = dqs(['unlink', $c]);
            is $r->{code}, 0, '... and unlink removes it';
            ok !-e $c, '... gone';
        }
    }
    my $other = fresh();
    spew($other, pack('VV', 0x51554531, 7) . "\0" x 4088);
    is dqs(['unlink', $other])->{code}, 2, 'the same magic with another version is not a queue file: not removed';
    ok -e $other, '... still there';
};

done_testing;
