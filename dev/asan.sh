#!/usr/bin/env bash
# The Perl test suite against an AddressSanitizer build of the XS *and* the
# Rust core, on the stable toolchain:
#
#   - the Rust staticlib (and the dqs binary) with rustc -Zsanitizer=address,
#     unlocked on stable by RUSTC_BOOTSTRAP=1. There is no -Zbuild-std (it
#     needs nightly and rust-src), so the precompiled std is NOT
#     instrumented: accesses made inside std's own code (Vec, slices'
#     copy_from_slice, String) go unchecked; everything this crate compiles,
#     generics from std monomorphised here included, is checked;
#   - the XS with gcc -fsanitize=address;
#   - one runtime for both, gcc's libasan, preloaded (LD_PRELOAD) because
#     perl itself is not instrumented; it then serves every malloc and free,
#     perl's included, and child processes inherit it. rustc's LLVM emits
#     calls only to entry points that gcc-12's libasan (libasan8) has; the
#     script checks that before running anything.
#
# Leak checking is off here (perl does not free its interpreter at exit);
# dev/valgrind.sh checks for leaks.
#
# It also runs the Rust unit tests (cargo test --release --lib) under ASan,
# with the same runtime and leak checking on.
#
# The build happens in a copy of the tree under target/asan/, so the normal
# build in the working tree is left alone. Usage:
#
#     dev/asan.sh              # build, Rust unit tests, then prove -r t
#     dev/asan.sh t/05-*.t     # build, then only these Perl tests
#
# Environment: DQS_ASAN_RUST=0 leaves the Rust core uninstrumented (XS
# only); DQS_ASAN_CARGO=0 skips the Rust unit tests (they are skipped too
# when test files are named).
#
# Exit status 0 only when the tests pass and ASan reported nothing.
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
work=$top/target/asan
src=$work/src
logs=$work/logs

asan_rt=$(gcc -print-file-name=libasan.so)
[ -e "$asan_rt" ] || { echo "asan: gcc's libasan not found (install libasan8 / gcc)" >&2; exit 2; }
asan_rt=$(readlink -f "$asan_rt")

# ---- a copy of the tree (tracked and new files; no build output) --------
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard \
    | xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh \
    | tar --null -T - -cf - | tar -xf - -C "$src"
# Rewriting the files changed the copy's directory times; give them back
# the originals' (build.rs watches src/), so cargo rebuilds only for a real
# change.
(cd "$top" && git ls-files --cached --others --exclude-standard | sed -n 's|/[^/]*$||p' | sort -u) \
    | while IFS= read -r d; do touch -r "$top/$d" "$src/$d"; done
# The copy's first plain build starts from the working tree's: what cargo
# built of the crates.io dependencies does not depend on where the tree is,
# so only this crate is compiled again. The copy holds cargo's lock on
# that directory, so a cargo building there meanwhile (.ci/run runs one
# beside this script) waits instead of leaving half-written files.
if [ ! -e "$src/target/release" ] && [ -d "$top/target/release" ]; then
    mkdir -p "$src/target"
    flock "$top/target/release/.cargo-lock" \
        cp -a --reflink=auto "$top/target/release" "$src/target/release"
fi
cd "$src"

