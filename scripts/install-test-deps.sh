#!/bin/sh
# Installs the system packages the test suite needs, if they are missing;
# with --bench also those the benchmark studies need (hyperfine, the reference
# of benchmarks/overhead.py and calibration.py).
# Idempotent; does nothing when everything is present.
set -eu
missing=""
need() { command -v "$1" >/dev/null 2>&1 || missing="$missing $2"; }
need cc gcc
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
