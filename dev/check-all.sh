#!/usr/bin/env bash
# Every check of the project, one summary line each (PASS/FAIL/SKIP and
# wall time; each xt/ file is a check of its own), logs in
# target/check-all/. Exit status 0 when nothing failed.
#
#     dev/check-all.sh          # or: make check-all
set -uo pipefail
cd "$(dirname "$0")/.."
logs=target/check-all
mkdir -p "$logs"
summary=()
failed=0

check() {
    local name=$1; shift
    local log=$logs/${name//\//_}.log
    local t0=$SECONDS
    if "$@" >"$log" 2>&1; then r=PASS; else r=FAIL; failed=1; fi
    summary+=("$(printf '%-30s %s  %5ds  (%s)' "$name" "$r" $((SECONDS - t0)) "$log")")
    printf '%s\n' "${summary[-1]}"
}
skip() { summary+=("$(printf '%-30s SKIP  %s' "$1" "$2")"); printf '%s\n' "${summary[-1]}"; }

check build     sh -c 'perl Makefile.PL && make'
check perl-t    prove -l -r t
for t in xt/*.t; do
    check "$t"  env AUTHOR_TESTING=1 prove -l "$t"
done
check cargo     cargo test --release
check fmt       cargo fmt --check
check clippy    cargo clippy --all-targets -- -D warnings
check loom      env RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --lib loom
if cargo +nightly miri --version >/dev/null 2>&1; then
    check miri  env MIRIFLAGS=-Zmiri-disable-isolation cargo +nightly miri test --lib -- arena:: ring::
else
    skip miri "no nightly miri (rustup component add --toolchain nightly miri rust-src)"
fi
check asan      dev/asan.sh
check valgrind  dev/valgrind.sh

echo
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
exit $failed
