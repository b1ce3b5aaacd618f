"""A harness program run from a fresh copy of its file at each invocation.

Why: two byte-identical files are still two sets of pages in the page cache, and every process
of one file maps that file's pages, wherever in physical memory (and, in a virtual machine, in
the host's) they happen to lie. Address-space randomization moves a process's code only by
whole pages, so its layout within a page is the same for both files; what differs between them,
for as long as the pages stay cached, is where those pages lie, and that can change the speed of
the code on them by a percent. Rounds in random order and a fresh process per sample do not
vary it, so a run's intervals took such a difference for an effect of the code: byte-identical
criterion bench binaries were called 1.26% and 0.89% slower in two of 14 benchmarks, in every
part of their rounds and in either order within a round, and not in six later runs of the same
files (``benchmarks/results/harness_equivalence.md``, section 4). A new file per invocation has
freshly allocated pages, so that difference is drawn anew for each sample, on both sides alike,
and becomes part of the noise the rounds average over, as address-space randomization does for
virtual addresses.

The copy is made in the side's scratch directory before the invocation and removed after it
(a file that lives a fraction of a second is normally never written back to the disk). Only an
ELF executable is copied: a script, a wrapper command such as ``taskset``, the Python that runs
pytest-benchmark's tests, and a binary that finds its libraries or files beside itself (its file
names ``$ORIGIN``, as an ``RPATH`` of ``$ORIGIN/../lib`` does, which a copy elsewhere would lose)
run as given.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from pairbench.measure.harnesses.base import Program

ELF_MAGIC = b"\x7fELF"
ORIGIN = b"$ORIGIN"  # the dynamic loader's name for the binary's own directory
COPY_NAME = "program"
READ_LIMIT = 1 << 30  # a file larger than this is not searched for ``ORIGIN`` and run as given


def copied_program(program: Program) -> bool:
    """Whether ``program`` is run from a fresh copy: a binary's (no listing ``target``: pytest-benchmark's
    tests run by this Python, whose copy would not find its packages) whose first word names an ELF
    executable file that does not name ``$ORIGIN``."""
    path = program.argv[0] if program.argv and not program.target else ""
    try:
        status = os.stat(path)
        with open(path, "rb") as handle:
            is_elf = handle.read(len(ELF_MAGIC)) == ELF_MAGIC and os.access(path, os.X_OK)
    except OSError:
        return False
    return is_elf and _movable(path, status.st_ino, status.st_size, status.st_mtime_ns)


@lru_cache(maxsize=64)
def _movable(path: str, inode: int, size: int, mtime_ns: int) -> bool:
    """Whether the binary at ``path`` runs the same from a copy elsewhere: it does not name ``$ORIGIN``
    (read once per version of the file: ``inode``, ``size`` and ``mtime_ns`` key the cache)."""
    if size > READ_LIMIT:
        return False
    tail = b""
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            if ORIGIN in tail + chunk:
                return False
            tail = chunk[-len(ORIGIN):]
    return True


@contextlib.contextmanager
def fresh_placement(program: Program, scratch: Path) -> Iterator[Program]:
    """``program`` run from a new copy of its file in ``scratch`` (its text and the rest unchanged), the
    copy removed afterwards; ``program`` itself when it is not an ELF executable (``copied_program``).
    Raises OSError when the copy cannot be made."""
    if not copied_program(program):
        yield program
        return
    scratch.mkdir(parents=True, exist_ok=True)
    copy = scratch / COPY_NAME / Path(program.argv[0]).name
    copy.parent.mkdir(exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        copy.unlink()  # a new inode, so new pages, never the last invocation's
    try:
        shutil.copyfile(program.argv[0], copy)
        os.chmod(copy, 0o700)
        yield dataclasses.replace(program, argv=(str(copy), *program.argv[1:]), text=program.text or program.argv[0])
    finally:
        with contextlib.suppress(FileNotFoundError):
            copy.unlink()
