"""Permission-denied branches of the environment readers, with real file modes.

As root, chmod stops no read, so ``test_environment.py`` fakes the refusal
there; these tests need an unprivileged user and are skipped as root.
``make test`` runs them as ``nobody`` when it runs as root
(``scripts/test-unprivileged.sh``), so both branches run in CI.
"""

from __future__ import annotations

import os

import pytest

from pairbench.environment import collect_environment
from pairbench.environment.checks import evaluate

UNPRIVILEGED = os.geteuid() != 0
needs_unprivileged = pytest.mark.skipif(not UNPRIVILEGED, reason="root reads any file; "
                                        "scripts/test-unprivileged.sh runs this as nobody")


def test_the_unprivileged_run_really_is_unprivileged():
    if os.environ.get("PAIRBENCH_EXPECT_UNPRIVILEGED") == "1":
        assert os.geteuid() != 0 and os.getegid() != 0
        assert not UNPRIVILEGED or os.access("/etc/shadow", os.R_OK) is False


def _collect(root):
    return collect_environment(root, activity_window_s=0.0, sleep=lambda s: None)


@needs_unprivileged
def test_an_unreadable_loadavg_file_means_load_unknown(tmp_path):
    (tmp_path / "proc").mkdir()
    loadavg = tmp_path / "proc/loadavg"
    loadavg.write_text("0.50 0.40 0.30 1/100 1234\n")
    loadavg.chmod(0)
    try:
        env = _collect(tmp_path)
    finally:
        loadavg.chmod(0o644)
    assert env["load_average"] is None
    assert {f.check: f for f in evaluate(env)}["load"].status == "unknown"


@needs_unprivileged
def test_an_unreadable_power_supply_directory_means_power_unknown(tmp_path):
    battery = tmp_path / "sys/class/power_supply/BAT0"
    battery.mkdir(parents=True)
    for name, value in {"type": "Battery", "status": "Discharging", "capacity": "41"}.items():
        (battery / name).write_text(value + "\n")
    supplies = tmp_path / "sys/class/power_supply"
    supplies.chmod(0)
    try:
        env = _collect(tmp_path)
    finally:
        supplies.chmod(0o755)
    assert env["power"] is None


@needs_unprivileged
def test_an_untraversable_run_directory_does_not_stop_the_container_check(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run/.containerenv").write_text("")
    (tmp_path / "proc/1").mkdir(parents=True)
    (tmp_path / "proc/1/cgroup").write_text("0::/kubepods/besteffort/pod1\n")
    (tmp_path / "run").chmod(0)
    try:
        env = _collect(tmp_path)
    finally:
        (tmp_path / "run").chmod(0o755)
    assert env["virtualization"]["container"] == "kubernetes"
