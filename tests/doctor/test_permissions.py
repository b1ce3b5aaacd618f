"""Permission-denied branches of the environment readers, with real file modes.

As root, chmod stops no read, so ``test_environment.py`` fakes the refusal
there (its power-supply and run-directory tests chmod for real when
unprivileged); the tests here need an unprivileged user and are skipped as
root. ``make test`` runs both files as ``nobody`` when it runs as root
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
