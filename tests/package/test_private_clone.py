"""The tests that run something as another user pass wherever the checkout lives: here, a copy of it
(the files a clone of the working tree holds, tracked and new but not ignored, and the native spawner
``make setup`` builds there), with its own virtual environment inside it (``.venv``, as ``make setup``
makes it), in a directory only its owner may enter (0700, as ``mktemp -d`` makes it, and as many home
directories are), where an unprivileged user can read none of it. The child-environment test that drops to that user, and the
whole unprivileged pass of ``make test`` (``scripts/test-unprivileged.sh``), run there and pass, and the
pass says it ran as that user from copies: it did not skip."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
from installs import REPO
from other_user import parent_near

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def private_clone():
    site = Path(sysconfig.get_paths()["purelib"])
    private = Path(tempfile.mkdtemp(prefix="private-clone-", dir=parent_near(site)))  # hard links reach it
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
        _environment_inside(clone, site)
        yield clone
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _environment_inside(clone: Path, site: Path) -> None:
    """The clone's own virtual environment, where ``make setup`` makes it (``.venv``, below the private
    directory too): this environment's packages (hard links), pairbench's editable path the clone's."""
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True,
                   timeout=120)
    [inside] = (venv / "lib").glob("python*/site-packages")
    shutil.copytree(site, inside, symlinks=True, dirs_exist_ok=True, copy_function=os.link,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for editable in inside.glob("__editable__*pairbench*.pth"):
        editable.unlink()  # a hard link of this environment's file: replaced, never written through
        editable.write_text(f"{clone / 'src'}\n")


def _python(clone: Path) -> str:
    return str(clone / ".venv" / "bin" / "python")


def _env(clone: Path) -> dict[str, str]:
    """The clone's environment, importing pairbench from the clone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAIRBENCH_", "PYTEST_", "VIRTUAL_ENV"))}
    return {**env, "PYTHONPATH": str(clone / "src"), "PYTHONDONTWRITEBYTECODE": "1"}


def test_the_other_user_test_of_a_childs_view_of_proc_passes_from_a_private_clone(private_clone):
    done = subprocess.run([_python(private_clone), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "tests/measure/test_child_environment.py", "-k", "cannot_read"], cwd=private_clone,
                          env=_env(private_clone), capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout and "skipped" not in done.stdout


def test_the_unprivileged_pass_runs_from_a_private_clone_and_does_not_skip(private_clone):
    done = subprocess.run(["scripts/test-unprivileged.sh", _python(private_clone)], cwd=private_clone, env=_env(private_clone),
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    if os.geteuid() != 0:
        assert "already unprivileged" in done.stdout
        return
    assert "running the permission-dependent tests as nobody" in done.stdout
    copied = re.search(r"copied for nobody: ([\w,-]+)", done.stdout)
    assert copied and {"checkout", "site-packages"} <= set(copied[1].split(",")), done.stdout  # none was readable
    summary = done.stdout.strip().splitlines()[-1]  # pytest -q's last line: "N passed[, M skipped] in T s"
    assert re.match(r"\d+ passed\b", summary) and not re.search(r"skipped|xfailed|deselected", summary), summary
