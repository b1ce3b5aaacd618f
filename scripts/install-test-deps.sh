#!/bin/sh
# Installs what the test suite needs, if it is missing; with --bench also what the benchmark
# studies need (hyperfine, the reference of benchmarks/overhead.py and calibration.py).
# Idempotent; does nothing when everything is present.
#
# System packages (Debian): the C and C++ compilers, Google Benchmark (libbenchmark-dev) for the
# harness adapter tests, Chromium for the HTML report test, Valgrind for instruction counts, and
# Go and Rust's cargo when the machine has neither. Python packages (pytest-benchmark among them) come with `make setup` (the
# dev extra). The criterion crates are fetched from crates.io here, so that the test that builds
# the criterion bench (tests/adapters/conftest.py, cached in ~/.cache/pairbench-tests) finds them.
# The checks of the CI examples (tests/examples): shellcheck from Debian; actionlint, built from
# the Go module proxy into the same cache's bin; the Go modules of the Kubernetes manifest checker
# (tests/examples/k8scheck), fetched and compiled once.
set -eu
ACTIONLINT_VERSION=v1.7.12
cache="${PAIRBENCH_TEST_CACHE:-$HOME/.cache/pairbench-tests}"
here="$(cd "$(dirname "$0")/.." && pwd)"
missing=""
need() { command -v "$1" >/dev/null 2>&1 || missing="$missing $2"; }
need cc gcc
need g++ g++
need go golang-go
need cargo cargo
need shellcheck shellcheck
# Callgrind, for --metric instructions (tests/measure/test_callgrind.py); its headers come with it
{ command -v valgrind >/dev/null 2>&1 && [ -f /usr/include/valgrind/callgrind.h ]; } || missing="$missing valgrind"
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
    # shellcheck disable=SC2086  # $missing is a list of package names
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi
# the criterion bench's crates, once (cargo keeps them in ~/.cargo/registry)
crate="$here/tests/adapters/programs/critbench"
stamp="${HOME}/.cache/pairbench-tests/crates-fetched"
if [ ! -f "$stamp" ] && command -v cargo >/dev/null 2>&1; then
    work="$(mktemp -d)"
    cp -r "$crate/." "$work/"
    (cd "$work" && cargo fetch --quiet) && mkdir -p "$(dirname "$stamp")" && touch "$stamp"
    rm -rf "$work"
fi
# actionlint, which runs shellcheck on every run: script of a workflow
if ! "$cache/bin/actionlint" -version 2>/dev/null | grep -qx "$ACTIONLINT_VERSION"; then
    echo "installing actionlint $ACTIONLINT_VERSION into $cache/bin"
    mkdir -p "$cache/bin"
    GOBIN="$cache/bin" go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
fi
# the Kubernetes manifest checker's modules (k8s.io/api, sigs.k8s.io/yaml): offline when present (listing
# its packages reads every module it needs, in a fifth of a build's time; the test builds it)
checker="$here/tests/examples/k8scheck"
if ! (cd "$checker" && GOPROXY=off GOFLAGS=-mod=readonly go list -deps . >/dev/null) 2>/dev/null; then
    echo "fetching the Go modules of tests/examples/k8scheck"
    (cd "$checker" && GOFLAGS=-mod=readonly go mod download && GOFLAGS=-mod=readonly go build -o /dev/null .)
fi
