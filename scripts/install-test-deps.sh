#!/bin/sh
# Installs what the test suite needs, if it is missing; with --bench also what the benchmark
# studies need (hyperfine, the reference of benchmarks/overhead.py and calibration.py).
# Idempotent; does nothing when everything is present.
#
# System packages (Debian): the C and C++ compilers, Google Benchmark (libbenchmark-dev) for the
# harness adapter tests, Chromium for the HTML report test, and Go and Rust's cargo when the
# machine has neither. Python packages (pytest-benchmark among them) come with `make setup` (the
# dev extra). The criterion crates are fetched from crates.io here, so that the test that builds
# the criterion bench (tests/adapters/conftest.py, cached in ~/.cache/pairbench-tests) finds them.
set -eu
missing=""
need() { command -v "$1" >/dev/null 2>&1 || missing="$missing $2"; }
need cc gcc
need g++ g++
need go golang-go
need cargo cargo
[ -f /usr/include/benchmark/benchmark.h ] || missing="$missing libbenchmark-dev"
if [ "${1:-}" = --bench ]; then need hyperfine hyperfine; fi
# a real PostgreSQL server for the history store's tests (tests/support/postgres.py starts its own
# unprivileged cluster; Debian puts initdb in /usr/lib/postgresql/VERSION/bin, not on the PATH)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 \
    || missing="$missing postgresql"
# headless browser for the HTML report test (tests/report/test_browser.py)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
    || command -v google-chrome >/dev/null 2>&1 || missing="$missing chromium"
if [ -n "$missing" ]; then
    echo "installing system packages:$missing"
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi
# the criterion bench's crates, once (cargo keeps them in ~/.cargo/registry)
crate="$(dirname "$0")/../tests/adapters/programs/critbench"
stamp="${HOME}/.cache/pairbench-tests/crates-fetched"
if [ ! -f "$stamp" ] && command -v cargo >/dev/null 2>&1; then
    work="$(mktemp -d)"
    cp -r "$crate/." "$work/"
    (cd "$work" && cargo fetch --quiet) && mkdir -p "$(dirname "$stamp")" && touch "$stamp"
    rm -rf "$work"
fi
