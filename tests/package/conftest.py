"""The package built once per source (``installs.py`` in ``tests/support`` says how it is installed)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from installs import REPO
from tools import test_cache


def source_digest() -> str:
    """A digest of every file the build reads: the checkout's files git knows or would add (names
    and contents), and the Python and platform that build them."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.split(b"\0")
    digest = hashlib.sha256(f"{sys.version} {sys.platform}".encode())
    for name in sorted(n for n in listed if n):
        path = REPO / name.decode()
        if path.is_file():
            digest.update(name + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@pytest.fixture(scope="session")
def built(wheelhouse) -> dict[str, Path]:
    """``python -m build`` of this checkout: the sdist, and the wheel built from it; kept in the test
    cache under the digest of the sources, so a later session of the same sources (a fresh clone's
    included) reuses them, and sessions running at once build them once."""
    folder = test_cache() / "dist" / source_digest()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(folder), str(REPO)],
                                  capture_output=True, text=True, timeout=600, env={**os.environ, **wheelhouse},
                                  check=False)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            (folder / "done").touch()
    return {"sdist": next(folder.glob("*.tar.gz")), "wheel": next(folder.glob("*.whl"))}
