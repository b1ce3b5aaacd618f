"""Doctor test fixtures; the fixture machines themselves are in ``tests/support/machines.py``."""

from __future__ import annotations

import pytest
from machines import machine_environment


@pytest.fixture
def machine(tmp_path):
    """``machine("noisy-laptop")`` -> the collected environment of that fixture tree."""
    return lambda name: machine_environment(name, tmp_path)
