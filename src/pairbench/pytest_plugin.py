"""The pytest plugin: a ``pairbench`` fixture, and ``pytest --pairbench-against REV``.

::

    def test_parse(pairbench):
        pairbench(parse, data)

Without options, each call measures ``parse(data)`` in this process (about
``--pairbench-max-time`` per test) and the terminal summary lists each test's
time per call with its interval. With ``--pairbench-against REV`` the tests
run as usual, and at the end every test that called the fixture is compared
between git revision REV (checked out into a temporary worktree) and the
working tree: two workers, each running this plugin's tests of its own tree in
*register* mode (the fixture records the call instead of measuring it) and
serving the recorded calls over the worker protocol, driven by ``pairbench
bench``'s session. Verdicts go to the terminal summary; ``--pairbench-json
FILE`` writes the result document (``pairbench show``/``report`` read it);
``--pairbench-fail-on slower`` makes a slower verdict fail the session.

Importing this module (pytest loads it in every session, through its entry
point) imports nothing heavy: pairbench's analysis loads only when used.
"""

from __future__ import annotations

import functools
import os
import re
import sys

import pytest

_REGISTERED: dict[str, functools.partial] = {}  # register mode: benchmark name -> the call
_NAME_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f]")
_RESULTS_KEY = pytest.StashKey[list]()
_USED_KEY = pytest.StashKey[list]()


def pytest_addoption(parser):
    group = parser.getgroup("pairbench", "pairbench: paired benchmarks")
    group.addoption("--pairbench-against", metavar="REV", default=None,
                    help="Compare every test using the pairbench fixture between git revision REV and "
                         "the working tree (paired rounds in two fresh worker processes per block).")
    group.addoption("--pairbench-json", metavar="FILE", default=None,
                    help="Write the pairbench result document (raw samples included) to FILE.")
    group.addoption("--pairbench-max-time", metavar="DURATION", default=None,
                    help="Time budget per benchmark (default 1s measured alone, 60s compared: each block "
                         "of rounds starts both sides' pytest workers afresh).")
    group.addoption("--pairbench-fail-on", metavar="slower|faster|change|never", default="never",
                    help="With --pairbench-against: fail the session when a verdict matches.")
    group.addoption("--pairbench-metric", metavar="wall|cpu", default=None,
                    help="With --pairbench-against: what the verdicts are on, wall (elapsed) or cpu time of "
                         "each call (default: as pairbench bench).")
    group.addoption("--pairbench-register", action="store_true", default=False,
                    help="(internal) record the fixture's calls for a worker instead of measuring them.")


def benchmark_name(nodeid: str) -> str:
    """A test's node id as a worker protocol benchmark name: no whitespace, at most 200 bytes."""
    name = _NAME_UNSAFE.sub("_", nodeid) or "test"
    return name.encode("utf-8")[:200].decode("utf-8", "ignore")


@pytest.fixture
def pairbench(request):
    """``pairbench(function, *args, **kwargs)``: measure ``function(*args, **kwargs)``; with
    ``--pairbench-against``, compare it with the same test at the revision (at the session's end)."""
    config = request.config
    name = benchmark_name(request.node.nodeid)

    def measure(function, *args, **kwargs):
        call = functools.partial(function, *args, **kwargs)
        if config.getoption("pairbench_register"):
            _REGISTERED[name] = call
            return None
        if config.getoption("pairbench_against"):
            config.stash.setdefault(_USED_KEY, []).append(request.node.nodeid)
            return call()  # checked to work here; compared at the end
        from pairbench.sessions.functions import measure_functions

        run, analysis = measure_functions(call, None, name=name,
                                          max_time=config.getoption("pairbench_max_time") or "1s")
        config.stash.setdefault(_RESULTS_KEY, []).append((name, run, analysis))
        return analysis.summaries[0]

    return measure


_LINES_KEY = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    """With --pairbench-against, compare the tests that used the fixture (before the terminal summary
    prints, so that --pairbench-fail-on can still fail the session)."""
    config = session.config
    used = config.stash.get(_USED_KEY, [])
    if config.getoption("pairbench_register") or not (config.getoption("pairbench_against") and used):
        return
    lines, failed = _compare_against(config, used)
    config.stash[_LINES_KEY] = lines
    if failed and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if config.getoption("pairbench_register"):
        return
    lines = config.stash.get(_LINES_KEY, None)
    if lines:
        terminalreporter.section("pairbench")
        for line in lines:
            terminalreporter.write_line(line)
    for name, run, analysis in config.stash.get(_RESULTS_KEY, []):
        _report_alone(terminalreporter, name, analysis)
        _save(config, run, analysis)


