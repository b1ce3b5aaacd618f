"""The red team's earlier findings that held when re-tried by hand, kept as tests (the others already
are: F1 in tests/measure/test_posix.py, F10 in test_outputs.py, F11 in test_startup.py and
test_signals.py, F15 and F16 in tests/store/test_journal.py, F17 in tests/doctor/test_privacy.py, F18 in
test_stored_results.py, F19 in tests/report/test_csv.py, F20 in test_compare_command.py; G7 in
test_output_guard.py, G16 in tests/adapters/test_gbench_names.py, G17 in test_criterion_suite.py, G20
in tests/store/test_store_hardening.py; F9, an optional field missing, in tests/fuzz/test_result_fields.py,
which deletes every field in turn).

- F5: an alpha too small to ever decide is refused, not computed at length (``diff --alpha 1e-300``).
- F8: NaN is refused by every option that takes a number or a duration, and in the config and a
  store URL.
- F12: SIGTERM and SIGHUP to ``bench`` keep the samples taken and end its workers.
- F21: ``-i`` keeps the run going past failed samples, but a gate cannot pass a side that failed.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import invoke
from fakes import FakeExecutor, FakeWorkers
from processes import default_dispositions, wait_until

from pairbench.errors import EXIT_MEASUREMENT, EXIT_USAGE


@pytest.fixture
def two_results(use_executor, tmp_path) -> tuple[str, str]:
    paths = []
    for command in ("sleep 0.1", "sleep 0.2"):
        use_executor(FakeExecutor({"sleep 0.1": 0.1, "sleep 0.2": 0.2}))
        path = tmp_path / f"{command[-1]}.json"
        assert invoke("run", "--runs", "8", "--seed", "1", "--json", str(path), command).code == 0
        paths.append(str(path))
    return paths[0], paths[1]


@pytest.mark.parametrize("alpha", ["1e-300", "0", "nan", "inf", "-0.1"])
def test_diff_refuses_an_alpha_it_could_never_decide_at(two_results, alpha):
    code, _, err = invoke("diff", "--alpha", alpha, *two_results)
    assert code == EXIT_USAGE and "--alpha" in err and err.count("\n") == 1, err


@pytest.mark.parametrize(("command", "option"), [
    ("bench", "--alpha"), ("bench", "--threshold"), ("bench", "--sample-time"), ("bench", "--suite-time"),
    ("bench", "--timeout"), ("diff", "--threshold"), ("compare", "--max-time"), ("run", "--timeout"),
])
def test_nan_is_refused_naming_the_option(worker_programs, two_results, command, option):
    sides = {"bench": ("./bench-old", "./bench-new"), "diff": two_results, "compare": ("true", "false"),
             "run": ("true",)}[command]
    code, _, err = invoke(command, option, "nan", *sides, workers=FakeWorkers({}))
    assert code == EXIT_USAGE and option in err and err.count("\n") == 1, err


@pytest.mark.e2e
def test_nan_as_a_build_timeout_or_a_store_timeout_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "pairbench.toml").write_text('[confirm]\nbuild = "true"\nbench = "b.py"\nbuild_timeout = "nan"\n')
    code, _, err = invoke("confirm", "HEAD", "HEAD")
    assert code == EXIT_USAGE and "build_timeout" in err and err.count("\n") == 1, err
    code, _, err = invoke("store", "info", "--store", f"sqlite:///{tmp_path / 'h.db'}?timeout=nan")
    assert code == 4 and "timeout" in err and err.count("\n") == 1, err


def test_ignore_failure_keeps_going_but_a_gate_never_passes_a_side_that_always_failed(use_executor):
    use_executor(FakeExecutor({"sleep 0.1": 0.1, "false": {"duration": 0.1, "status": 1}}))
    code, _, err = invoke("compare", "-i", "--runs", "8", "--seed", "1", "--fail-on", "slower", "sleep 0.1", "false")
    assert code == EXIT_MEASUREMENT, err
    assert "has no successful sample" in err


WORKER = """import pairbench, time

@pairbench.benchmark
def slow():
    time.sleep(0.005)
"""


@pytest.mark.e2e
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_terminating_signal_to_bench_keeps_its_samples_and_ends_its_workers(tmp_path, signum, code):
    bench = tmp_path / "bench_slow_worker.py"
    bench.write_text(WORKER)
    result = tmp_path / "r.json"
    process = subprocess.Popen([sys.executable, "-m", "pairbench", "bench", str(bench), "--no-store", "-q",
                                "--runs", "100000", "--max-time", "10m", "--json", str(result)], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_dispositions)
    journal = Path(f"{result}.partial")
    try:
        assert wait_until(lambda: journal.exists() and journal.stat().st_size > 4096 or process.poll() is not None,
                          120)
        assert process.poll() is None, process.communicate()
        process.send_signal(signum)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == code, err
    shown = invoke("show", str(result if result.exists() else journal))
    assert shown.code == 0 and "slow" in shown.out, shown.err
    assert wait_until(lambda: not _running_with(str(bench)), 30)


def _running_with(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
