"""Fixture machines: fake /proc and /sys trees under ``tests/doctor/fixtures/``.

Each machine has ``root/`` (the tree as first read) and may have ``after/``
(files that changed during the activity window: /proc/stat, /proc/vmstat,
/proc/[pid]/stat). :func:`machine_environment` copies ``root`` to a temporary
directory and passes ``collect_environment`` a ``sleep`` that lays ``after``
over it, so the "right now" readings are exact. See ``tests/doctor/fixtures/README.md``.
The doctor's checks and the analysis's machine notes are tested on them.
"""

from __future__ import annotations

import importlib
import shutil
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from pairbench.environment import collect_environment

ACTIVITY = importlib.import_module("pairbench.environment.activity")  # the package exports its function

FIXTURES = Path(__file__).parents[1] / "doctor" / "fixtures"
MACHINES = ("tuned-server", "noisy-laptop", "container", "vm")
FIXED_TIMER = {"clock": "CLOCK_MONOTONIC", "advertised_resolution_ns": 1, "measured_resolution_ns": 30}
WINDOW_S = 0.1  # the activity window the fixtures' after/ trees were made for (10 ticks at USER_HZ 100)


def machine_tree(name: str, tmp_path: Path) -> tuple[Path, callable]:
    """A copy of fixture ``name``'s tree, and the ``sleep`` that applies its ``after/`` overlay."""
    root = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=tmp_path))
    shutil.copytree(FIXTURES / name / "root", root, dirs_exist_ok=True)
    after = FIXTURES / name / "after"

    def sleep(seconds: float) -> None:
        if after.is_dir():
            shutil.copytree(after, root, dirs_exist_ok=True)

    return root, sleep


class WindowClock:
    """The activity window's clock for a fixture: time passes only in its ``sleep``. A window read
    more slowly than 1.5 times its length is reported as long as it really was ("in the last
    221 ms"), so on a loaded machine reading the tree would change the fixtures' text."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def passing(self, sleep):
        def slept(seconds: float) -> None:
            sleep(seconds)
            self.now += seconds

        return slept


def machine_environment(name: str, tmp_path: Path, **options) -> dict:
    """``collect_environment(**options)`` of fixture ``name`` (``live=True``: as the doctor reads a
    machine now, busy processes with their PIDs and command lines), with the measured timer fixed
    at 30 ns.

    The timer's step is measured on the machine running the tests, not read
    from the tree, so it is replaced to keep the clock check exact. The
    activity window is the fixtures' own, whatever the test suite's default,
    and as long however slowly the tree is read (``WindowClock``).
    """
    root, sleep = machine_tree(name, tmp_path)
    clock = WindowClock()
    with mock.patch.object(ACTIVITY, "time", SimpleNamespace(monotonic=clock.monotonic, sleep=time.sleep)):
        environment = collect_environment(root, sleep=clock.passing(sleep), activity_window_s=WINDOW_S,
                                          **options)
    environment["timer"] = dict(FIXED_TIMER)
    return environment
