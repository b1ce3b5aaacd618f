"""The store tests' fixture: a run to store (the builders are in ``tests/support/store_runs.py``)."""

from __future__ import annotations

import pytest
from store_runs import stored_run


@pytest.fixture
def run():
    return stored_run()
