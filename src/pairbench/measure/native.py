"""The native spawner's program: where it is installed, and how the install builds it.

``spawner.c`` (beside this module) is compiled by the package's build
(``setup.py``: ``pip install`` and ``pip install -e``, so ``make setup`` too)
into ``pairbench-spawner`` beside it, with the system's C compiler: ``$CC``, or
``cc``, ``gcc`` or ``clang`` on the PATH. It is linked statically where the C
library allows it (smaller: ~0.8 MiB resident against ~1.4 MiB), else
dynamically. Without a compiler the build goes on without it, and pairbench
uses the Python spawner (``measure.spawner``).

``setup.py`` loads this file by path, before pairbench is installed, so it
imports nothing beyond the standard library; ``measure.spawner`` imports it to
find the program, so what only the build needs is imported when building.
"""

from __future__ import annotations

import os

PROGRAM = "pairbench-spawner"
COUNTING_LIBRARY = "pairbench-counting.so"
"""The Python worker's Callgrind client requests (``worker/counting.c``), in the ``pairbench.worker``
package directory, loaded with ctypes."""
COUNTING_SOURCE = "counting.c"
"""The native spawner's file name, in the ``pairbench.measure`` package directory."""
SOURCE = "spawner.c"
CFLAGS = ("-O2", "-std=gnu11", "-Wall")
COMPILERS = ("cc", "gcc", "clang")
_HERE = os.path.dirname(os.path.abspath(__file__))


def package_root() -> str:
    """The directory holding the ``pairbench`` package, for a Python child's ``sys.path``."""
    return os.path.dirname(os.path.dirname(_HERE))


def program_path() -> str:
    """Where the native spawner is when the install built it."""
    return os.path.join(_HERE, PROGRAM)


def find_compiler() -> str | None:
    """The C compiler to build with: ``$CC`` if set (its first word), else the first of
    ``COMPILERS`` on the PATH; None if there is none."""
    import shutil

    named = os.environ.get("CC", "").split()
    for name in named[:1] or COMPILERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def build(source: str, target: str, compiler: str | None = None, defines: tuple[str, ...] = ()) -> str:
    """Compile ``source`` into the executable ``target``, statically linked if that works.

    Returns "" on success, else why not (no compiler, or the compiler's first
    error line). ``target`` appears whole or not at all (written beside it,
    then renamed). ``defines`` are passed as ``-D`` options (the tests' variant).
    """
    import subprocess
    import tempfile

    compiler = compiler or find_compiler()
    if compiler is None:
        return "no C compiler found (set CC, or install cc, gcc or clang)"
    directory = os.path.dirname(os.path.abspath(target))
    os.makedirs(directory, exist_ok=True)
    why = ""
    with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as scratch:
        built = os.path.join(scratch, PROGRAM)
        for link in (["-static"], []):
            try:
                done = subprocess.run([compiler, *CFLAGS, *(f"-D{d}" for d in defines), *link, "-o", built, source],
                                      capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"{compiler} could not run: {exc}"
            if done.returncode == 0:
                os.chmod(built, 0o755)
                os.replace(built, target)
                return ""
            lines = (done.stderr or done.stdout).strip().splitlines()
            errors = [line for line in lines if " error: " in line or line.startswith("error: ")] or lines[-1:]
            why = f"{compiler} failed: {errors[0] if errors else f'exit status {done.returncode}'}"
    return why


def counting_library_path() -> str:
    """Where the Python worker's counting library is when the install built it."""
    return os.path.join(os.path.dirname(_HERE), "worker", COUNTING_LIBRARY)


def build_library(source: str, target: str, compiler: str | None = None) -> str:
    """Compile ``source`` into the shared library ``target`` (position-independent); "" on success,
    else why not. ``target`` appears whole or not at all."""
    import subprocess
    import tempfile

    compiler = compiler or find_compiler()
    if compiler is None:
        return "no C compiler found (set CC, or install cc, gcc or clang)"
    directory = os.path.dirname(os.path.abspath(target))
    os.makedirs(directory, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as scratch:
        built = os.path.join(scratch, os.path.basename(target))
        try:
            done = subprocess.run([compiler, *CFLAGS, "-shared", "-fPIC", "-o", built, source],
                                  capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{compiler} could not run: {exc}"
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            return f"{compiler} failed: {lines[-1] if lines else f'exit status {done.returncode}'}"
        os.replace(built, target)
    return ""


if __name__ == "__main__":  # python -m pairbench.measure.native: build it in place (development)
    import sys

    problem = build(os.path.join(_HERE, SOURCE), program_path())
    print(problem or f"built {program_path()}", file=sys.stderr if problem else sys.stdout)
    counting = counting_library_path()
    missing = build_library(os.path.join(os.path.dirname(counting), COUNTING_SOURCE), counting)
    print(missing or f"built {counting}", file=sys.stderr if missing else sys.stdout)
    raise SystemExit(1 if problem or missing else 0)