def _report_alone(reporter, name: str, analysis) -> None:
    from pairbench.units import format_duration

    summary = analysis.summaries[0]
    interval = (f" [{format_duration(summary.median_low)}, {format_duration(summary.median_high)}]"
                if summary.median_low is not None else "")
    reporter.write_line(f"pairbench {name}: median {format_duration(summary.median)}{interval} per call, "
                        f"n {summary.n}")


def _compare_against(config, nodeids: list[str]) -> tuple[list[str], bool]:
    """Compare ``nodeids`` between the revision and the working tree: the lines to print, and
    whether the session fails (an error, or a verdict matching --pairbench-fail-on)."""
    from pairbench.errors import PairbenchError
    from pairbench.report.safe import visible
    from pairbench.report.sentences import verdict_sentence
    from pairbench.sessions.bench import BenchSession
    from pairbench.settings import parse_settings
    from pairbench.verdict import matches_fail_on

    here = str(config.invocation_params.dir)
    top = _toplevel(here)
    try:
        settings = parse_settings("bench", (here,), {
            "against": config.getoption("pairbench_against"),
            "max_time": config.getoption("pairbench_max_time") or "60s",
            "fail_on": config.getoption("pairbench_fail_on"), "json_path": config.getoption("pairbench_json"),
            "metric": config.getoption("pairbench_metric"), "quiet": True})
        in_tree = tuple(dict.fromkeys(_from_toplevel(n, str(config.rootpath), top) for n in nodeids))
        outcome = BenchSession(settings, {}, worker_in=functools.partial(_worker_command, nodeids=in_tree)).measure()
    except PairbenchError as exc:
        return [f"pairbench: {visible(exc)}"], True
    comparisons = outcome.analysis.real_comparisons if outcome.analysis else ()
    lines = [visible(verdict_sentence(c)) for c in comparisons]
    if outcome.error is not None:
        lines.append(f"pairbench: {visible(outcome.error)}")
    if outcome.result_error is not None:
        lines.append(f"pairbench: {visible(outcome.result_error)}")
    failed = outcome.error is not None or any(matches_fail_on(c.verdict, settings.decision.fail_on)
                                              for c in comparisons)
    return lines, failed


def _save(config, run, analysis) -> None:
    path = config.getoption("pairbench_json")
    if path:
        from pairbench.sessions.functions import save

        save(run, analysis, path)


def _from_toplevel(nodeid: str, rootdir: str, top: str) -> str:
    """``nodeid`` (relative to pytest's rootdir) relative to the working tree's top instead."""
    file, sep, rest = nodeid.partition("::")
    return os.path.relpath(os.path.join(rootdir, file), top) + sep + rest


def _worker_command(tree: str, *, nodeids: tuple[str, ...]):
    """The worker serving ``nodeids`` (relative to the tree's top) of the working tree at ``tree``
    (the revision's worktree, or ours)."""
    from pairbench.model import Command

    argv = (sys.executable, "-m", "pairbench.pytest_plugin", tree, *nodeids)
    return Command(f"pytest worker in {tree}", argv)


def _toplevel(path: str) -> str:
    from pairbench.measure.revisions import toplevel

    return toplevel(path) or path


def serve_tests(rootdir: str, nodeids: list[str]) -> int:
    """The worker: run ``nodeids`` under ``rootdir`` in register mode, then serve what they recorded."""
    from pairbench import pytest_plugin  # the module pytest loaded (this one runs as __main__)
    from pairbench.worker.registry import Benchmark
    from pairbench.worker.serve import serve, take_fds

    request_fd, reply_fd = take_fds(os.environ)
    os.chdir(rootdir)
    sys.path.insert(0, rootdir)
    status = pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", rootdir, "--pairbench-register", *nodeids])
    registered = pytest_plugin._REGISTERED
    if not registered:
        sys.stderr.write(f"pairbench: the tests under {rootdir} recorded no benchmark (pytest exit {status})\n")
        return 2
    benchmarks = [Benchmark(name, call) for name, call in registered.items()]
    return serve(benchmarks, request_fd, reply_fd)


if __name__ == "__main__":
    sys.exit(serve_tests(sys.argv[1], sys.argv[2:]))
