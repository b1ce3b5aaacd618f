"""Start-up: ``--version`` and ``--help`` load no command, and a command loads only what it needs.

The commands are imported when used (``cli.app.COMMANDS``), so a bare
``pairbench --version`` imports click and the standard library only. These
tests check which modules a fresh interpreter loads, never how long it takes:
the time is measured in ``benchmarks/overhead.py --startup``.
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import pkgutil
import re
import signal
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_runner import invoke
from fakes import FakeExecutor

import pairbench
import pairbench.cli
from pairbench.cli.app import COMMANDS, RENAMED, cli
from pairbench.errors import Terminated

HEAVY = ("numpy", "scipy", "rich", "jinja2", "plotly")

# Runs argv through main in a fresh interpreter; prints the heavy libraries and pairbench.cli modules loaded.
LOADED = f"HEAVY = {HEAVY!r}" + """
import io, json, sys
from pairbench.cli import main
code = main(sys.argv[1:], stdout=io.StringIO(), stderr=io.StringIO())
print(json.dumps({"code": code,
                  "heavy": sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY)),
                  "commands": sorted(m for m in sys.modules if m.startswith("pairbench.cli."))}))
"""


def _loaded(*argv: str) -> dict:
    done = subprocess.run([sys.executable, "-c", LOADED, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.e2e
@pytest.mark.parametrize("argv", [["--version"], ["-V"], ["--help"], []], ids=" ".join)
def test_version_and_help_load_no_command_and_no_numpy_scipy_rich_or_renderer(argv):
    loaded = _loaded(*argv)
    assert loaded["heavy"] == [] and loaded["commands"] == ["pairbench.cli.app"]


@pytest.mark.e2e
@pytest.mark.parametrize("command", ["run", "compare", "show", "report"])
def test_a_commands_help_loads_no_numpy_scipy_rich_or_renderer(command):
    loaded = _loaded(command, "--help")
    assert loaded["code"] == 0 and loaded["heavy"] == []


# Before the first sample a measuring command loads what that sample needs and nothing else: click,
# and of pairbench the command line, the session, the measuring (with the real executor and its
# spawner, which the scripted executor replaces here), the machine's metadata and the journal. A run
# loads no numpy: its one target has one order, and its samples become numpy columns after the last
# one. A comparison loads numpy too, for the seeded generator of its rounds' orders (numpy's: a seed
# draws the orders it always did), and the stopping path (the sign test and the confidence sequence on
# numpy and math), before the first sample so that nothing is imported beside one; bench also its
# harnesses, workers and lanes. scipy, SQLAlchemy, rich, plotly, jinja2, the analysis, the machine's
# checks and the renderers load after the last sample, when the command needs them. A module loaded and
# not listed fails the test: move what loads it after the sampling, or list it with the reason the
# first sample needs it.
LIBRARIES_BEFORE_FIRST_SAMPLE = {"run": {"click"}, "compare": {"click", "numpy"}, "bench": {"click", "numpy"}}
MEASURING = (
    "pairbench.cli", "pairbench.cli.app", "pairbench.cli.measuring", "pairbench.cli.options",
    "pairbench.cli.progress", "pairbench.cli.report",
    "pairbench.sessions", "pairbench.sessions.commands", "pairbench.sessions.result",
    "pairbench.sessions.activity",  # reads the machine's activity between the samples, once its window has passed
    "pairbench.sessions.record",  # which store a result goes to (target_of), with no store: nothing of it loaded
    "pairbench.measure", "pairbench.measure.child_environment",
    "pairbench.measure.commandline", "pairbench.measure.drain",
    "pairbench.measure.executor", "pairbench.measure.prctl", "pairbench.measure.sampler", "pairbench.measure.targets",
    "pairbench.measure.spawner", "pairbench.measure.native", "pairbench.measure.wire", "pairbench.measure.posix",
    "pairbench.measure.containment", "pairbench.measure.leftovers",  # the real executor and its spawner
    "pairbench.environment", "pairbench.environment._read", "pairbench.environment.activity",
    "pairbench.environment.cgroup", "pairbench.environment.stored",
    "pairbench.store", "pairbench.store.journal", "pairbench.store.document", "pairbench.store.files",
    "pairbench.store.checks", "pairbench.store.legacy",  # the journal's reader, beside its writer; no numpy until read
    "pairbench.store.project", "pairbench.store.database",  # the store's URL and the project config; not SQLAlchemy
    "pairbench.report", "pairbench.report.safe", "pairbench.report.exports",
)
COMPARING = (
    *MEASURING,
    "pairbench.analysis", "pairbench.analysis.criteria", "pairbench.analysis.stopping", "pairbench.analysis.effect",
    "pairbench.analysis.records", "pairbench.analysis.rules", "pairbench.analysis.summary",
    "pairbench.analysis.budget", "pairbench.analysis.relative", "pairbench.environment.findings",
    "pairbench.stats", "pairbench.stats.paired", "pairbench.stats.sequential", "pairbench.stats._binomial",
    "pairbench.stats._minimize", "pairbench.stats._order", "pairbench.stats._rmath", "pairbench.stats._validation",
    "pairbench.stats.counts",  # the exact rule of a count the same in every round: the stopping rule applies it
)
PAIRBENCH_BEFORE_FIRST_SAMPLE = {
    "run": MEASURING,
    "compare": COMPARING,
    "bench": (*COMPARING, "pairbench.cli.bench", "pairbench.sessions.bench", "pairbench.sessions.driver",
              "pairbench.measure.counters", "pairbench.measure.callgrind",  # a count metric's, asked or not
              "pairbench.sessions.lanes", "pairbench.sessions.sizing", "pairbench.measure.children",
              "pairbench.measure.fixed_cost", "pairbench.measure.harnesses", "pairbench.measure.harnesses.*",
              "pairbench.measure.placement",  # a harness binary's fresh copy per invocation
              "pairbench.measure.revisions", "pairbench.measure.worker", "pairbench.worker",
              "pairbench.worker.discovery", "pairbench.worker.protocol", "pairbench.worker.registry",
              "pairbench.store.shards"),  # which of a suite's benchmarks a bench --shard measures
}
NOT_VOCABULARY = ("pairbench.api", "pairbench.pytest_plugin", "pairbench.workloads")
"""Modules directly in the package (the vocabulary, allowed) that are entry points of their own."""


def _unlisted(modules: list[str], command: str) -> list[str]:
    """The modules of ``modules`` loaded before ``command``'s first sample that the lists above do not
    allow it."""
    standard = sys.stdlib_module_names | {"__main__", "_distutils_hack", "fakes", "cython_runtime"}
    libraries = {m.split(".")[0] for m in modules if not m.startswith("_cython_")} - standard - {"pairbench"}
    ours = [m for m in modules if m.split(".")[0] == "pairbench"]
    vocabulary = [m for m in ours if m.count(".") <= 1 and m not in NOT_VOCABULARY]
    unlisted = [m for m in ours if m not in vocabulary
                and not any(fnmatch.fnmatchcase(m, pattern) for pattern in PAIRBENCH_BEFORE_FIRST_SAMPLE[command])]
    return sorted(libraries - LIBRARIES_BEFORE_FIRST_SAMPLE[command]) + unlisted


# run, compare or bench through main with a scripted executor (or workers) that notes, at each sample
# (warm-up included), the threads alive and the modules loaded: only what the first sample needs is
# loaded before it, nothing is imported while the measured samples run, and no thread of pairbench's
# is alive beside them; beside compare's warm-up round only the thread loading what follows the last
# sample, which then leaves nothing of pairbench's to load.
WHILE_SAMPLING = f"""
import io, json, os, sys, threading
sys.path.insert(0, {str(Path(__file__).parents[1] / "support")!r})
""" + """
import gc
from pairbench import collector
collector.hold()  # as the console script does
from pairbench.cli import main
from pairbench.measure.sampler import Sampler
from fakes import FakeExecutor, FakeWorkers
seen, before, loaded = [], [], set()
warm_up = Sampler._warm_up
def noting_warm_up(self):
    before.append(sorted(sys.modules))  # what loaded before the first sample, warm-up or measured
    warm_up(self)
