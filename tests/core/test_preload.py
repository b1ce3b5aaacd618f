"""The background import of the statistics (pairbench.preload) runs even when every CPU is busy:
a thread that only ran on idle CPUs (SCHED_IDLE) starved there for seconds, and the stopping rule
could not look meanwhile."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from pairbench import preload

SPIN = "import time\nprint('spinning', flush=True)\nend = time.monotonic() + 20\nwhile time.monotonic() < end: pass\n"


@pytest.fixture
def probe_module(tmp_path, monkeypatch):
    """A module whose import burns ~50 ms of CPU and records the importing thread's policy."""
    (tmp_path / "pairbench_preload_probe.py").write_text(
        "import os, time\n"
        "POLICY = os.sched_getscheduler(0) if hasattr(os, 'sched_getscheduler') else None\n"
        "end = time.thread_time() + 0.05\n"
        "while time.thread_time() < end: pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "pairbench_preload_probe"
    sys.modules.pop("pairbench_preload_probe", None)


def _import_in_background(module: str) -> threading.Thread:
    thread = threading.Thread(target=preload._import_all, args=((module,),), daemon=True)
    thread.start()
    return thread


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"),
                    reason="a platform limit: SCHED_BATCH is Linux's; elsewhere the thread keeps the default policy")
def test_the_background_import_runs_as_a_batch_thread_that_never_preempts_a_waking_command(probe_module):
    _import_in_background(probe_module).join(timeout=30)
    assert sys.modules[probe_module].POLICY == os.SCHED_BATCH


def test_the_background_import_finishes_while_every_cpu_is_busy(probe_module):
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN], stdout=subprocess.PIPE, text=True)
                for _ in range(os.cpu_count() or 1)]
    try:
        assert all(spinner.stdout.readline() == "spinning\n" for spinner in spinners)  # every CPU is held
        thread = _import_in_background(probe_module)
        thread.join(timeout=8)  # ~0.05 s of CPU at a fair share; an idle-only thread waits 20 s
        assert not thread.is_alive(), "the background import starved behind busy CPUs"
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_while_importing_the_thread_hands_the_gil_back_quickly_and_restores_the_interval_after(
        probe_module, monkeypatch):
    # the main thread drives 1 ms samples: a 5 ms hold of the GIL by the import would stretch every round
    seen = []
    usual = sys.getswitchinterval()
    original = preload.importlib.import_module

    def noting(name):
        seen.append(sys.getswitchinterval())
        return original(name)

    monkeypatch.setattr(preload.importlib, "import_module", noting)
    _import_in_background(probe_module).join(timeout=30)
    monkeypatch.undo()
    assert seen == [pytest.approx(preload.SWITCH_INTERVAL_S)] and sys.getswitchinterval() == usual
