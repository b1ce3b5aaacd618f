"""Which harness a benchmark program belongs to, from the program itself (``--harness`` unset).

* A Python file or a directory (:func:`is_python_target`): ``pytest-benchmark``
  when its tests take the ``benchmark`` fixture and nothing marks pairbench
  benchmarks (``@pairbench.benchmark``), else ``pairbench`` (the Python harness).
* An executable: its bytes are searched for marks each harness leaves in every
  program built with it: the worker protocol's variable ``PAIRBENCH_WORKER_FDS``
  (pairbench's header, its Rust and Go examples), Google Benchmark's flag names
  or C++ namespace, the Go testing package's ``test.benchtime`` flag,
  criterion's name. A program with none (a script speaking the worker protocol)
  is a ``pairbench`` worker.

Reading is bounded: at most ``MAX_SCAN_BYTES`` of a program, ``MAX_PY_FILES``
Python files of at most ``MAX_PY_BYTES`` each.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pairbench.harness_registry import PAIRBENCH, REGISTRY

MAX_SCAN_BYTES = 512 * 1024 * 1024
MAX_PY_FILES = 2000
MAX_PY_BYTES = 1024 * 1024
_CHUNK = 1 << 20
_MARKS = tuple((h.name, h.markers) for h in sorted(REGISTRY.values(), key=lambda h: h.name != PAIRBENCH)
               if h.markers)  # a worker that also links a harness is a worker
_PYTHON_MARKS = tuple((h.name, re.compile(h.python_marker)) for h in sorted(REGISTRY.values(),
                                                                           key=lambda h: h.name != PAIRBENCH)
                      if h.python_marker)  # pairbench's first: a file marking pairbench benchmarks is ours

def is_python_target(text: str) -> bool:
    """A Python benchmark file or a directory of them (else a program, which may take arguments:
    ``python3 my_worker.py --fast`` is a program)."""
    return os.path.isdir(text) or (text.endswith(".py") and (os.path.isfile(text)
                                                            or not any(c.isspace() for c in text)))


def detect_python(path: str) -> str:
    """The harness whose Python marker (``Harness.python_marker``) the files match: ``pairbench``
    as soon as one marks pairbench benchmarks, else the first harness marked (``pytest-benchmark``
    for tests taking its ``benchmark`` fixture), else ``pairbench``."""
    found: set[str] = set()
    for source in _python_sources(Path(path)):
        found |= {name for name, marker in _PYTHON_MARKS if name not in found and marker.search(source)}
        if PAIRBENCH in found:
            return PAIRBENCH
    return next((name for name, _ in _PYTHON_MARKS if name in found), PAIRBENCH)


def _python_sources(path: Path):
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))[:MAX_PY_FILES]
    for file in files:
        try:
            with open(file, "rb") as handle:
                yield handle.read(MAX_PY_BYTES).decode("utf-8", "replace")
        except OSError:
            continue


def detect_program(path: str) -> str:
    """The harness whose marks the executable at ``path`` holds (the first found in the order of
    ``_MARKS``), ``pairbench`` when none."""
    found = scan(path, [mark for _, marks in _MARKS for mark in marks])
    for harness, marks in _MARKS:
        if found & set(marks):
            return harness
    return PAIRBENCH


def scan(path: str, marks: list[bytes]) -> set[bytes]:
    """Which of ``marks`` occur in the first ``MAX_SCAN_BYTES`` of the file (chunks overlap by the
    longest mark, so none is missed at a boundary); an unreadable file holds none."""
    overlap = max(len(m) for m in marks) - 1
    found: set[bytes] = set()
    try:
        with open(path, "rb") as handle:
            tail, read = b"", 0
            while read < MAX_SCAN_BYTES and len(found) < len(marks):
                chunk = handle.read(_CHUNK)
                if not chunk:
                    break
                read += len(chunk)
                window = tail + chunk
                found.update(m for m in marks if m not in found and m in window)
                tail = window[-overlap:] if overlap else b""
    except OSError:
        return set()
    return found