Sampler._warm_up = noting_warm_up
def note():  # the modules loaded at the first sample, then those loaded since the one before
    modules = set(sys.modules)
    seen.append({"threads": [t.name for t in threading.enumerate()], "new_modules": sorted(modules - loaded),
                 "tasks": len(os.listdir("/proc/self/task")), "collector": gc.isenabled()})
    loaded.update(modules)
    if len(seen) == 1 or seen[-1]["collector"] != seen[-2]["collector"]:  # counting is slow: at each change
        seen[-1]["frozen"] = gc.get_freeze_count() > 0
def duration(command, index, clock_ns):
    note()
    return 0.01
class NotingWorkers(FakeWorkers):
    def take(self, benchmark, iterations):
        note()
        return super().take(benchmark, iterations)
script = {"parse": {"per_iteration_ns": 120.0}, "sort": {"per_iteration_ns": 800.0}}
workers = NotingWorkers({"./bench-old": script, "./bench-new": script}, seed=1) if sys.argv[1] == "bench" else None
code = main(sys.argv[1:], stdout=io.StringIO(), stderr=io.StringIO(),
            executor_factory=lambda output: FakeExecutor(duration), environment=lambda *a, **k: {}, workers=workers)
print(json.dumps({"code": code, "seen": seen, "before": before, "at_exit": sorted(sys.modules)}))
"""


@pytest.mark.e2e
@pytest.mark.parametrize("argv", [["run", "--seed", "1", "--runs", "12", "true"],
                                  ["compare", "--seed", "1", "--runs", "12", "true", "true -a"],
                                  ["compare", "--seed", "1", "--min-runs", "6", "--max-runs", "40", "true", "true -a"],
                                  ["bench", "--harness", "pairbench", "--seed", "4", "--max-time", "1s",
                                   "./bench-old", "./bench-new"]],
                         ids=["run", "compare --runs", "compare adaptive", "bench"])
def test_only_what_the_first_sample_needs_loads_before_it_and_nothing_runs_beside_a_sample(argv, worker_programs):
    # in a directory of its own, so that no project config names a store
    done = subprocess.run([sys.executable, "-c", WHILE_SAMPLING, *argv], capture_output=True,
                          text=True, timeout=120, cwd=worker_programs)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    seen = found["seen"]
    assert found["code"] == 0 and len(seen) >= 12
    assert _unlisted(found["before"][0] if found["before"] else seen[0]["new_modules"], argv[0]) == []
    warmup = 2 if argv[0] == "compare" else 0  # compare's default: one warm-up round of its two sides
    assert all(set(s["threads"]) <= {"MainThread", "pairbench-beside-warmup"} for s in seen[:warmup])
    assert all(s["collector"] is False for s in seen[:warmup])  # held while the report's modules load
    measured = seen[warmup:]
    assert all(s["collector"] is True for s in measured) and measured[0]["frozen"]  # released, what loaded frozen
    assert all(s["threads"] == ["MainThread"] for s in measured)  # no thread of ours beside a measured sample
    assert [s["tasks"] for s in measured] == [1] * len(measured)  # nor one of a library's (numpy's OpenBLAS: blas_threads)
    assert all(s["new_modules"] == [] for s in measured[1:])  # and nothing imported while sampling
    first = {m for s in seen[:warmup + 1] for m in s["new_modules"]}  # loaded at the first measured sample
    if warmup:
        assert [m for m in found["at_exit"] if m.startswith("pairbench.") and m not in first] == []
    if argv[0] == "compare":  # np.median, np.quantile and np.unique load it; a compare takes stats._order's
        assert "numpy.ma" not in found["at_exit"]


def test_the_list_of_what_loads_before_the_first_sample_leaves_out_the_heavy_libraries_and_renderers():
    loaded = ["scipy", "scipy.stats", "sqlalchemy", "rich", "plotly", "jinja2", "pairbench.report.text",
              "pairbench.report.jsonfile", "pairbench.analysis.comparison", "pairbench.stats.descriptive",
              "pairbench.store.history", "pairbench.api", "numpy", "click", "json", "pairbench.settings"]
    heavy = ["jinja2", "plotly", "rich", "scipy", "sqlalchemy", "pairbench.report.text", "pairbench.report.jsonfile",
             "pairbench.analysis.comparison", "pairbench.stats.descriptive", "pairbench.store.history",
             "pairbench.api"]
    assert _unlisted(loaded, "compare") == heavy
    assert _unlisted(loaded, "run") == ["jinja2", "numpy", *heavy[1:]]


def test_a_run_is_not_allowed_the_stopping_path_or_the_machines_checks_before_its_first_sample():
    loaded = ["pairbench.analysis.stopping", "pairbench.stats.sequential", "pairbench.environment.checks",
              "pairbench.sessions.commands"]
    assert _unlisted(loaded, "run") == loaded[:3]
    assert _unlisted(loaded, "compare") == ["pairbench.environment.checks"]


def _load_every_command() -> None:
    for module in pkgutil.iter_modules(pairbench.cli.__path__, "pairbench.cli."):
        importlib.import_module(module.name)


def test_the_command_table_names_every_command_its_module_and_its_summary():
    """``pairbench --help`` lists the commands from the table: it must say what the modules say."""
    _load_every_command()
    assert sorted(name for name, command in cli.commands.items() if not command.hidden) == sorted(COMMANDS)
    assert sorted(name for name, command in cli.commands.items() if command.hidden) == sorted(RENAMED)
    for name, command in cli.commands.items():
        if command.hidden:
            assert command.callback.__wrapped__ is cli.commands[RENAMED[name][0]].callback, name
            continue
        module, summary = COMMANDS[name]
        assert command.callback.__module__ == module, name
        listed = click.Command(name, help=summary)
        for limit in (30, 45, 80, 200):
            assert listed.get_short_help_str(limit) == command.get_short_help_str(limit), (name, limit)


@pytest.mark.e2e
def test_help_lists_the_commands_as_it_does_once_they_are_loaded(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # click's width, here and in the fresh process
    fresh = subprocess.run([sys.executable, "-m", "pairbench", "--help"], capture_output=True, text=True,
                           timeout=120)
    _load_every_command()
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout == invoke("--help").out


def test_a_mistyped_command_is_told_the_commands_not_yet_loaded(monkeypatch):
    monkeypatch.setattr(cli, "commands", {})  # as in a fresh process: nothing loaded
    code, _, err = invoke("compar")
    assert code == 2 and "No such command 'compar'" in err
    if hasattr(click.exceptions, "NoSuchCommand"):  # click >= 8.4 suggests names
        assert "Did you mean 'compare'?" in err


@pytest.mark.parametrize(("interruption", "code", "said"), [
    (KeyboardInterrupt(), 130, "interrupted\n"),
    (Terminated(signal.SIGTERM), 143, "interrupted (SIGTERM)\n"),
])
def test_an_interruption_while_a_command_loads_is_one_line_and_its_exit_code(monkeypatch, interruption,
                                                                             code, said):
    def interrupted(name):
        raise interruption

    monkeypatch.setitem(cli.lazy, "loading", ("pairbench.cli.loading", "A command still loading."))
    monkeypatch.setattr("pairbench.cli.app.importlib.import_module", interrupted)
    result = invoke("loading")
    assert result.code == code and result.err.lstrip("\n") == said  # click first ends the line of ^C


# The console script ends with os._exit once the CLI is done (no teardown of numpy and scipy).
CONSOLE = """
import atexit, sys, threading, time
sys.argv = ["pairbench", *sys.argv[1:]]
atexit.register(lambda: print("atexit handler ran", flush=True))
if "--note-collector" in sys.argv:
    import gc
    sys.argv.remove("--note-collector")
    atexit.register(lambda: print(f"collector enabled: {gc.isenabled()}", flush=True))
