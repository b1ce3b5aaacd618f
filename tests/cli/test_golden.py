"""What `run`, `compare`, `show` and `report --format json` print, against golden files.

Commands are scripted on a virtual clock (FakeExecutor) and the machine is
``cli_runner.FIXED_ENVIRONMENT``, so the output depends on nothing of the host.
The result file's times are fixed before ``show`` and ``report`` read it.
On a mismatch the actual output lands beside the golden file (``*.actual``);
``PAIRBENCH_UPDATE_GOLDEN=1`` rewrites them after an intended change.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_runner import invoke
from fakes import FakeExecutor
from golden import assert_golden

GOLDEN = Path(__file__).parent / "golden"
COMMANDS = {"sleep 0.1": 1.0, "sleep 0.2": 1.03, "sleep 0.3": 0.97}


def machine(seed: int, *, rss_floor_kib: int | None = 13_000) -> FakeExecutor:
    """Each command's scripted time: its factor of 50 ms, a slow phase shared by all, own noise,
    an occasional interruption, and resource usage to show."""
    rng = np.random.default_rng(seed)

    def run(command, index, clock_ns):
        phase = 1.0 + 0.02 * np.sin(clock_ns / 3e9)
        wall = 0.05 * COMMANDS.get(command.text, 1.0) * phase * float(np.exp(rng.normal(0.0, 0.004)))
        if rng.random() < 0.05:
            wall *= 1.2
        return {"duration": wall, "user_ns": int(wall * 0.9e9), "sys_ns": int(wall * 0.04e9),
                "max_rss_kib": 20_000 + int(rng.integers(0, 16)) * 4,
                "voluntary_cs": int(rng.integers(0, 3)), "involuntary_cs": int(rng.poisson(0.2))}

    return FakeExecutor(run, rss_floor_kib=rss_floor_kib)


CASES = {
    "run": (["run", "--runs", "20", "--seed", "3", "sleep 0.1", "sleep 0.2"], 1),
    "compare-adaptive": (["compare", "--seed", "1", "sleep 0.1", "sleep 0.2"], 2),
    "compare-family": (["compare", "--runs", "40", "--seed", "5", "--self-check", "--name", "old",
                        "--name", "slow", "--name", "fast", "sleep 0.1", "sleep 0.2", "sleep 0.3"], 3),
}


@pytest.mark.parametrize("case", CASES)
def test_terminal_output_of_a_measurement_matches_its_golden_file(case):
    argv, seed = CASES[case]
    result = invoke(*argv, "-q", executor=machine(seed))
    assert result.code == 0, result.err
    assert_golden(GOLDEN / f"{case}.txt", result.out)


@pytest.fixture
def stored(tmp_path) -> Path:
    """The family comparison's result file, with fixed times (the rest is already fixed)."""
    argv, seed = CASES["compare-family"]
    path = tmp_path / "r.json"
    result = invoke(*argv, "-q", "--json", str(path), executor=machine(seed))
    assert result.code == 0, result.err
    document = json.loads(path.read_text())
    document.update(started_at="2026-11-24T10:00:00+00:00", finished_at="2026-11-24T10:00:30+00:00")
    path.write_text(json.dumps(document))
    return path


def test_show_prints_what_the_measurement_printed(stored):
    assert_golden(GOLDEN / "compare-family.txt", invoke("show", str(stored)).out)


def test_report_as_json_matches_its_golden_file(stored):
    result = invoke("report", str(stored), "--format", "json")
    assert result.code == 0, result.err
    assert_golden(GOLDEN / "compare-family.report.json", result.out)


# The convention itself: numbers printed at full precision differ in their last digits between numpy
# builds and CPUs (0.6132170425872726 here, ...725 on another machine); nothing else may differ.
GOLDEN_JSON = '{"sd": 2210053.518916951, "lag1": 0.6132170425872726, "verdict": "slower", "n": [40, 0.0]}'


@pytest.mark.parametrize("actual", [
    '{"sd": 2210053.5189169515, "lag1": 0.6132170425872725, "verdict": "slower", "n": [40, 1e-17]}',
    GOLDEN_JSON.replace(" ", ""),
], ids=["last-digits", "spacing"])
def test_a_json_golden_file_takes_numbers_to_a_relative_tolerance(tmp_path, actual):
    (tmp_path / "g.json").write_text(GOLDEN_JSON)
    assert_golden(tmp_path / "g.json", actual)


@pytest.mark.parametrize("actual", [
    GOLDEN_JSON.replace("0.6132170425872726", "0.61321704"),
    GOLDEN_JSON.replace('"slower"', '"faster"'),
    GOLDEN_JSON.replace("[40, 0.0]", "[40, 0.0, 1]"),
    GOLDEN_JSON.replace('"n"', '"m"'),
    GOLDEN_JSON.replace("40", "true"),
], ids=["beyond-the-tolerance", "a-word", "an-item-more", "a-key", "a-type"])
def test_a_json_golden_file_takes_nothing_else_but_exactly(tmp_path, actual):
    (tmp_path / "g.json").write_text(GOLDEN_JSON)
    with pytest.raises(pytest.fail.Exception, match="output differs"):
        assert_golden(tmp_path / "g.json", actual)
    assert (tmp_path / "g.json.actual").read_text() == actual


def test_a_csv_golden_file_takes_numbers_to_a_relative_tolerance_and_words_exactly(tmp_path):
    (tmp_path / "g.csv").write_text("side,sd\nold build,2210053.518916951\n")
    assert_golden(tmp_path / "g.csv", "side,sd\nold build,2210053.5189169515\n")
    with pytest.raises(pytest.fail.Exception, match="row"):
        assert_golden(tmp_path / "g.csv", "side,sd\nnew build,2210053.518916951\n")
