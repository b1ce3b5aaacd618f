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
ELF executable is copied: a script, a wrapper command such as ``taskset``, and the Python that runs
pytest-benchmark's tests run as given.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from pairbench.measure.harnesses.base import Program

ELF_MAGIC = b"\x7fELF"
COPY_NAME = "program"


def copied_program(program: Program) -> bool:
    """Whether ``program`` is run from a fresh copy: a binary's (no listing ``target``: pytest-benchmark's
    tests run by this Python, whose copy would not find its packages) whose first word names an ELF
    executable file."""
    path = program.argv[0] if program.argv and not program.target else ""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(ELF_MAGIC)) == ELF_MAGIC and os.access(path, os.X_OK)
    except OSError:
        return False


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
