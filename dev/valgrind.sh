#!/usr/bin/env bash
# The Perl test suite under valgrind memcheck, forked children included.
# Fails on any invalid read or write, use of uninitialised memory, invalid
# free, or a "definitely lost" block. perl's own allocations that it never
# frees at exit are "still reachable" and are not reported. Programs that
# are not ours (cargo, rustc, the C compiler and linker, mount) run
# untraced; dev/valgrind.supp holds the suppressions for other tools' and
# perl's own leaks. DQS_VALGRIND=1 and DQS_TIMEOUT_FACTOR (default 10: the
# tests' watchdogs and child alarms last 10 times longer) are set for the
# tests. Needs a normal build first (perl Makefile.PL && make). Usage:
#
#     dev/valgrind.sh              # every test in t/
#     dev/valgrind.sh t/01-*.t     # only these
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind: not installed (apt-get install valgrind)" >&2; exit 2; }
logs=target/valgrind
rm -rf "$logs"; mkdir -p "$logs"
[ $# -gt 0 ] || set -- t/*.t
fail=0
start=$SECONDS
for t in "$@"; do
    name=$(basename "$t" .t)
    t0=$SECONDS
    if ! PERL_DESTRUCT_LEVEL=2 DQS_VALGRIND=1 DQS_TIMEOUT_FACTOR=${DQS_TIMEOUT_FACTOR:-10} valgrind --tool=memcheck --trace-children=yes \
        --trace-children-skip='*/cargo,*/rustc,*/rustup,*/cc,*gcc*,*/cc1,*/collect2,*/ld,*/ld.*,*/as,*/mount,*/umount' \
        --child-silent-after-fork=no --leak-check=full --show-leak-kinds=definite \
        --errors-for-leak-kinds=definite --error-exitcode=99 --suppressions=dev/valgrind.supp --num-callers=30 \
        --log-file="$logs/$name.%p.log" perl -Ilib "$t" >"$logs/$name.out" 2>&1; then
        echo "valgrind: $t FAILED after $((SECONDS - t0))s (see $logs/$name.*)"; fail=1; continue
    fi
    if grep -l -E "Invalid (read|write|free)|uninitialised|definitely lost: [1-9]" "$logs/$name".*.log >/dev/null 2>&1; then
        echo "valgrind: $t has memcheck errors:"; grep -l -E "Invalid|uninitialised|definitely lost: [1-9]" "$logs/$name".*.log; fail=1
    else
        echo "valgrind: $t clean ($((SECONDS - t0))s)"
    fi
done
echo "valgrind: $# test files in $((SECONDS - start))s: $([ $fail = 0 ] && echo all clean || echo FAILURES)"
exit $fail
