"""The bisect step of ``examples/bisect-on-step.yml``, run as GitHub runs a ``run:`` step (``bash
--noprofile --norc -eo pipefail``) on a history document: benchmark names and commits from the
store reach ``pairbench bisect`` as whole arguments whatever they hold, every step of the history
that has a ``bisect`` and was not rejected is bisected, and bisect's answers (0, 5, 6, 7) go on
while any other exit fails the step. ``pairbench`` here is a shim that records its arguments: what
is tested is the workflow's shell, not pairbench."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.e2e  # starts real programs

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "bisect-on-step.yml"
SHIM = """#!/usr/bin/env python3
import os, sys
with open(os.environ["SHIM_LOG"], "ab") as log:
    log.write(b"\\0".join(a.encode() for a in sys.argv[1:]) + b"\\n--\\n")
args = sys.argv[1:]
for flag in ("--json", "--export-markdown"):
    if flag in args:
        open(args[args.index(flag) + 1], "w").write("answer\\n")
codes = os.environ.get("SHIM_CODES", "0").split(",")
calls = int(open(os.environ["SHIM_COUNT"]).read() or 0) if os.path.exists(os.environ["SHIM_COUNT"]) else 0
open(os.environ["SHIM_COUNT"], "w").write(str(calls + 1))
sys.exit(int(codes[min(calls, len(codes) - 1)]))
"""
HOSTILE = ["^a b$", "^$(touch pwned)$", "^x'\"; rm -rf /$", "^-k$", "^tab\there$"]


def _script() -> str:
    steps = yaml.safe_load(EXAMPLE.read_text())["jobs"]["bisect"]["steps"]
    [step] = [s for s in steps if s.get("name", "").startswith("Bisect each step")]
    return step["run"]


def _history(filters, *, rejected=()) -> dict:
    steps = [{"status": "rejected" if k in rejected else "unconfirmed",
              "bisect": {"good": f"{k:040x}", "bad": f"{k + 1:040x}", "filter": f,
                         "command": "pairbench bisect ..."}} for k, f in enumerate(filters)]
    steps.append({"status": "unconfirmed", "bisect": None})  # a step between adjacent commits
    return {"format": "pairbench.history/1", "benchmarks": [{"steps": steps[:2]}, {"steps": steps[2:]}]}


def _run(tmp_path: Path, history: dict, codes: str = "0"):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "pairbench"
    shim.write_text(SHIM)
    shim.chmod(0o755)
    (tmp_path / "history.json").write_text(json.dumps(history))
    summary = tmp_path / "summary.md"
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path), "BUDGET": "30m",
           "PAIRBENCH_STORE": "postgresql://secret@db/bench", "GITHUB_STEP_SUMMARY": str(summary),
           "SHIM_LOG": str(tmp_path / "calls"), "SHIM_COUNT": str(tmp_path / "count"), "SHIM_CODES": codes}
    script = tmp_path / "step.sh"
    script.write_text(_script())
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)
    log = (tmp_path / "calls").read_bytes() if (tmp_path / "calls").exists() else b""
    calls = [[a.decode() for a in call.split(b"\0")] for call in log.split(b"\n--\n") if call]
    return done, calls, summary.read_text() if summary.exists() else ""


def test_every_step_with_a_bisect_command_is_bisected_with_its_names_as_whole_arguments(tmp_path):
    done, calls, summary = _run(tmp_path, _history(HOSTILE))
    assert done.returncode == 0, done.stderr
    assert [call[:5] for call in calls] == [["bisect", f"{k:040x}", f"{k + 1:040x}", "-k", f]
                                           for k, f in enumerate(HOSTILE)]
    assert all(call[5:7] == ["--budget", "30m"] for call in calls)
    assert not (tmp_path / "pwned").exists()
    assert summary.count("answer") == len(HOSTILE) and f"{len(HOSTILE)} step(s) bisected" in summary


def test_a_rejected_step_is_not_bisected(tmp_path):
    done, calls, _ = _run(tmp_path, _history(["^a$", "^b$", "^c$"], rejected={1}))
    assert done.returncode == 0, done.stderr
    assert [call[4] for call in calls] == ["^a$", "^c$"]


@pytest.mark.parametrize("code", [5, 6, 7])
def test_inconclusive_spread_and_no_slowdown_are_answers_that_go_on(tmp_path, code):
    done, calls, _ = _run(tmp_path, _history(["^a$", "^b$"]), codes=f"{code},0")
    assert done.returncode == 0 and len(calls) == 2


def test_any_other_exit_fails_the_step(tmp_path):
    done, calls, _ = _run(tmp_path, _history(["^a$", "^b$"]), codes="3,0")
    assert done.returncode == 3 and len(calls) == 1 and "::error::pairbench bisect exited 3" in done.stdout