if "--with-thread" in sys.argv:
    sys.argv.remove("--with-thread")
    threading.Thread(target=lambda: (time.sleep(0.2), print("thread finished", flush=True))).start()
from pairbench.__main__ import entry_point
entry_point()
"""


def _console(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CONSOLE, *argv], capture_output=True, text=True, timeout=120)


@pytest.mark.e2e
def test_the_console_script_exits_with_the_clis_code_after_flushing_and_running_atexit_handlers():
    done = _console("--version")
    assert done.returncode == 0 and done.stdout == f"pairbench, version {pairbench.__version__}\natexit handler ran\n"
    done = _console("compar")
    assert done.returncode == 2 and "No such command 'compar'" in done.stderr
    assert done.stdout == "atexit handler ran\n"


@pytest.mark.e2e
def test_the_console_script_holds_the_collector_until_a_command_starts(tmp_path):
    assert "collector enabled: False" in _console("--note-collector", "--version").stdout  # no command ran
    missing = str(tmp_path / "missing.json")
    assert "collector enabled: True" in _console("--note-collector", "show", missing).stdout


@pytest.mark.e2e
def test_the_console_script_waits_for_a_thread_still_running():
    done = _console("--with-thread", "--version")
    assert done.returncode == 0 and "thread finished" in done.stdout.splitlines()


# After the last sample: a run's or a compare's summary and verdict (the shape, Grubbs' critical
# value, the autoregressive error of the mean, the Ljung-Box test, the shift function, the
# Harrell-Davis density, the Mann-Whitney and signed-rank p-values) import no scipy at all: their
# special functions are pairbench's own (stats._special), since importing scipy.special alone costs
# about 0.27 s after the last sample and scipy.stats 0.5-0.8 s more of CPU
# (benchmarks/results/startup.md). Statistics other commands or options use (the bootstrap,
# Theil-Sen) may still load scipy. The fake's durations and their differences are
# all distinct, so that a 30-round compare takes both rank tests' exact route and one of 60 rounds
# their normal approximation.
AFTER_SAMPLING = f"""
import io, json, sys
sys.path.insert(0, {str(Path(__file__).parents[1] / "support")!r})
""" + """
from pairbench.cli import main
from fakes import FakeExecutor
out = io.StringIO()
code = main(sys.argv[1:], stdout=out, stderr=io.StringIO(),
            executor_factory=lambda output: FakeExecutor(lambda command, index, clock_ns: 0.01 + 1e-4 * (index % 7) + 1e-9 * index * index),
            environment=lambda *a, **k: {})
