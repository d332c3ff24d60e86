# The code in the manuals and the README runs as printed. Every verbatim
# block (consecutive verbatim paragraphs are one block) of the POD in lib/
# and of README.pod is one of:
#
#   a program     its first line is `use ...;`: this test runs it (under
#                 strict and warnings, in a temporary directory, its /tmp/
#                 paths moved there, with a time limit) and wants exit
#                 status 0 and nothing on standard error;
#   a fragment    its first line is a comment that starts with "fragment"
#                 (`# fragment: ...`, or `// fragment` and `/* fragment` in
#                 Rust and C): not run, and the reader sees why;
#   a signature   Perl statements that each call one method, as under each
#                 method's entry (`my $ok = $q->push($value);`): not run;
#   not Perl      shell commands, tables, messages, output (no line ends
#                 with `;` or a brace).
#
# Any other Perl block fails the test: make it a program or mark it. The
# programs and fragments of one section share their files, no two sections
# do, so that running the examples in turn never finds a queue of another
# type at a path.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";
use DQSTest;
use File::Find ();
use File::Spec ();
use Test::More;
use Data::Queue::Shared;

watchdog(300);

my $root = File::Spec->rel2abs(File::Spec->catdir($FindBin::Bin, File::Spec->updir));
my $dir  = tmpdir();

my @files = ("$root/README.pod");
File::Find::find({ no_chdir => 1, wanted => sub { push @files, $_ if /\.p(?:m|od)\z/ && -f } },
                 "$root/lib");
@files = sort @files;

# The verbatim blocks of a POD file: [line number, text without the
# common indentation, the heading it is under].
sub blocks {
    my ($file) = @_;
    open my $fh, '<', $file or die "open $file: $!";
    my @lines = <$fh>;
    my (@blocks, @cur, $start);
    my $in_pod = $file =~ /\.pod\z/;
    my $para_start = 1;    # the line begins a paragraph
    my $in_verbatim = 0;   # the current paragraph is verbatim
    my $head = '';
    my $flush = sub {
        return unless @cur;
        pop @cur while @cur && $cur[-1] =~ /^\s*$/;
        my ($indent) = sort { length $a <=> length $b } map { /^([ \t]*)\S/ ? $1 : () } @cur;
        s/^\Q$indent\E// for @cur;
        push @blocks, [$start, join('', @cur), $head];
        @cur = ();
    };
    for my $i (0 .. $#lines) {
        local $_ = $lines[$i];
        if (/^=(\w+)\s*(.*)/ && $para_start) {
            my ($command, $text) = ($1, $2);
            $flush->();
            $head = "=$command $text" if $command =~ /\Ahead/;
            $in_pod = $command ne 'cut';
            $in_verbatim = 0;
            $para_start = 0;
            next;
        }
        next unless $in_pod;
        if (/^\s*$/) {
            $para_start = 1;
            push @cur, "\n" if @cur;
            next;
        }
        if ($para_start) {
            $in_verbatim = /^[ \t]/;
            $flush->() unless $in_verbatim;
            $start = $i + 1 if $in_verbatim && !@cur;
        }
        $para_start = 0;
        push @cur, $_ if $in_verbatim;
    }
    $flush->();
    return @blocks;
}

# Is every statement of $code one method call (with what it returns
# assigned, an `or`/`if` after it, a hash of options as an argument)?
sub is_signature {
    my ($code) = @_;
    (my $c = $code) =~ s/#[^\n]*//g;
    for my $stmt (grep { /\S/ } split /;/, $c) {
        return 0 unless $stmt =~ /->\s*\w/;
        return 0 if $stmt =~ /\b(?:for|foreach|while|until|sub|do|eval)\b|\bif\s*\(|\.\.\./;
        # Braces only around a hash of options: { name => ...
        return 0 if $stmt =~ /\{(?!\s*\w+\s*=>)/;
    }
    return 1;
}

my (%count, %path_of);
for my $file (@files) {
    (my $rel = $file) =~ s{\A\Q$root\E/}{};
    for my $b (blocks($file)) {
        my ($line, $code, $head) = @$b;
        my $where = "$rel line $line";
        my ($first) = $code =~ /\A([^\n]*)/;
        my $fragment = $first =~ m{\A(?:#|//|/\*) fragment\b};
        my $program  = $first =~ /\Ause [\w:]+/;
        if ($fragment || $program) {
            $path_of{$1}{"$rel $head"} = 1 while $code =~ m{(/tmp/[\w./-]+)}g;
        }
        if ($fragment) {
            $count{fragment}++;
            next;
        }
        if ($program) {
            $count{program}++;
            run_program($where, $code);
            next;
        }
        # Perl: a line that ends a statement or opens or closes a block,
        # and names a variable, a method or a package.
        my $perlish = grep { /[;{}]\s*(?:#.*)?$/ && /[\$\@%]\w|->|::/ } split /\n/, $code;
        if (!$perlish) {
            $count{text}++;
            next;
        }
        $count{signature}++;
        ok(is_signature($code), "$where: method signatures")
            or diag "a Perl block that is neither a program (first line use ...;) nor"
                  . " marked '# fragment' nor method calls:\n$code";
    }
}
note join ', ', map { "$count{$_} ${_}s" } sort keys %count;
cmp_ok($count{program} // 0, '>=', 9, 'the programs were found');
cmp_ok($count{signature} // 0, '>=', 50, 'so were the method signatures');

# No two programs use the same file.
for my $path (sort keys %path_of) {
    my @in = sort keys %{ $path_of{$path} };
    is(scalar @in, 1, "$path is used by the examples of one section only")
        or diag "used in: ", join '; ', @in;
}

done_testing;

sub run_program {
    my ($where, $code) = @_;
    SKIP: {
        skip "$where: uses the keywords, and this build has none", 1
            if !$Data::Queue::Shared::HAVE_KEYWORDS && $code =~ /\bq_(?:int|int16|int32|str)_\w+/;
        my $n = ++$count{run};
        my $run = "$dir/$n";
        mkdir $run or die "mkdir $run: $!";
        (my $moved = $code) =~ s{/tmp/}{$run/}g;
        open my $fh, '>', "$run/example.pl" or die "open: $!";
        print {$fh} "#line 1 \"$where\"\n", $moved;
        close $fh or die "close: $!";
        my $pid = spawn(sub {
            chdir $run or die "chdir $run: $!";
            open STDOUT, '>', "$run/out" or die "open: $!";
            open STDERR, '>', "$run/err" or die "open: $!";
            # Under strict and warnings, which a reader's program has too.
            exec $^X, (map { "-I$_" } grep { !ref } @INC), '-Mstrict', '-Mwarnings',
                "$run/example.pl";
            die "exec $^X: $!";
        }, timeout => 60);
        my $status = reap($pid);
        my $err = do { local (@ARGV, $/) = "$run/err"; <> } // '';
        ok($status == 0 && $err eq '', "$where: runs, exit 0, nothing on stderr")
            or diag sprintf "exit %d, signal %d, stderr:\n%s", $status >> 8, $status & 127, $err;
    }
}
