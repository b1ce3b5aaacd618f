"""Installing pairbench as a user does: an sdist and a wheel built by ``python -m build`` from this
checkout, each installed into a fresh virtual environment outside it (``tests/package``).

The dependencies come from a local wheelhouse (``~/.cache/pairbench-tests/wheelhouse``) holding
exactly the versions this checkout's ``.venv`` resolved (its newest releases, as ``make setup``
installed them) and the build backend ``pyproject.toml`` asks for. It is downloaded once, from
PyPI through pip; every build and install here then runs with ``--no-index``: nothing but the
built artifacts and those wheels, in about 10 s an environment.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
import venv
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]


def runtime_closure(root: str = "pairbench") -> dict[str, str]:
    """Every distribution the installed ``root`` needs at run time (extras left out), with the
    version installed here: ``{canonical name: version}``."""
    found: dict[str, str] = {}
    todo = [root]
    while todo:
        dist = metadata.distribution(todo.pop())
        for text in dist.requires or ():
            requirement = Requirement(text)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue
            name = canonicalize_name(requirement.name)
            if name not in found:
                found[name] = metadata.version(name)
                todo.append(name)
    return found


def build_requirements() -> list[str]:
    """What ``pyproject.toml`` asks the build frontend to install (``setuptools>=77``)."""
    return tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]


def _has_wheel(folder: Path, requirement: Requirement) -> bool:
    """Whether ``folder`` holds a wheel that meets ``requirement`` (name and versions)."""
    for wheel in folder.glob("*.whl"):
        name, version, _, _ = parse_wheel_filename(wheel.name)
        if name == canonicalize_name(requirement.name) and requirement.specifier.contains(version, prereleases=True):
            return True
    return False


def _pip(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True,
                          timeout=600, env=env, check=False)


def fill_wheelhouse(folder: Path, pinned: dict[str, str]) -> None:
    """Download what ``folder`` lacks of ``pinned`` and of the build backend (under a lock: test
    sessions share the folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wanted = [f"{n}=={v}" for n, v in sorted(pinned.items())] + build_requirements()
        missing = [text for text in wanted if not _has_wheel(folder, Requirement(text))]
        if not missing:
            return
        done = _pip("download", "--quiet", "--only-binary", ":all:", "--dest", str(folder), *missing)
        if done.returncode != 0:
            pytest.fail(f"could not download {' '.join(missing)} from PyPI into {folder}:\n{done.stderr[-2000:]}")


class Installed:
    """A fresh virtual environment outside the checkout, with pairbench installed in it."""

    def __init__(self, root: Path):
        self.root = root
        self.bin = root / "bin"

    def run(self, *args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
        """``args[0]`` from the environment's ``bin``, in ``cwd``, with nothing of the checkout on
        the path."""
        clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        clean["PATH"] = f"{self.bin}{os.pathsep}{clean.get('PATH', '')}"
        return subprocess.run([str(self.bin / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True,
                              timeout=300, env={**clean, **(env or {})}, check=False)


def scratch_directory(prefix: str) -> tempfile.TemporaryDirectory:
    """A temporary directory for an environment, on a memory file system where there is one: the
    ~300 MiB of numpy, scipy and plotly are written there in a third of the time (4 s against 12 s
    on this project's VM under load)."""
    memory = Path("/dev/shm")
    where = str(memory) if memory.is_dir() and os.access(memory, os.W_OK) else None
    return tempfile.TemporaryDirectory(prefix=prefix, dir=where)


def install_into_fresh_environment(root: Path, artifact: Path, env: dict) -> Installed:
    """Create a virtual environment at ``root`` (without pip: this checkout's pip installs into it)
    and install ``artifact`` there with its dependencies (not byte-compiled: that took 8 s of CPU of
    the 10 s an install took here; the modules are compiled as they are imported)."""
    venv.EnvBuilder(with_pip=False, clear=True).create(root)
    done = _pip("--python", str(root / "bin" / "python"), "install", "--no-cache-dir", "--no-compile", "--quiet",
                str(artifact), env={**os.environ, **env})
    assert done.returncode == 0, done.stderr[-3000:]
    return Installed(root)
