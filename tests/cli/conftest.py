"""CLI test fixtures: a scripted executor instead of real processes."""

from __future__ import annotations

import pytest

from pairbench.cli import app
from pairbench.measure.fake import FakeExecutor


@pytest.fixture
def use_executor(monkeypatch):
    """Install an executor (usually a FakeExecutor) for the CLI; returns it."""

    def install(executor=None, **kwargs):
        executor = executor if executor is not None else FakeExecutor(**kwargs)
        monkeypatch.setattr(app, "EXECUTOR_FACTORY", lambda output: executor)
        return executor

    return install


@pytest.fixture(autouse=True)
def instant_activity_snapshot(monkeypatch):
    """Skip the 0.1 s window between the two /proc snapshots of "what runs right now".

    A zero window is supported (the busiest-process reading is then empty); the
    doctor's own tests of that reading keep the default window.
    """
    import pairbench.environment

    monkeypatch.setattr(pairbench.environment, "ACTIVITY_WINDOW_S", 0.0)
