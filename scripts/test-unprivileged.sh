#!/bin/sh
# Runs the tests whose branches depend on privileges (the environment readers,
# unreadable and unexecutable files, what a child can read of pairbench in /proc)
# again as an unprivileged user, when the test suite runs as root (as CI does):
# root reads every file, so the permission-denied branches only run for real
# without it.
#
# That user must reach the Python interpreter, the installed packages and this
# checkout, wherever they are (a clone in a 0700 directory, a virtual environment
# under root's home): tests/support/other_user.py prepares a directory every user
# may enter, with copies (hard links where it can) of what the user cannot reach
# where it is. When no unprivileged user can be become (no such user, neither
# setpriv nor runuser), this fails and says why: it never skips.
#
# Usage: scripts/test-unprivileged.sh [PYTHON]   (PYTHON defaults to .venv/bin/python)
# Does nothing (exit 0, saying so) when not run as root: the main run was unprivileged.
set -eu
cd "$(dirname "$0")/.."
python="${1:-.venv/bin/python}"
tests="tests/doctor/test_environment.py tests/doctor/test_permissions.py
       tests/measure/test_commandline.py tests/measure/test_child_environment.py
       tests/measure/test_posix.py::test_unexecutable_file_raises_command_not_found
       tests/measure/test_counters.py::test_paranoid_above_2_keeps_a_user_from_counting"

if [ "$(id -u)" != 0 ]; then
    echo "test-unprivileged: already unprivileged (uid $(id -u)); the main run covered these branches"
    exit 0
fi
user=nobody
if ! group=$(id -gn "$user" 2>/dev/null); then
    echo "test-unprivileged: FAILED: there is no user $user to run the unprivileged tests as" >&2
    exit 1
fi
if command -v setpriv >/dev/null 2>&1; then
    drop="setpriv --reuid=$user --regid=$group --clear-groups"
elif command -v runuser >/dev/null 2>&1; then
    drop="runuser -u $user --"
else
    echo "test-unprivileged: FAILED: neither setpriv nor runuser is installed (util-linux), so root cannot" \
         "run the tests as $user; install util-linux" >&2
    exit 1
fi
if ! prepared=$("$python" tests/support/other_user.py prepare); then
    echo "test-unprivileged: FAILED: could not prepare a place $user can read (see above)" >&2
    exit 1
fi
value() { printf '%s\n' "$prepared" | sed -n "s/^$1=//p"; }
shared=$(value SHARED)
root=$(value ROOT)
other_python=$(value PYTHON)
library_path=$(value LIBRARY_PATH)
copied=$(value COPIED)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch" "$shared"' EXIT INT TERM
chown "$user:$group" "$scratch"
# shellcheck disable=SC2086  # $drop is a word list
if ! $drop env "$other_python" -c "import pairbench, pytest" >/dev/null; then
    echo "test-unprivileged: FAILED: $user cannot run $other_python with pairbench and pytest" >&2
    exit 1
fi
echo "test-unprivileged: running the permission-dependent tests as $user" \
     "(from $root${copied:+; copied for $user: $copied})"
cd "$root"
status=0
# shellcheck disable=SC2086  # $drop and $tests are word lists
env -i PATH="$PATH" HOME="$scratch" LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 \
    ${library_path:+LD_LIBRARY_PATH="$library_path"} PAIRBENCH_EXPECT_UNPRIVILEGED=1 \
    $drop "$other_python" -m pytest -q -p no:cacheprovider --rootdir "$root" --basetemp="$scratch/pytest" \
    $tests || status=$?
exit "$status"
