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


@pytest.fixture(scope="module")
def chromium():
    """Headless Chromium (Debian's, installed by scripts/install-test-deps.sh), for the browser tests."""
    from chromium import Browser, find_chromium

    path = find_chromium()
    if path is None:
        pytest.fail("chromium is not installed: run scripts/install-test-deps.sh (make test does)")
    with Browser(path) as browser:
        yield browser
