"""The package built once per session (``installs.py`` in ``tests/support`` says how it is installed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from installs import REPO


@pytest.fixture(scope="session")
def built(tmp_path_factory, wheelhouse) -> dict[str, Path]:
    """``python -m build`` of this checkout: the sdist, and the wheel built from it."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, **wheelhouse}, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"sdist": next(out.glob("*.tar.gz")), "wheel": next(out.glob("*.whl"))}
