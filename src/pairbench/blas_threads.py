"""numpy without OpenBLAS's thread pool in pairbench's own process, and nothing of it in the programs
pairbench starts.

numpy's OpenBLAS starts a pool of threads when numpy is imported, one per CPU but one, and each
spins for a while waiting for work before it sleeps: on a 2-CPU machine, 50 ms of CPU time on the
other CPU right before the first samples, and a thread of pairbench's alive beside every sample.
pairbench's statistics use no matrix product large enough for threads to pay. OpenBLAS reads
``OPENBLAS_NUM_THREADS`` once, when it is loaded, so the CLI sets it to 1 while numpy's package
first runs, and only then: the commands, builds and workers pairbench starts (before numpy loads,
as ``run``'s do, or after) get the environment the user gave it. A value the user set is left alone
(and passed on), and where numpy is already loaded (``main`` called by a program that imported it)
there is nothing to do.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys

VARIABLE = "OPENBLAS_NUM_THREADS"


@contextlib.contextmanager
def numpy_loads_without_thread_pool():
    """In the block, numpy's first import starts OpenBLAS with one thread."""
    if VARIABLE in os.environ or "numpy" in sys.modules:
        yield
        return
    finder = _FirstNumpyImport()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        finder.remove()


class _FirstNumpyImport:
    """A finder that only watches: it finds numpy as the others would, and has its package run with
    the variable set to 1 (its extension modules, OpenBLAS among them, load then)."""

    def find_spec(self, name, path=None, target=None):
        if name != "numpy":
            return None
        self.remove()  # once; and the search below must not find this finder again
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            if VARIABLE in os.environ:  # set since (by the program calling main): theirs
                return run(module)
            os.environ[VARIABLE] = "1"
            try:
                run(module)
            finally:
                os.environ.pop(VARIABLE, None)

        spec.loader.exec_module = exec_module  # this spec's own loader object, made by the search
        return spec

    def remove(self) -> None:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