triple=$(rustc -vV | sed -n 's/^host: //p')
rust_asan=${DQS_ASAN_RUST:-1}
run_cargo=${DQS_ASAN_CARGO:-1}
[ $# -eq 0 ] || run_cargo=0

# ---- the plain build ----------------------------------------------------
# The C-interop test (t/61) links its own C programs against the plain
# target/release staticlib, and t/60 runs the Rust examples built there:
# built now, so that the cargo those tests run has nothing to do. The plain
# dqs too: make copies target/release/dqs into blib/script (EXE_FILES),
# while the tests run the instrumented one (DQS_BIN below).
cargo build --release --lib --bin dqs --examples --target-dir target

# ---- the Rust core, instrumented ----------------------------------------
rust_lib=target/release/libdata_queue_shared.a
dqs_bin=
# --target keeps RUSTFLAGS off build.rs and the proc macros (uninstrumented
# host code). -Zexternal-clangrt: the binaries (dqs, the unit tests) get no
# runtime of their own but link gcc's libasan, the one the Perl tests
# preload, so a dqs started by a test does not bring a second runtime. One
# set of flags for every instrumented build, in a target dir of their own,
# so cargo reuses its output instead of rebuilding the host crates.
rflags="-Zsanitizer=address -Cforce-frame-pointers=yes -Cdebuginfo=1 -Zexternal-clangrt -Clink-arg=$asan_rt"
# The options go right after the subcommand: anything after a `--` in the
# caller's arguments is for the test binary, not for cargo.
asan_cargo() {
    local sub=$1
    shift
    RUSTC_BOOTSTRAP=1 RUSTFLAGS="$rflags" cargo "$sub" --release --target "$triple" --target-dir target/sanitize "$@"
}
if [ "$rust_asan" = 1 ]; then
    asan_cargo build --lib --bin dqs
    rust_lib=target/sanitize/$triple/release/libdata_queue_shared.a
    dqs_bin=$src/target/sanitize/$triple/release/dqs
    touch "$rust_lib"
    # Every ASan entry point the Rust objects call must be in the runtime.
    need=$(cd "$work" && rm -rf syms && mkdir syms && cd syms && ar x "$src/$rust_lib" \
        && readelf -sW ./*.o 2>/dev/null | awk '$7 == "UND" && $8 ~ /^__asan/ {print $8}' | sort -u)
    have=$(nm -D --defined-only "$asan_rt" | awk '{print $3}' | sort -u)
    missing=$(comm -23 <(printf '%s\n' "$need" | grep -v -E '^__(start|stop)_asan_globals$') <(printf '%s\n' "$have"))
    [ -z "$missing" ] || { echo "asan: $asan_rt lacks what rustc's instrumentation calls:" $missing >&2; exit 2; }
    echo "asan: Rust core instrumented (stable rustc, -Zsanitizer=address; std not instrumented); $(printf '%s\n' "$need" | wc -l) ASan entry points, all in $asan_rt"
else
    echo "asan: Rust core NOT instrumented (DQS_ASAN_RUST=0)"
fi

# ---- the Rust unit tests under ASan ---------------------------------------
if [ "$run_cargo" = 1 ]; then
    # The runner preloads the runtime into the test binary only (cargo and
    # rustc must not have it). Leak checking on: no perl here.
    # One test at a time: some tests fork, and gcc 12's libasan does not
    # lock its allocator around fork(), so a child forked while another
    # test thread held one of the allocator's locks blocked in its first
    # malloc for ever (seen: CI, 1 run in a few hundred, the child in
    # SizeClassAllocator64::GetFromAllocator). glibc's malloc, in the
    # plain cargo test, is fork-safe.
    (
        export "CARGO_TARGET_$(echo "$triple" | tr a-z- A-Z_)_RUNNER=env LD_PRELOAD=$asan_rt"
        export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1"
        asan_cargo test --lib -- --test-threads=1
    ) || { echo "asan: the Rust unit tests failed under ASan" >&2; exit 1; }
    echo "asan: Rust unit tests clean under ASan"
fi

# ---- the XS ---------------------------------------------------------------
# MYEXTLIB on the make command line links the instrumented staticlib; it is
# newer than every Rust input, so make does not try to rebuild it.
flags="-fsanitize=address -fno-omit-frame-pointer"
perl Makefile.PL OPTIMIZE="-O1 -g $flags" \
    LDDLFLAGS="$(perl -MConfig -e 'print $Config{lddlflags}') $flags" >/dev/null
make MYEXTLIB="$rust_lib" >/dev/null

# ---- the tests ----------------------------------------------------------
rm -rf "$logs"
mkdir -p "$logs"
[ $# -gt 0 ] || set -- -r t
status=0
env ${dqs_bin:+DQS_BIN="$dqs_bin"} \
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
