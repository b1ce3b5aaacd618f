"""The package built once per session (``installs.py`` in ``tests/support`` says how it is installed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from installs import REPO, fill_wheelhouse, runtime_closure
from tools import test_cache


@pytest.fixture(scope="session")
def wheelhouse() -> dict[str, str]:
    """The environment variables under which pip installs from the local wheelhouse alone."""
    folder = test_cache() / "wheelhouse"
    pinned = runtime_closure()
    fill_wheelhouse(folder, pinned)
    constraints = folder / f"constraints-{os.getpid()}.txt"
    constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(pinned.items())))
    yield {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(folder), "PIP_CONSTRAINT": str(constraints),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    constraints.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def built(tmp_path_factory, wheelhouse) -> dict[str, Path]:
    """``python -m build`` of this checkout: the sdist, and the wheel built from it."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, **wheelhouse}, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"sdist": next(out.glob("*.tar.gz")), "wheel": next(out.glob("*.whl"))}
