"""Fixtures of the report tests: real result documents (see data/make_fixtures.py)."""

from __future__ import annotations

import pytest
from report_helpers import DATA

from pairbench.resultfile import read_result


@pytest.fixture
def compare_run():
    """A real ``pairbench compare`` result (FakeExecutor, 40 rounds) with a hostile candidate name."""
    return read_result(DATA / "compare.json")


@pytest.fixture
def single_run():
    """A real ``pairbench run`` result of one command (25 samples)."""
    return read_result(DATA / "run.json")
