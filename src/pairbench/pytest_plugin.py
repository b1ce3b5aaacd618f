"""The pytest plugin: a ``pairbench`` fixture, and ``pytest --pairbench-against REV``.

::

    def test_parse(pairbench):
        pairbench(parse, data)

Without options, a plain ``pytest`` calls ``parse(data)`` once, as a test
(pytest-benchmark's ``--benchmark-disable``): measuring costs about a second a
test, so it is asked for. ``--pairbench`` measures each call in this process
(about ``--pairbench-max-time`` per test) and the terminal summary lists each
test's time per call with its interval; ``--pairbench-skip`` skips the tests
that use the fixture, ``--pairbench-only`` every other test. With
``--pairbench-against REV`` the tests
run as usual, and at the end every test that called the fixture is compared
between git revision REV (checked out into a temporary worktree) and the
working tree: two workers, each running this plugin's tests of its own tree in
*register* mode (the fixture records the call instead of measuring it) and
serving the recorded calls over the worker protocol, driven by ``pairbench
bench``'s session. Verdicts go to the terminal summary; ``--pairbench-json
FILE`` writes the result document (``pairbench show``/``report`` read it);
``--pairbench-fail-on slower`` makes a slower verdict fail the session, and
the session's last line says so ("1 slower (--pairbench-fail-on)"), not only
"2 passed".

Importing this module (pytest loads it in every session, through its entry
point) imports nothing heavy: pairbench's analysis loads only when used.
"""

from __future__ import annotations

import functools
import os
import sys

import pytest

from pairbench.frozen import frozen

_REGISTERED: dict[str, functools.partial] = {}  # register mode: benchmark name -> the call
_NAMED_KEY = pytest.StashKey[dict]()  # benchmark name -> the node id it names, this session
_RESULTS_KEY = pytest.StashKey[list]()
_USED_KEY = pytest.StashKey[list]()


def pytest_addoption(parser):
    from pairbench.settings import DEFAULTS, METRIC_CHOICES, USE_DEFAULTS
    from pairbench.verdict import FAIL_ON_CHOICES

    alone, against = USE_DEFAULTS["pytest"]["max_time"], USE_DEFAULTS["pytest-against"]["max_time"]
    group = parser.getgroup("pairbench", "pairbench: paired benchmarks")
    group.addoption("--pairbench", action="store_true", default=False,
                    help="Measure each call of the pairbench fixture (without it, and without "
                         "--pairbench-against, the fixture calls the function once, as a test).")
    group.addoption("--pairbench-skip", action="store_true", default=False,
                    help="Skip the tests that use the pairbench fixture.")
    group.addoption("--pairbench-only", action="store_true", default=False,
                    help="Skip every test that does not use the pairbench fixture.")
    group.addoption("--pairbench-against", metavar="REV", default=None,
                    help="Compare every test using the pairbench fixture between git revision REV and "
                         "the working tree (paired rounds in two fresh worker processes per block).")
    group.addoption("--pairbench-json", metavar="FILE", default=None,
                    help="Write the pairbench result document (raw samples included) to FILE.")
    group.addoption("--pairbench-max-time", metavar="DURATION", default=None,
                    help=f"Time budget per benchmark (default {alone} measured alone, {against} compared: "
                         "each block of rounds starts both sides' pytest workers afresh).")
    group.addoption("--pairbench-fail-on", metavar="|".join(FAIL_ON_CHOICES), default=DEFAULTS["fail_on"],
                    help="With --pairbench-against: fail the session when a verdict matches.")
    group.addoption("--pairbench-metric", metavar="|".join(METRIC_CHOICES), default=None,
                    help="With --pairbench-against: what the verdicts are on: wall (elapsed) or cpu time of "
                         "each call, or the instructions it executes (instructions, or Callgrind's cycle model "
                         "cycles-model; see pairbench's docs/instructions.md) (default: as pairbench bench).")
    group.addoption("--pairbench-pass-env", metavar="NAME", action="append", default=[],
                    help="With --pairbench-against: give the workers environment variable NAME (repeatable); "
                         "they get only PATH, HOME, the locale, TZ, TERM and TMPDIR besides.")
    group.addoption("--pairbench-register", action="store_true", default=False,
                    help="(internal) record the fixture's calls for a worker instead of measuring them.")


def pytest_configure(config):
    """Refuse a --pairbench-json path that pairbench would not write (``outputs.check_output``: a
    journal, a link another user planted, a directory), before any test runs."""
    path = config.getoption("pairbench_json", None)
    if path and not config.getoption("pairbench_register", False):
        from pairbench.errors import UsageError
        from pairbench.outputs import check_output

        try:
            check_output("--pairbench-json", path, example="result.json")
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None


