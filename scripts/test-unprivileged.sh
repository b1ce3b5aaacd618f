#!/bin/sh
# Runs the tests whose branches depend on privileges (the environment readers,
# unreadable and unexecutable files) again as an unprivileged user, when the
# test suite runs as root (as CI does): root reads every file, so the
# permission-denied branches only run for real without it.
#
# Usage: scripts/test-unprivileged.sh [PYTHON]   (PYTHON defaults to .venv/bin/python)
# Does nothing (exit 0) when not run as root: the main test run was unprivileged.
set -eu
cd "$(dirname "$0")/.."
python="${1:-.venv/bin/python}"
# Only tests about privileges: the rest of test_posix.py spawns this interpreter,
# which may live where the unprivileged user cannot execute it (a pyenv under /root).
tests="tests/doctor/test_environment.py tests/doctor/test_permissions.py
       tests/measure/test_commandline.py
       tests/measure/test_posix.py::test_unexecutable_file_raises_command_not_found
       tests/measure/test_counters.py::test_paranoid_above_2_keeps_a_user_from_counting"

if [ "$(id -u)" != 0 ]; then
    echo "test-unprivileged: already unprivileged (uid $(id -u)); the main run covered these branches"
    exit 0
fi
user=nobody
group=$(id -gn "$user")
if command -v setpriv >/dev/null 2>&1; then
    drop="setpriv --reuid=$user --regid=$group --clear-groups"
elif command -v runuser >/dev/null 2>&1; then
    drop="runuser -u $user --"
else
    echo "test-unprivileged: neither setpriv nor runuser is installed (util-linux); cannot drop root" >&2
    exit 1
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT INT TERM
chown "$user:$group" "$scratch"
# The unprivileged user must be able to read the tree and run the interpreter;
# a checkout inside a root-only directory cannot be tested this way.
if ! $drop "$python" -c "import pairbench, pytest" >/dev/null 2>&1; then
    echo "test-unprivileged: SKIPPED: user $user cannot read $(pwd) or run $python;" \
         "clone the repository where other users can read it to run the unprivileged branches" >&2
    exit 0
fi
echo "test-unprivileged: running the permission-dependent tests as $user"
# shellcheck disable=SC2086  # $drop and $tests are word lists
exec env -i PATH="$PATH" HOME="$scratch" LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 \
    PAIRBENCH_EXPECT_UNPRIVILEGED=1 \
    $drop "$python" -m pytest -q -p no:cacheprovider --basetemp="$scratch/pytest" $tests