print(json.dumps({"code": code, "out": out.getvalue(), "scipy": sorted(m for m in sys.modules if m.split(".")[0] == "scipy")}))
"""


@pytest.mark.e2e
@pytest.mark.parametrize("argv", [["run", "--seed", "1", "--runs", "30", "true"],
                                  ["compare", "--seed", "1", "--runs", "30", "true", "true -a"],
                                  ["compare", "--seed", "1", "--min-runs", "60", "--max-runs", "60", "true", "true -a"]],
                         ids=["run", "compare --runs", "compare adaptive"])
def test_a_run_or_compare_concludes_without_importing_scipy(argv, tmp_path):
    done = subprocess.run([sys.executable, "-c", AFTER_SAMPLING, *argv], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["code"] == 0 and "Tukey fence" in found["out"] and "effective n" in found["out"]
    assert found["scipy"] == []
    if argv[0] == "compare":  # its rank tests' p-values are shown beside the verdict
        assert re.search(r"Mann-Whitney p [=<] 0\.\d+; Wilcoxon signed-rank p [=<] 0\.\d+", found["out"])


class _ActivityWindow:
    """The machine's activity window, its time moved by the samples taken (``sessions.activity``)."""

    def __init__(self, events: list):
        self.events, self.elapsed = events, 0.0

    def elapsed_s(self) -> float:
        return self.elapsed

    def finish(self, window_s: float, **_) -> dict:
        self.events.append("activity read")
        return {"window_s": window_s, "cpu": {"busy_cpus": 0.5}}