def pytest_collection_modifyitems(config, items):
    """--pairbench-skip and --pairbench-only: skip the tests that use the fixture, or the others."""
    skip, only = config.getoption("pairbench_skip"), config.getoption("pairbench_only")
    if skip and only:
        raise pytest.UsageError("--pairbench-skip and --pairbench-only together skip every test")
    if config.getoption("pairbench_register") or not (skip or only):
        return
    for item in items:
        uses = "pairbench" in getattr(item, "fixturenames", ())
        if skip and uses:
            item.add_marker(pytest.mark.skip(reason="a pairbench benchmark (--pairbench-skip)"))
        elif only and not uses:
            item.add_marker(pytest.mark.skip(reason="not a pairbench benchmark (--pairbench-only)"))


@pytest.fixture
def pairbench(request):
    """``pairbench(function, *args, **kwargs)``: call ``function(*args, **kwargs)`` once and return
    its result; with ``--pairbench``, measure it (and return its summary); with
    ``--pairbench-against``, compare it with the same test at the revision (at the session's end)."""
    from pairbench.worker.protocol import as_name

    config = request.config
    name = as_name(request.node.nodeid)  # the worker protocol's name: two node ids never share one
    calls = []

    def measure(function, *args, **kwargs):
        _check_once(config, name, request.node.nodeid, calls)
        call = functools.partial(function, *args, **kwargs)
        if config.getoption("pairbench_register"):
            _REGISTERED[name] = call
            return None
        if config.getoption("pairbench_against"):
            config.stash.setdefault(_USED_KEY, []).append(request.node.nodeid)
            return call()  # checked to work here; compared at the end
        if not config.getoption("pairbench"):
            return call()
        from pairbench.sessions.functions import measure_functions
        from pairbench.settings import USE_DEFAULTS

        run, analysis = measure_functions(call, None, name=name, max_time=config.getoption("pairbench_max_time")
                                          or USE_DEFAULTS["pytest"]["max_time"])
        config.stash.setdefault(_RESULTS_KEY, []).append((name, run, analysis))
        return analysis.summaries[0]

    return measure


def _check_once(config, name: str, nodeid: str, calls: list) -> None:
    """Fail the test that calls the fixture a second time (each test is one benchmark: compared, only
    its last call would count), or whose benchmark name another test's already is."""
    calls.append(name)
    if len(calls) > 1:
        pytest.fail(f"the pairbench fixture was called {len(calls)} times in {nodeid}: a test measures one "
                    "call (compared with --pairbench-against, only its last would count); split it into "
                    "tests, or parametrize it", pytrace=False)
    named = config.stash.setdefault(_NAMED_KEY, {})
    if named.setdefault(name, nodeid) != nodeid:
        pytest.fail(f"{nodeid} and {named[name]} have the same pairbench benchmark name {name!r}; rename one",
                    pytrace=False)


_LINES_KEY = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    """With --pairbench-against, compare the tests that used the fixture (before the terminal summary
    prints, so that --pairbench-fail-on can still fail the session)."""
    config = session.config
    used = config.stash.get(_USED_KEY, [])
    if config.getoption("pairbench_register") or not (config.getoption("pairbench_against") and used):
        return
    lines, failing = _compare_against(config, used)
    config.stash[_LINES_KEY] = lines
    if failing is not None:
        _fail_session(session, failing)


@frozen
class _Failing:
    """Why pairbench fails the session: ``why`` in words, and what the session's last line counts
    (``count`` of ``counted``: "1 slower (--pairbench-fail-on)")."""

    why: str
    counted: str
    count: int = 1


def _fail_session(session, failing: _Failing) -> None:
    """Make the session fail and its last lines say why: pytest prints ``session.shouldfail`` in red
    just before the final line, and counts the reason in that line ("2 passed, 1 slower
    (--pairbench-fail-on) in 113s") from the terminal reporter's statistics."""
    if session.exitstatus == 0:
        session.exitstatus = 1
    session.shouldfail = f"pairbench: {failing.why}"
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.stats.setdefault(failing.counted, []).extend(_Counted() for _ in range(failing.count))


class _Counted:
    """One entry of the terminal reporter's statistics (counted in the session's last line)."""

    count_towards_summary = True


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if config.getoption("pairbench_register"):
        return
    lines = config.stash.get(_LINES_KEY, None)
    if lines:
        terminalreporter.section("pairbench")
        for line in lines:
            terminalreporter.write_line(line)
    measured = config.stash.get(_RESULTS_KEY, [])
    for name, _, analysis in measured:
        _report_alone(terminalreporter, name, analysis)
    if measured:
        _save(config, [run for _, run, _ in measured])


def _report_alone(reporter, name: str, analysis) -> None:
    from pairbench.units import format_duration

    summary = analysis.summaries[0]
    interval = (f" [{format_duration(summary.median_low)}, {format_duration(summary.median_high)}]"
                if summary.median_low is not None else "")
    reporter.write_line(f"pairbench {name}: median {format_duration(summary.median)}{interval} per call, "
                        f"n {summary.n}")


