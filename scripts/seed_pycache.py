"""Seed the test run's bytecode cache with the bytecode pip already wrote into the environment.

``make test`` runs pytest with ``PYTHONPYCACHEPREFIX`` (one cache for the run, where the
environment sets ``PYTHONDONTWRITEBYTECODE=1``), and with a prefix Python reads bytecode only
from under it: the ``__pycache__`` files pip compiled at install time are not read, and in a
fresh clone every xdist worker compiles numpy, scipy, SQLAlchemy and the rest again, side by side,
before its first test. This links (or copies) each of them to the place the prefix gives it, once,
before the workers start, and compiles the project's own ``DIR``s (an editable install, which pip
does not compile) there too. A file whose source has changed since is recompiled by Python as usual
(a ``.pyc`` records its source's size and time), so a stale link costs nothing but its own compile.

Usage: ``python scripts/seed_pycache.py PREFIX [DIR ...]`` with the environment's Python (its
site-packages are the ones seeded). Prints how many files it linked.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import shutil
import site
import sys
from pathlib import Path


def compiled(root: Path):
    """(source, its bytecode) for every ``.py`` under ``root`` whose plain bytecode pip wrote."""
    tag = sys.implementation.cache_tag
    for cache in root.rglob("__pycache__"):
        for pyc in cache.glob(f"*.{tag}.pyc"):
            source = cache.parent / (pyc.name[: -len(f".{tag}.pyc")] + ".py")
            if source.is_file():
                yield source, pyc


def seed(prefix: Path, roots: list[Path]) -> int:
    sys.pycache_prefix = str(prefix)
    linked = 0
    for root in roots:
        for source, pyc in compiled(root):
            target = Path(importlib.util.cache_from_source(str(source)))
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(pyc, target)
            except OSError:  # another file system, or links refused: a copy serves as well
                shutil.copy2(pyc, target)
            linked += 1
    return linked


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: seed_pycache.py PREFIX [DIR ...]", file=sys.stderr)
        return 2
    roots = [Path(p) for p in site.getsitepackages() if Path(p).is_dir()]
    linked = seed(Path(os.path.abspath(argv[0])), roots)  # sets sys.pycache_prefix, which compileall obeys
    ok = all(compileall.compile_dir(directory, quiet=1) for directory in argv[1:])
    print(f"seeded {linked} bytecode files into {argv[0]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