def _run_with_activity_window(monkeypatch, tmp_path, environment: dict, runs: int, *options: str
                              ) -> tuple[list, dict]:
    monkeypatch.setattr("pairbench.environment.ACTIVITY_WINDOW_S", 0.1)
    events: list = []
    window = _ActivityWindow(events)
    monkeypatch.setattr("pairbench.cli.measuring.open_activity_window", lambda: window)

    def duration(command, index, clock_ns):
        events.append("sample")
        window.elapsed += 0.04
        return 0.04

    result = invoke("run", "--runs", str(runs), *options, "--json", str(tmp_path / "r.json"), "true",
                    executor=FakeExecutor(duration), environment=environment)
    assert result.code == 0, result.err
    return events, json.loads((tmp_path / "r.json").read_text())["environment"]


def test_the_machines_activity_is_read_between_samples_once_its_window_has_passed(monkeypatch, tmp_path):
    events, stored = _run_with_activity_window(monkeypatch, tmp_path, {"host": "h", "activity": None}, runs=5)
    assert events == ["sample", "sample", "sample", "activity read", "sample", "sample"]
    assert stored["activity"] == {"window_s": 0.1, "cpu": {"busy_cpus": 0.5}}


def test_the_machines_activity_is_not_read_between_warmup_samples(monkeypatch, tmp_path):
    # beside them, the report's modules load: a reading there waits for that thread at every read
    events, _ = _run_with_activity_window(monkeypatch, tmp_path, {"host": "h", "activity": None}, 2,
                                          "--warmup", "4")
    assert events == ["sample"] * 5 + ["activity read", "sample"]


def test_a_run_shorter_than_the_activity_window_reads_it_after_its_last_sample(monkeypatch, tmp_path):
    events, stored = _run_with_activity_window(monkeypatch, tmp_path, {"host": "h", "activity": None}, runs=1)
    assert events == ["sample", "activity read"]
    assert stored["activity"]["window_s"] == pytest.approx(0.04)  # what passed of it, not waited for


def test_machine_metadata_that_holds_its_activity_is_not_read_again(monkeypatch, tmp_path):
    given = {"host": "h", "activity": {"window_s": 0.1, "cpu": None}}
    events, stored = _run_with_activity_window(monkeypatch, tmp_path, given, runs=5)
    assert "activity read" not in events and stored["activity"] == given["activity"]
