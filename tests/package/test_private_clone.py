"""The tests that run something as another user pass wherever the checkout lives: here, a copy of it
(the files a clone of the working tree holds, tracked and new but not ignored, and the native spawner
``make setup`` builds there) in a directory only its
owner may enter (0700, as ``mktemp -d`` makes it, and as many home directories are), where an
unprivileged user can read none of it. The child-environment test that drops to that user, and the
whole unprivileged pass of ``make test`` (``scripts/test-unprivileged.sh``), run there and pass, and the
pass says it ran as that user from copies: it did not skip."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from installs import REPO

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def private_clone():
    private = Path(tempfile.mkdtemp(prefix="private-clone-"))
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    clone = private / "pairbench"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True).stdout.decode().split("\0")
    spawner = "src/pairbench/measure/pairbench-spawner"  # what make setup builds in a fresh clone
    for name in [*filter(None, listed), spawner]:
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    try:
        yield clone
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _env(clone: Path) -> dict[str, str]:
    """This environment's Python, importing pairbench from the clone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAIRBENCH_", "PYTEST_"))}
    return {**env, "PYTHONPATH": str(clone / "src"), "PYTHONDONTWRITEBYTECODE": "1"}


def test_the_other_user_test_of_a_childs_view_of_proc_passes_from_a_private_clone(private_clone):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "tests/measure/test_child_environment.py", "-k", "cannot_read"], cwd=private_clone,
                          env=_env(private_clone), capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout and "skipped" not in done.stdout


def test_the_unprivileged_pass_runs_from_a_private_clone_and_does_not_skip(private_clone):
    done = subprocess.run(["scripts/test-unprivileged.sh", sys.executable], cwd=private_clone, env=_env(private_clone),
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    if os.geteuid() != 0:
        assert "already unprivileged" in done.stdout
        return
    assert "running the permission-dependent tests as nobody" in done.stdout
    assert "copied for nobody: checkout" in done.stdout  # nothing of the clone was readable where it is
    summary = done.stdout.strip().splitlines()[-1]  # pytest -q's last line: "N passed[, M skipped] in T s"
    assert re.match(r"\d+ passed\b", summary) and not re.search(r"skipped|xfailed|deselected", summary), summary
