"""Doctor test fixtures; the fixture machines themselves are in ``tests/support/machines.py``."""

from __future__ import annotations

import pytest
from machines import FIXED_TIMER, WINDOW_S, machine_environment, machine_tree

from pairbench.environment import collect_environment


@pytest.fixture
def machine(tmp_path):
    """``machine("noisy-laptop")`` -> the collected environment of that fixture tree, as a result
    stores it; ``machine("noisy-laptop", live=True)`` as the doctor reads this machine now (busy
    processes with their PIDs and command lines)."""

    def collect(name: str, live: bool = False) -> dict:
        if not live:
            return machine_environment(name, tmp_path)
        root, sleep = machine_tree(name, tmp_path)
        environment = collect_environment(root, sleep=sleep, activity_window_s=WINDOW_S, live=True)
        return {**environment, "timer": dict(FIXED_TIMER)}

    return collect
