"""numpy's OpenBLAS loads with one thread in pairbench's process (no thread pool spinning beside the
first samples), and the programs pairbench runs get the environment the user gave it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e

# the command measured: writes what it was given for OPENBLAS_NUM_THREADS
SCRIPT = '#!/bin/sh\necho "${OPENBLAS_NUM_THREADS-unset}" >> "$0.seen"\n'


def _measured_environment(tmp_path, *argv: str, given: str | None = None) -> set[str]:
    script = tmp_path / "note.sh"
    script.write_text(SCRIPT)
    script.chmod(0o755)
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        environ["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run([sys.executable, "-m", "pairbench", *argv, "-q", "--runs", "3",
                           *[str(script)] * (2 if argv[0] == "compare" else 1)],
                          capture_output=True, text=True, env=environ, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return set((tmp_path / "note.sh.seen").read_text().split())


@pytest.mark.parametrize("command", ["run", "compare"])
def test_the_measured_commands_do_not_inherit_the_setting_that_keeps_numpy_to_one_thread(tmp_path, command):
    # run starts its commands before numpy loads, compare after: neither passes the variable on
    assert _measured_environment(tmp_path, command) == {"unset"}


def test_a_thread_count_the_user_set_reaches_the_commands_unchanged(tmp_path):
    assert _measured_environment(tmp_path, "compare", given="3") == {"3"}


LOADS = """
import os, sys
from pairbench.blas_threads import numpy_loads_without_thread_pool
with numpy_loads_without_thread_pool():
    before = os.environ.get("OPENBLAS_NUM_THREADS")
    import numpy
    after = os.environ.get("OPENBLAS_NUM_THREADS")
print(before, after, len(os.listdir("/proc/self/task")), numpy.__name__, len(sys.meta_path) == META)
"""


def test_numpy_loads_in_the_block_with_no_thread_beside_the_main_one_and_leaves_no_trace():
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    program = "import sys; META = len(sys.meta_path)\n" + LOADS
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=environ, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "None", "1", "numpy", "True"]