def _compare_against(config, nodeids: list[str]) -> tuple[list[str], _Failing | None]:
    """Compare ``nodeids`` between the revision and the working tree: the lines to print, and why
    the session fails (an error, or verdicts matching --pairbench-fail-on), if it does."""
    from pairbench.errors import PairbenchError
    from pairbench.measure import child_environment
    from pairbench.parsers import parse_settings
    from pairbench.report.safe import visible
    from pairbench.report.sentences import verdict_sentence
    from pairbench.sessions.bench import BenchSession

    here = str(config.invocation_params.dir)
    top = _toplevel(here)
    try:
        passed = child_environment.passed_names(config.getoption("pairbench_pass_env"), "--pairbench-pass-env")
    except ValueError as exc:
        return [f"pairbench: {visible(exc)}"], True
    try:
        settings = parse_settings("bench", (here,), {
            "against": config.getoption("pairbench_against"),
            "max_time": config.getoption("pairbench_max_time") or _against_budget(config.getoption("pairbench_metric")),
            "fail_on": config.getoption("pairbench_fail_on"), "json_path": config.getoption("pairbench_json"),
            "metric": config.getoption("pairbench_metric"), "quiet": True})
        in_tree = tuple(dict.fromkeys(_from_toplevel(n, str(config.rootpath), top) for n in nodeids))
        with child_environment.policy(child_environment.Policy(isolated=True, passed=passed)):
            session = BenchSession(settings, {}, worker_in=functools.partial(_worker_command, nodeids=in_tree))
            outcome = session.measure()
    except PairbenchError as exc:
        return [f"pairbench: {visible(exc)}"], _Failing(visible(exc), "pairbench error")
    comparisons = outcome.analysis.real_comparisons if outcome.analysis else ()
    lines = [visible(verdict_sentence(c)) for c in comparisons]
    for problem in (outcome.error, outcome.result_error):
        lines += [f"pairbench: {visible(problem)}"] if problem is not None else []
    if outcome.error is not None:
        return lines, _Failing(visible(outcome.error), "pairbench error")
    return lines, _gate(comparisons, settings.decision.fail_on, settings.workers.against)


NAMED_AT_MOST = 3  # benchmarks named in the failing line; the others are counted


def _gate(comparisons, fail_on: str, revision: str) -> _Failing | None:
    """Why --pairbench-fail-on fails the session ("2 benchmarks slower than main (--pairbench-fail-on
    slower): test_a.py::test_parse, test_a.py::test_dump"), or None."""
    from pairbench.report.safe import visible
    from pairbench.verdict import matches_fail_on

    matched = [c for c in comparisons if matches_fail_on(c.verdict, fail_on)]
    if not matched:
        return None
    verdicts = sorted({c.verdict.verdict for c in matched})
    word = verdicts[0] if len(verdicts) == 1 else "changed"
    names = ", ".join(visible(c.benchmark.label) for c in matched[:NAMED_AT_MOST])
    more = f" and {len(matched) - NAMED_AT_MOST} more" if len(matched) > NAMED_AT_MOST else ""
    return _Failing(f"{len(matched)} {'benchmark' if len(matched) == 1 else 'benchmarks'} {word} than "
                    f"{visible(revision)} (--pairbench-fail-on {fail_on}): {names}{more}",
                    f"{word} (--pairbench-fail-on)", len(matched))


def _save(config, runs) -> None:
    """Every measured test's samples in one --pairbench-json document (a benchmark each)."""
    path = config.getoption("pairbench_json")
    if path:
        from pairbench.analysis import analyse
        from pairbench.sessions.functions import joined
        from pairbench.sessions.result import save

        run = joined(runs, "pytest")
        save(run, analyse(run), path)


def _from_toplevel(nodeid: str, rootdir: str, top: str) -> str:
    """``nodeid`` (relative to pytest's rootdir) relative to the working tree's top instead."""
    file, sep, rest = nodeid.partition("::")
    return os.path.relpath(os.path.join(rootdir, file), top) + sep + rest


def _against_budget(metric: str | None) -> object:
    """--pairbench-against's budget per benchmark: its own, or bench's for a count (under Callgrind
    each block's pytest workers start 20 to 100 times slower)."""
    from pairbench.settings import COUNT_METRIC_CHOICES, USE_DEFAULTS, default

    if metric in COUNT_METRIC_CHOICES:
        return default("max_time", "bench", metric=metric)
    return USE_DEFAULTS["pytest-against"]["max_time"]


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
    from pairbench.worker.pytest_benchmark import serve_pytest
    from pairbench.worker.registry import Benchmark
    from pairbench.worker.serve import take_fds

    request_fd, reply_fd = take_fds(os.environ)
    return serve_pytest(rootdir, ["--pairbench-register", *nodeids], [], request_fd, reply_fd,
                        lambda: [Benchmark(name, call) for name, call in pytest_plugin._REGISTERED.items()])


if __name__ == "__main__":
    sys.exit(serve_tests(sys.argv[1], sys.argv[2:]))
