#!/usr/bin/env bash
# The Perl test suite under valgrind memcheck, forked children included.
# Fails on any invalid read or write, use of uninitialised memory, invalid
# free, or a "definitely lost" block. perl's own allocations that it never
# frees at exit are "still reachable" and are not reported. Needs a normal
# build first (perl Makefile.PL && make). Usage:
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
for t in "$@"; do
    name=$(basename "$t" .t)
    if ! PERL_DESTRUCT_LEVEL=2 valgrind --tool=memcheck --trace-children=yes \
        --child-silent-after-fork=no --leak-check=full --show-leak-kinds=definite \
        --errors-for-leak-kinds=definite --error-exitcode=99 --suppressions=dev/valgrind.supp --num-callers=30 \
        --log-file="$logs/$name.%p.log" perl -Ilib "$t" >"$logs/$name.out" 2>&1; then
        echo "valgrind: $t FAILED (see $logs/$name.*)"; fail=1; continue
    fi
    if grep -l -E "Invalid (read|write|free)|uninitialised|definitely lost: [1-9]" "$logs/$name".*.log >/dev/null 2>&1; then
        echo "valgrind: $t has memcheck errors:"; grep -l -E "Invalid|uninitialised|definitely lost: [1-9]" "$logs/$name".*.log; fail=1
    else
        echo "valgrind: $t clean"
    fi
done
exit $fail
