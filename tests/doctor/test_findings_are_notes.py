"""A doctor finding is a typed note judged from data, worded only in ``report/``; ``doctor COMMAND``
measures a run and ``analyse`` judges it from the run's samples, like every other run."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from fakes import FakeExecutor

from pairbench.analysis import analyse
from pairbench.environment.checks import evaluate
from pairbench.notes import CODES
from pairbench.report.doctor import finding_dict, reading
from pairbench.report.wording import word
from pairbench.sessions.doctor import validate_command
from pairbench.settings import ValidationPlan

SRC = Path(__file__).resolve().parents[2] / "src" / "pairbench"
STARTUP_S = 0.0005


def linear(setup_s: float, per_iteration_s: float):
    def script(command, index, clock):
        if command.text == "true":
            return {"duration": STARTUP_S, "involuntary_cs": 1}
        k = int(command.text.split()[1])
        return {"duration": STARTUP_S + setup_s + k * per_iteration_s, "max_rss_kib": 9000 + 1000 * index % 7,
                "involuntary_cs": 1 + index % 3}

    return script


@pytest.mark.parametrize("name", ["noisy-laptop", "container", "vm", "tuned-server"])
def test_every_machine_finding_is_a_registered_note_whose_words_are_reports(machine, name):
    for finding in evaluate(machine(name)):
        assert finding.note.code in CODES and finding.note.code == "doctor-" + finding.check
        assert finding.note.data["status"] == finding.status
        assert reading(finding) == word(finding.note)
        assert not hasattr(finding, "why") and not hasattr(finding, "fix")


def test_the_judging_modules_hold_no_words_for_users():
    """The checks and the doctor's analysis build findings from figures; only ``report/`` words them
    (a malformed stored value is named by the error it raises)."""
    for module in ("environment/checks.py", "environment/pausing.py", "analysis/doctor.py", "sessions/doctor.py"):
        tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
        raised = {id(node) for r in ast.walk(tree) if isinstance(r, ast.Raise) for node in ast.walk(r)}
        texts = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and id(node) not in raised
                 and isinstance(node.value, str) and " " in node.value and not _docstring(tree, node)]
        assert [t for t in texts if any(word_ in t for word_ in (" the ", " is ", " fix", "sudo", "echo "))] == [], module


def _docstring(tree, constant) -> bool:
    return any(isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
               and isinstance(node.body[0], ast.Expr) and node.body[0].value is constant for node in ast.walk(tree))


def test_a_command_is_judged_by_analyse_from_the_samples_of_its_run():
    plan = ValidationPlan("echo {iterations}", runs=4, seed=2)
    run, analysis = validate_command(plan, FakeExecutor(linear(0.050, 0.002)), timer_resolution_ns=30)
    assert run.kind == "doctor" and [side.name for side in run.sides] == [
        "1 iterations", "2 iterations", "4 iterations", "8 iterations", "process start-up (true)"]
    assert analyse(run).doctor == analysis.doctor  # judged again from the stored samples: the same findings
    assert analyse(run.replace(notes=())).doctor == analysis.doctor  # no finding rests on a stored note
    without_probe = run.replace(samples={key: rows for key, rows in run.samples.items() if key[0] == 0})
    duration = {f.check: f for f in analyse(without_probe).doctor.findings}["duration"]
    assert "startup_share" not in duration.data  # the start-up the judgement used is the run's probe samples


def test_a_findings_json_carries_its_note_beside_its_words():
    plan = ValidationPlan("echo {iterations}", runs=3, seed=1)
    report = validate_command(plan, FakeExecutor(linear(0.050, 0.002)), timer_resolution_ns=30)[1].doctor
    setup = finding_dict({f.check: f for f in report.findings}["setup-overhead"])
    assert setup["code"] == "doctor-setup-overhead" and setup["status"] == "warn"
    assert setup["data"]["needed_iterations"] == 475 and "status" not in setup["data"]
    assert setup["fix"].endswith("or use {iterations} >= 475 so it is under 5%")
