"""Fixtures of the report tests: real result documents (see data/make_fixtures.py) and their analyses."""

from __future__ import annotations

import pytest
from report_helpers import DATA

from pairbench.analysis import analyse
from pairbench.store.resultfile import read_result


@pytest.fixture(scope="session")
def compare_run():
    """A real ``pairbench compare`` result (FakeExecutor, 40 rounds) with a hostile candidate name."""
    return read_result(DATA / "compare.json")


@pytest.fixture(scope="session")
def compare_analysis(compare_run):
    return analyse(compare_run)


@pytest.fixture(scope="session")
def single_run():
    """A real ``pairbench run`` result of one command (25 samples)."""
    return read_result(DATA / "run.json")


@pytest.fixture(scope="session")
def single_analysis(single_run):
    return analyse(single_run)
