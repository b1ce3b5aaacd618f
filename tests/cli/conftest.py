"""CLI test helpers: run ``pairbench`` in-process with a scripted executor."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest

from pairbench import cli
from pairbench.cli import app
from pairbench.measure.fake import FakeExecutor


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def invoke(*args: str) -> CliResult:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(args), stdout=out, stderr=err, color=False)
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture
def use_executor(monkeypatch):
    """Install an executor (usually a FakeExecutor) for the CLI; returns it."""

    def install(executor=None, **kwargs):
        executor = executor if executor is not None else FakeExecutor(**kwargs)
        monkeypatch.setattr(app, "EXECUTOR_FACTORY", lambda output: executor)
        return executor

    return install
