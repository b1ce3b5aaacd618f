"""Doctor test fixtures; the fixture machines themselves are in ``tests/support/machines.py``."""

from __future__ import annotations

import pytest
from machines import machine_environment


@pytest.fixture
def machine(tmp_path):
    """``machine("noisy-laptop")`` -> the collected environment of that fixture tree, as a result
    stores it; ``machine("noisy-laptop", live=True)`` as the doctor reads this machine now (busy
    processes with their PIDs and command lines)."""

    def collect(name: str, live: bool = False) -> dict:
        return machine_environment(name, tmp_path, live=live)

    return collect
