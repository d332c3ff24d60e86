#!/usr/bin/env bash
# The Perl test suite against an AddressSanitizer build: the XS compiled by
# gcc with -fsanitize=address and, when a nightly Rust is installed, the
# Rust core built with -Zsanitizer=address (and -Zbuild-std, so std is
# instrumented too). perl itself is not instrumented, so the ASan runtime
# is preloaded (LD_PRELOAD of gcc's libasan); it then serves every malloc
# and free, perl's included. Leak checking is off here (perl does not free
# its interpreter at exit); dev/valgrind.sh checks for leaks.
#
# The build happens in a copy of the tree under target/asan/, so the
# normal build in the working tree is left alone. Usage:
#
#     dev/asan.sh              # build, then prove -r t
#     dev/asan.sh t/05-*.t     # build, then only these tests
#
# Exit status 0 only when the tests pass and ASan reported nothing.
# DQS_ASAN_RUST=1 also instruments the Rust core (nightly, -Zbuild-std);
# that build currently fails (duplicate lang item with -Zbuild-std), so the
# default is the XS only.
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
work=$top/target/asan
src=$work/src
logs=$work/logs

asan_rt=$(gcc -print-file-name=libasan.so)
[ -e "$asan_rt" ] || { echo "asan: gcc's libasan not found (install libasan8 / gcc)" >&2; exit 2; }

# ---- a copy of the tree (tracked and new files; no build output) --------
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard \
    | xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh \
    | tar --null -T - -cf - | tar -xf - -C "$src"
cd "$src"

# ---- the Rust core ------------------------------------------------------
rust_asan=${DQS_ASAN_RUST:-0}
if [ "$rust_asan" = 1 ] && ! cargo +nightly --version >/dev/null 2>&1; then
    echo "asan: no nightly Rust (needed for -Zsanitizer); the Rust core is not instrumented" >&2
    rust_asan=0
fi
triple=$(rustc -vV | sed -n 's/^host: //p')
if [ "$rust_asan" = 1 ]; then
    # --target keeps RUSTFLAGS off build scripts and proc macros.
    RUSTFLAGS="-Zsanitizer=address -Cforce-frame-pointers=yes" \
        cargo +nightly build --release --lib -Zbuild-std --target "$triple" --target-dir target
    mkdir -p target/release
    cp "target/$triple/release/libdata_queue_shared.a" target/release/
    echo "asan: Rust core instrumented (nightly, -Zsanitizer=address -Zbuild-std)"
else
    cargo build --release --lib --target-dir target
    echo "asan: Rust core NOT instrumented"
fi
# Newer than every Rust input, so make does not rebuild it plainly.
touch target/release/libdata_queue_shared.a

# ---- the XS ---------------------------------------------------------------
flags="-fsanitize=address -fno-omit-frame-pointer"
perl Makefile.PL OPTIMIZE="-O1 -g $flags" \
    LDDLFLAGS="$(perl -MConfig -e 'print $Config{lddlflags}') $flags" >/dev/null
make >/dev/null
touch target/release/libdata_queue_shared.a
make >/dev/null

# ---- the tests ----------------------------------------------------------
rm -rf "$logs"
mkdir -p "$logs"
[ $# -gt 0 ] || set -- -r t
status=0
LD_PRELOAD="$asan_rt" \
ASAN_OPTIONS="detect_leaks=0:log_path=$logs/asan:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:handle_segv=1" \
    prove -b "$@" || status=$?

reports=$(find "$logs" -type f | sort)
if [ -n "$reports" ]; then
    echo "asan: ASan reported errors:" >&2
    for f in $reports; do
        echo "---- $f" >&2
        head -60 "$f" >&2
    done
    exit 1
fi
[ "$status" = 0 ] || { echo "asan: the test suite failed under ASan" >&2; exit "$status"; }
echo "asan: clean (no ASan reports; tests passed)"
