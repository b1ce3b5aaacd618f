"""SIGTERM and SIGHUP end a run like Ctrl-C does; Ctrl-C at any moment, start-up included, is one line.

The in-process tests raise, from the fake executor, the exception pairbench's own
handler raises for the signal; the ``e2e`` ones send real signals to a real
``python -m pairbench`` and wait for what it writes, never for a fixed time.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runner import invoke
from fakes import FakeExecutor
from processes import HANDLED_SIGNALS, default_dispositions, wait_until

from pairbench import __main__ as main_module
from pairbench.errors import Terminated
from pairbench.store.journal import journal_path

PACKAGE = Path(main_module.__file__).resolve().parent

SIGNALS = [(signal.SIGTERM, 143), (signal.SIGHUP, 129)]
SIGNAL_IDS = ["SIGTERM", "SIGHUP"]
HANDLED = HANDLED_SIGNALS


@pytest.fixture
def signal_handlers_restored():
    """``entry_point`` ignores the signals it handles just before the process exits; in a test that
    calls it, put the handlers back (an ignored disposition would be inherited by later tests' children)."""
    saved = {signum: signal.getsignal(signum) for signum in HANDLED}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


@pytest.mark.parametrize(("signum", "code"), SIGNALS, ids=SIGNAL_IDS)
def test_a_terminating_signal_saves_the_result_runs_cleanup_and_exits_128_plus_the_signal(
        use_executor, tmp_path, signum, code):
    executor = use_executor(FakeExecutor({"sleep 0.1": [0.1] * 5 + [Terminated(signum)]},
                                         default=0.01))
    out = tmp_path / "r.json"
    result = invoke("run", "--runs", "20", "--seed", "1", "--json", str(out), "--cleanup", "echo clean",
                    "sleep 0.1")
    assert result.code == code, result.err
    document = json.loads(out.read_text())
    assert document["state"] == "interrupted"
    assert document["stopped_because"] == f"interrupted ({signal.Signals(signum).name})"
    assert len(document["series"][0]["samples"]["wall_ns"]) == 5
    assert executor.texts[-1] == "echo clean"
    assert not journal_path(out).exists()


def test_a_terminating_signal_during_cleanup_is_noted_with_its_name(use_executor, tmp_path):
    use_executor(FakeExecutor({"echo clean": Terminated(signal.SIGTERM)}, default=0.01))
    out = tmp_path / "r.json"
    result = invoke("run", "--runs", "3", "--json", str(out), "--cleanup", "echo clean", "sleep 0.1")
    assert result.code == 143
    assert "cleanup interrupted (SIGTERM)" in result.out
    assert not journal_path(out).exists()


def test_ctrl_c_while_pairbench_is_still_importing_is_one_line_and_exit_130(monkeypatch, capfd,
                                                                           signal_handlers_restored):
    def interrupted_import():
        raise KeyboardInterrupt

    monkeypatch.setattr(main_module, "_load_cli", interrupted_import)
    with pytest.raises(SystemExit) as exited:
        main_module.entry_point()
    assert exited.value.code == 130
    assert capfd.readouterr().err == "pairbench: interrupted\n"


# -- real signals ------------------------------------------------------------------------


def _start(*args: str, cwd=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pairbench", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd, preexec_fn=default_dispositions)


def _journaled_samples(path) -> int:
    try:
        return max(0, journal_path(path).read_text().count("\n") - 1)
    except FileNotFoundError:
        return 0


def _wait_for_samples(process: subprocess.Popen, out, count: int) -> None:
    """Wait until ``count`` samples are journaled; fail at once, saying why, if pairbench exits first."""
    wait_until(lambda: _journaled_samples(out) >= count or process.poll() is not None, 60)
    if process.poll() is not None:
        pytest.fail(f"pairbench exited {process.returncode} before sampling: {process.communicate()[1]}")
    assert _journaled_samples(out) >= count


def _signalled_after(process: subprocess.Popen, out, samples: int, signum: int) -> tuple[str, str]:
    """Send ``signum`` once ``samples`` samples are journaled; what pairbench printed by its end."""
    try:
        _wait_for_samples(process, out, samples)
        process.send_signal(signum)
        return process.communicate(timeout=60)
    finally:
        process.kill()


@pytest.mark.e2e
@pytest.mark.parametrize(("signum", "code"), SIGNALS, ids=SIGNAL_IDS)
def test_a_real_terminating_signal_is_handled_like_ctrl_c(tmp_path, signum, code):
    out, cleaned = tmp_path / "r.json", tmp_path / "cleaned"
    process = _start("run", "-q", "--runs", "100000", "--json", str(out), "--cleanup", f"touch {cleaned}",
                     "sleep 0.02")
    stdout, stderr = _signalled_after(process, out, 2, signum)
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr
    document = json.loads(out.read_text())
    assert document["state"] == "interrupted" and document["series"][0]["samples"]["wall_ns"]
    assert cleaned.exists()
    assert not journal_path(out).exists()


@pytest.mark.e2e
def test_a_real_ctrl_c_saves_the_finished_samples_and_exits_130(tmp_path):
    out = tmp_path / "r.json"
    process = _start("run", "-q", "--runs", "50", "--json", str(out), "sleep 0.05", "sleep 0.5")
    stdout, stderr = _signalled_after(process, out, 1, signal.SIGINT)
    assert process.returncode == 130, stderr
    document = json.loads(out.read_text())
    assert document["state"] == "interrupted"
    assert sum(len(series["samples"]["wall_ns"]) for series in document["series"]) >= 1
    assert "interrupted" in stdout
    assert not journal_path(out).exists()


@pytest.mark.e2e
def test_sighup_stays_ignored_under_nohup(tmp_path):
    out = tmp_path / "r.json"
    process = subprocess.Popen(
        [sys.executable, "-c", "import signal, sys, runpy; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
         "sys.argv = ['pairbench', *sys.argv[1:]]; runpy.run_module('pairbench', run_name='__main__')",
         "run", "-q", "--runs", "6", "--json", str(out), "sleep 0.3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_dispositions)
    _, stderr = _signalled_after(process, out, 1, signal.SIGHUP)
    assert process.returncode == 0, stderr
    assert json.loads(out.read_text())["state"] == "complete"


@pytest.mark.e2e
@pytest.mark.parametrize("delay_s", [0.0, 0.05, 0.1, 0.2, 0.4])
def test_ctrl_c_at_any_moment_of_start_up_never_prints_a_traceback(delay_s):
    """Whenever the signal lands, the outcome is Python's own default action before pairbench runs
    any code (killed by SIGINT, what a shell reports as 130), exit 130, or (too late) success."""
    process = _start("run", "--runs", "3", "sleep 0.01")
    try:
        time.sleep(delay_s)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    if _interrupted_before_pairbench_ran(stderr):  # Python's own start-up, which no program can handle
        assert process.returncode in (1, -signal.SIGINT), stderr
        return
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert process.returncode in (130, -signal.SIGINT, 0), stderr


def _interrupted_before_pairbench_ran(stderr: str) -> bool:
    """A KeyboardInterrupt traceback none of whose frames is in pairbench: the interpreter's own
    start-up (``site``, ``runpy`` and the standard library they import, such as ``collections``
    for ``runpy``'s ``contextlib``) before any module of pairbench ran. A Ctrl-C there is Python's."""
    files = re.findall(r'File "([^"]*)"', stderr)
    return (stderr.rstrip().endswith("KeyboardInterrupt") and bool(files)
            and not any(Path(f).resolve().is_relative_to(PACKAGE) for f in files if not f.startswith("<")))


# -- signals while a run starts ------------------------------------------------------------

# main, as the console script runs it (signals held from the start), with a scripted executor and a
# machine reader that sends this process the signals named on the command line while the run starts.
STARTING = f"""
import io, json, os, signal, sys
sys.path.insert(0, {str(Path(__file__).parents[1] / "support")!r})
""" + """
from pairbench import held_signals
held_signals.hold()
from pairbench.cli import main
from fakes import FakeExecutor
signals, argv = sys.argv[1].split(","), sys.argv[2:]
def reading_the_machine(*args, **options):
    for name in signals:
        os.kill(os.getpid(), getattr(signal, name))
    return {}
executor = FakeExecutor(default=0.01)
err = io.StringIO()
code = main(argv, stdout=io.StringIO(), stderr=err, executor_factory=lambda output: executor,
            environment=reading_the_machine)
print(json.dumps({"code": code, "ran": executor.texts, "err": err.getvalue()}))
"""


def _starting(tmp_path, signals: str, *argv: str) -> dict:
    done = subprocess.run([sys.executable, "-c", STARTING, signals, *argv], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, preexec_fn=default_dispositions)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.e2e
@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_signal_while_a_run_starts_leaves_its_result_and_runs_cleanup(tmp_path, name, code):
    out = tmp_path / "r.json"
    found = _starting(tmp_path, name, "run", "--runs", "5", "--json", str(out), "--setup", "echo setup",
                      "--cleanup", "echo clean", "sleep 0.1")
    assert found["code"] == code, found["err"]
    document = json.loads(out.read_text())
    assert document["state"] == "interrupted"
    assert sum(len(series["samples"]["wall_ns"]) for series in document["series"]) == 0
    assert found["ran"] == ["echo clean"]  # not --setup: the run ended before it
    assert not journal_path(out).exists()


@pytest.mark.e2e
def test_a_second_signal_while_a_run_starts_interrupts_at_once(tmp_path):
    out = tmp_path / "r.json"
    found = _starting(tmp_path, "SIGTERM,SIGTERM", "run", "--runs", "5", "--json", str(out),
                      "--cleanup", "echo clean", "sleep 0.1")
    assert found["code"] == 143 and found["err"].lstrip("\n") == "interrupted (SIGTERM)\n"
    assert found["ran"] == [] and not out.exists() and not journal_path(out).exists()


@pytest.mark.e2e
def test_a_signal_held_through_a_command_that_does_not_measure_interrupts_it(tmp_path):
    found = _starting(tmp_path, "", "--version")
    assert found["code"] == 0
    done = subprocess.run([sys.executable, "-c", STARTING.replace("code = main(", "os.kill(os.getpid(), "
                           "signal.SIGINT)\ncode = main("), "", "--version"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, preexec_fn=default_dispositions)
    found = json.loads(done.stdout)
    assert found["code"] == 130 and found["err"] == "interrupted\n"


def _catches_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGTERM yet (its SigCgt mask in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            caught = next(line for line in f if line.startswith("SigCgt:"))
    except (FileNotFoundError, StopIteration):
        return False
    return bool(int(caught.split()[1], 16) >> (signal.SIGTERM - 1) & 1)


@pytest.mark.e2e
def test_a_real_sigterm_as_soon_as_pairbench_can_take_one_leaves_the_result_and_runs_cleanup(tmp_path):
    """Sent the moment the console script holds signals, before its code has loaded: the run ends
    as one interrupted while sampling does (some samples may be taken first on a loaded machine)."""
    out, cleaned = tmp_path / "r.json", tmp_path / "cleaned"
    process = _start("run", "-q", "--runs", "5", "--json", str(out), "--cleanup", f"touch {cleaned}", "sleep 0.2")
    try:
        assert wait_until(lambda: _catches_sigterm(process.pid) or process.poll() is not None, 60)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 143, stderr
    assert json.loads(out.read_text())["state"] == "interrupted"
    assert cleaned.exists() and not journal_path(out).exists()
