"""The spawners executor tests run against: the Python one, and the native one where it was built."""

from __future__ import annotations

import os

import pytest

from pairbench.measure import native
from pairbench.measure.spawner import SpawnerExecutor

SPAWNERS = ("native", "python")


def require_native() -> None:
    """Skip where the native spawner cannot have been built (no C compiler); fail where it could
    have been and was not, so a broken build never passes as a skip."""
    if os.access(native.program_path(), os.X_OK):
        return
    if native.find_compiler() is None:
        pytest.skip("no C compiler, so the native spawner was not built")
    pytest.fail(f"a C compiler is installed but {native.program_path()} was not built: run `make setup` "
                "(pip install -e .) or python -m pairbench.measure.native")


def spawner_executor(kind: str):
    """A factory of ``SpawnerExecutor``s with the spawner ``kind`` ("native" or "python"), each one
    answered (its ``ready`` read, as after a first use), so that a test can reach the running
    spawner it started."""
    if kind == "native":
        require_native()

    def make(*args, **options) -> SpawnerExecutor:
        executor = SpawnerExecutor(*args, spawner=kind, **options)
        assert executor.spawner == kind  # read once it has answered
        return executor

    return make
