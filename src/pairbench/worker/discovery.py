"""Collecting benchmarks: finding benchmark files, importing them, naming what they declare.

A ``.py`` file given is imported as a module of its own (a unique module name,
so two ``bench_io.py`` in different directories do not clash), with its
directory on ``sys.path`` so that it can import its siblings. A directory is
searched recursively for ``bench_*.py`` and ``*_bench.py`` files, in sorted
order, skipping hidden directories, ``__pycache__`` and virtual environments
(directories holding ``pyvenv.cfg``).

``root`` is the tree the benchmarks measure: it (and its ``src`` directory, for
a src layout) comes first on ``sys.path``, before the files' directories and the
installed packages, so that ``import mypackage`` finds that tree's copy. The
driver uses it to compare a git worktree of an old revision with the working
tree.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import os
import re
import sys
from collections.abc import Iterable

from pairbench.worker.registry import Benchmark, Declaration, HarnessError, recording, resolve

FILE_PATTERNS = ("bench_*.py", "*_bench.py")


def collect(paths: Iterable[str], root: str | None = None) -> list[Benchmark]:
    """The benchmarks declared in ``paths`` (files and directories), importing from ``root`` first;
    ``HarnessError`` if a path is missing, a file fails to import, or no benchmark is found."""
    paths = list(paths)
    after = _put_root_first(root) if root is not None else 0
    files = find_files(paths)
    with recording() as registry:
        for index, file in enumerate(files):
            import_file(file, index, after)
    benchmarks = resolve(_in_file_order(registry.declarations(), files))
    if not benchmarks:
        raise HarnessError(f"no benchmarks found in {', '.join(paths)} ({len(files)} files imported): "
                           "decorate functions with @pairbench.benchmark, in files named "
                           + " or ".join(FILE_PATTERNS))
    return benchmarks


def _in_file_order(declarations: list[Declaration], files: list[str]) -> list[Declaration]:
    """``declarations`` ordered by the collected file they come from (a file imported by another
    keeps its own place), then as declared; those of other modules last."""
    order = {os.path.realpath(file): index for index, file in enumerate(files)}
    return sorted(declarations, key=lambda d: order.get(os.path.realpath(d.file), len(order)))


def find_files(paths: Iterable[str]) -> list[str]:
    """The benchmark files ``paths`` name: each file as given, each directory's matching files
    sorted; each file once."""
    found, seen = [], set()
    for path in paths:
        for file in _files_of(path):
            real = os.path.realpath(file)
            if real not in seen:
                seen.add(real)
                found.append(file)
    return found


def _files_of(path: str) -> list[str]:
    if os.path.isdir(path):
        return _search(path)
    if not os.path.exists(path):
        raise HarnessError(f"{path}: no such file or directory; give benchmark files (.py) or directories")
    if not path.endswith(".py"):
        raise HarnessError(f"{path} is not a Python file (.py); give benchmark files or directories")
    return [path]


def _search(directory: str) -> list[str]:
    """The files under ``directory`` that match ``FILE_PATTERNS``, sorted, skipping hidden
    directories, ``__pycache__`` and virtual environments."""
    found = []
    for parent, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not _skipped(os.path.join(parent, d))]
        found.extend(os.path.join(parent, f) for f in files
                     if any(fnmatch.fnmatchcase(f, pattern) for pattern in FILE_PATTERNS))
    return sorted(found, key=lambda file: os.path.relpath(file, directory).split(os.sep))


def _skipped(directory: str) -> bool:
    name = os.path.basename(directory)
    return (name.startswith(".") or name == "__pycache__"
            or os.path.exists(os.path.join(directory, "pyvenv.cfg")))


def import_file(file: str, index: int, after: int = 0) -> None:
    """Import ``file`` as module number ``index``, its directory put on ``sys.path`` at position
    ``after`` (behind a root); ``HarnessError`` naming the file if the import fails."""
    path = os.path.abspath(file)
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(after, directory)
    module_name = f"pairbench_bench_{index}_{re.sub(r'[^0-9A-Za-z_]', '_', os.path.basename(path)[:-3])}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise HarnessError(f"{file}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except HarnessError:
        del sys.modules[module_name]
        raise
    except (Exception, SystemExit) as exc:
        del sys.modules[module_name]
        raise HarnessError(_import_failure(file, path, exc)) from exc


def _import_failure(file: str, path: str, exc: BaseException) -> str:
    """``cannot import FILE, line N: Type: message`` and what to do next."""
    import traceback

    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    line = _failing_line(path, exc)
    where = f"{file}, line {line}" if line else file
    return f"cannot import {where}: {last} (run `python {file}` to see the whole traceback)"


def _failing_line(path: str, exc: BaseException) -> int | None:
    """The line of ``path`` where ``exc`` was raised (the deepest frame in that file), if any."""
    if isinstance(exc, SyntaxError) and exc.filename == path:
        return exc.lineno
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _put_root_first(root: str) -> int:
    """Put ``root`` (and ``root/src``, if a directory) first on ``sys.path``; how many entries."""
    if not os.path.isdir(root):
        raise HarnessError(f"--root {root}: not a directory; give the tree the benchmarks should import from")
    absolute = os.path.abspath(root)
    entries = [absolute] + ([os.path.join(absolute, "src")] if os.path.isdir(os.path.join(absolute, "src")) else [])
    sys.path[:0] = entries
    return len(entries)
