"""Every command example of the documentation is run, fast and without real timing.

- A **transcript** (``$ pairbench ...`` and its output) says where its output comes from, in the
  comment before it: ``replay FILE`` (a real result: ``pairbench show FILE`` must print the
  output shown, and the command shown must be the one the file records), ``golden FILE`` (a golden
  file a test of the fake executor renders: the output shown must be it), or ``unrun`` (then its
  command is in :data:`CANNOT_RUN`, with the reason).
- A ``pairbench run`` or ``compare`` of a shell block runs through ``pairbench.cli.main`` on the
  fake executor; a ``bench`` of two worker programs on fake workers; both in a temporary directory
  where the programs it names exist. ``--help``, ``--version`` and ``show``/``report`` of a file
  that a committed result stands for (:data:`FILES`) run for real.
- Every other example is in :data:`CANNOT_RUN` with the reason, and its options must be its
  command's: click parses it as pairbench would. The list is checked both ways: an entry no page
  has any more, or an example that could run, fails.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import numpy as np
import pytest
from cli_runner import invoke
from doc_pages import REPO, Block, blocks, commands, name, pages, transcript
from fakes import FakeExecutor, FakeWorkers

from pairbench.cli.app import cli

BLOCKS = [block for page in pages() for block in blocks(page)]
TRANSCRIPTS = [block for block in BLOCKS if block.is_transcript]
EXAMPLES = [(block, command) for block in BLOCKS if not block.is_transcript for command in commands(block)]

# Examples that cannot run here, each with the reason: what they need is not in a test's reach,
# or another test runs the same thing. Keyed by the command as the page writes it.
CANNOT_RUN = {
    # the history: a store of results over real commits, and builds of real revisions
    "pairbench record --store URL": "URL stands for the reader's store; tests/cli/test_record_command.py records commits",
    "pairbench record --store sqlite:///.pairbench/history.db":
        "builds two commits of a git repository with a [confirm] recipe; tests/cli/test_record_command.py",
    "pairbench record HEAD --metric cpu --max-time 60s -j 2":
        "builds two commits of a git repository with a [confirm] recipe; tests/cli/test_record_command.py",
    "pairbench record --against v1.4.0 -k parse": "needs a repository with a v1.4.0 tag; tests/cli/test_record_command.py",
    "pairbench record --anchor v1.4.0": "needs a repository with a v1.4.0 tag; tests/cli/test_record_command.py",
    "pairbench history": "reads this project's history store; tests/cli/test_history_command.py renders one of 50 commits",
    "pairbench confirm 4b120b1408 b7135bcfa4": "builds two commits of a real repository; tests/cli/test_confirm_command.py",
    "pairbench confirm 4d2c1e0a9b 7f3e8a21c5": "builds two commits of a real repository; tests/cli/test_confirm_command.py",
    "pairbench bisect 4b120b1408 b7135bcfa4 -k '^mix$'": "builds the commits of a real repository; tests/cli/test_bisect_command.py",
    "pairbench bisect HEAD~15 HEAD -k '^mix$' -q": "builds 16 commits of a C worker; tests/examples/test_bisect_example.py runs that repository",
    # harness suites and Python benchmarks: built programs of a real harness, or a git revision
    "pairbench bench build-main/micro_bench build-pr/micro_bench --fail-on slower --json suite.json":
        "needs two Google Benchmark builds; tests/adapters run real ones",
    "pairbench bench old.test new.test -k 'Parse|Lex'": "needs two go test -c binaries; tests/adapters/test_go_suite.py",
    "pairbench bench old.test new.test -k Parse": "needs two go test -c binaries; tests/adapters/test_go_suite.py",
    "pairbench bench old/target/release/deps/parse-1a2b3c new/target/release/deps/parse-4d5e6f":
        "needs two criterion builds; tests/adapters run real ones",
    "pairbench bench tests/bench --against main": "needs a git repository with pytest-benchmark tests at main",
    "pairbench bench ../main/tests/bench tests/bench": "needs two trees of pytest-benchmark tests",
    "pairbench bench benchmarks/ --against main": "needs a git repository with Python benchmarks at main",
    "pairbench bench benchmarks/": "starts Python workers on a directory of benchmark files; tests/bench/test_bench_command.py runs them",
    "pairbench bench ./build/bench --store sqlite:///.pairbench/history.db": "a store in a git checkout; tests/cli/test_history_command.py",
    # shards and saved files of another tool
    "pairbench bench --shard K/4 --json shard-K.json ./old/bench ./new/bench": "K is a placeholder for the machine's index",
    "pairbench bench --shard 1/4 --json shard-1.json ./old/bench ./new/bench":
        "one shard of a suite of real builds; tests/store/test_merge.py merges shards",
    "pairbench merge --json suite.json --fail-on slower shard-1.json shard-2.json shard-3.json shard-4.json":
        "needs four shards of one suite; tests/store/test_merge.py merges shards",
    "pairbench convert --json old.pb.json old.txt": "needs another tool's saved result; tests/store/test_imports.py",
    "pairbench diff old.pb.json new.pb.json --fail-on slower": "needs two saved results; tests/report/golden/diff.txt",
    "pairbench show --details suite.json": "names the reader's own file; tests/cli/test_bench_golden.py shows a suite",
    "pairbench show result.json.partial": "names the reader's own journal; tests/store test journals",
    # the machine itself
    "pairbench doctor": "reads the live machine: its output is this machine's at that moment",
    'pairbench doctor --name setup-then-spin --seed 7 "python examples/workloads.py setup-then-spin 0.05 20000 {iterations}"':
        "measures for real and reads the live machine; tests/doctor/test_doctor_command.py uses the fake executor",
    'pairbench doctor --name alloc-each --seed 7 --runs 5 --iterations 1,2,4,8,16 "python examples/workloads.py alloc-each 10 {iterations}"':
        "measures for real and reads the live machine; tests/doctor/test_doctor_command.py uses the fake executor",
    'pairbench doctor --seed 7 "echo hello"': "measures for real and reads the live machine; tests/doctor/test_doctor_command.py uses the fake executor",
    # instruction counts: real programs under Callgrind, which the fake executor cannot stand in for
    'pairbench compare --metric instructions "./app-old input.txt" "./app-new input.txt"':
        "counts real programs under Callgrind; tests/cli/test_instructions.py compares two real commands",
    "pairbench bench   --metric instructions ./bench-old ./bench-new":
        "counts real pairbench.h workers under Callgrind; tests/cli/test_instructions.py benches two",
    "pairbench bench   --metric instructions benchmarks/":
        "counts a Python worker under Callgrind; tests/measure/test_callgrind.py counts one",
}
# Commands the documentation already describes that land from another branch: checked once they
# exist (the test fails then, so that the entry goes).
PENDING: dict[str, str] = {}
FAKE_RUN = ("run", "compare")
# the committed result that stands for a file an example names, for show and report, run for real
FILES = {"result.json": REPO / "docs" / "examples" / "demo.json"}


def _words(command: str) -> list[str]:
    return shlex.split(command)[1:]


def _parses(words: list[str]) -> dict:
    """The example's parameters as click parses them for pairbench (a bad option raises)."""
    with click.Context(cli, info_name="pairbench") as group:
        command = cli.get_command(group, words[0])
        assert command is not None, f"pairbench has no command {words[0]}"
        with command.make_context(words[0], list(words[1:]), parent=group) as context:
            return dict(context.params)


def _bench_programs(words: list[str]) -> list[str] | None:
    """The worker programs of a ``bench`` example that fake workers can stand in for, or None."""
    params = _parses(words)
    if params.get("against") or params.get("shard") or params.get("harness") or params.get("store"):
        return None
    sides = [str(s) for s in params.get("workers") or ()]
    # pairbench's own worker programs, as the pages name them (./bench-old); a harness's binaries
    # and directories of Python benchmarks are in CANNOT_RUN
    return sides if sides and all(re.fullmatch(r"\./bench-[a-z]+", s) for s in sides) else None


COUNTED = ("instructions", "cycles-model")
"""--metric values that count real programs under Callgrind or a hardware counter: no fake stands in."""


def _runnable(words: list[str]) -> str | None:
    """How an example runs here: "fake", "workers", "real", or None (an example counting
    instructions needs real programs: ``COUNTED``)."""
    if "--metric" in words and words[words.index("--metric") + 1:][:1] and words[words.index("--metric") + 1] in COUNTED:
        return None
    if words[0] in FAKE_RUN:
        return "fake"
    if words[0] == "bench" and _bench_programs(words):
        return "workers"
    if "--help" in words or "-h" in words or words == ["--version"]:
        return "real"
    if words[0] in ("show", "report") and [w for w in words[1:] if not w.startswith("-")] and \
            all(w in FILES for w in words[1:] if not w.startswith("-")):
        return "real"
    return None


def _programs(words: list[str]) -> list[str]:
    """The programs a run/compare example names by path (``./old``), which must exist to run."""
    found = []
    texts = _command_texts(_parses(words))
    for text in texts:
        first = shlex.split(text)[0] if text.strip() else ""
        if "/" in first and not first.startswith("/"):
            found.append(first)
    return found


def _command_texts(params: dict) -> list[str]:
    """The commands a run or compare example measures, in order (the baseline first)."""
    if params.get("commands"):
        return list(params["commands"])
    return [params["baseline"], *params.get("candidates", ())] if params.get("baseline") else []


def _fake_machine(seed: int = 7) -> FakeExecutor:
    """Every command about 10 ms with 1% noise, on a virtual clock: a verdict in a few dozen rounds."""
    rng = np.random.default_rng(seed)
    return FakeExecutor(lambda command, index, clock: 0.01 * float(np.exp(rng.normal(0.0, 0.01))))


def _stub(path: Path, worker: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n# PAIRBENCH_WORKER_FDS\nexit 1\n" if worker else "#!/bin/sh\nexit 1\n")
    path.chmod(0o755)


def _example_id(example: tuple[Block, str]) -> str:
    block, command = example
    return f"{block.where}:{command[:60]}"


# --------------------------------------------------------------------------- transcripts


def test_the_documentation_has_examples_of_every_kind():
    kinds = {block.kind for block in TRANSCRIPTS}
    assert {"replay", "golden", "unrun"} <= kinds and len(EXAMPLES) > 30


@pytest.mark.parametrize("block", TRANSCRIPTS, ids=lambda b: b.where)
def test_every_transcript_says_where_its_output_comes_from(block):
    assert block.kind is not None, (
        f"{block.where}: a transcript needs <!-- example: replay FILE --> (a committed result), "
        "<!-- example: golden FILE --> or <!-- example: unrun REASON --> on the line before it")
    if block.kind == "unrun":
        assert transcript(block)[0] in CANNOT_RUN, f"{block.where}: an unrun transcript's command must be in CANNOT_RUN"


def _source(block: Block) -> tuple[Path, bool]:
    argument, excerpt = re.subn(r"\s+excerpt$", "", block.argument)
    path = (block.page.parent / argument).resolve()
    assert path.is_file(), f"{block.where}: no file {argument}"
    return path, bool(excerpt)


def _matches(shown: str, actual: str, excerpt: bool) -> bool:
    """The output shown is the actual output; an excerpt's lines (``...`` marks a cut) appear in it
    in order."""
    if not excerpt:
        return shown == actual
    lines, position = actual.splitlines(), 0
    for line in (s for s in shown.splitlines() if s.strip() != "..."):
        try:
            position = lines.index(line, position) + 1
        except ValueError:
            return False
    return True


REPLAYS = [b for b in BLOCKS if b.kind == "replay"]
GOLDENS = [b for b in BLOCKS if b.kind == "golden"]


@pytest.mark.parametrize("block", REPLAYS, ids=lambda b: b.where)
def test_a_replayed_transcript_is_what_show_prints_of_its_result(block):
    path, excerpt = _source(block)
    command, shown = transcript(block)
    result = invoke("show", str(path))
    assert result.code == 0, result.err
    assert _matches(shown, result.out, excerpt), f"{block.where}: the output differs from `pairbench show {path.name}`:\n{result.out}"
    words = _words(command)
    params = _parses(words)
    document = json.loads(path.read_text())
    assert document["kind"] == words[0]
    assert [s["command"]["text"] for s in document["sides"]] == _command_texts(params), \
        f"{block.where}: not the commands the file holds"
    if params["names"]:
        assert [s["name"] for s in document["sides"]] == list(params["names"])
    assert document["settings"]["sampling"]["seed"] == int(params["seed"])


@pytest.mark.parametrize("block", GOLDENS, ids=lambda b: b.where)
def test_a_golden_transcript_is_its_golden_file(block):
    path, excerpt = _source(block)
    shown = transcript(block)[1] if block.is_transcript else block.text
    assert _matches(shown, path.read_text(), excerpt), f"{block.where}: differs from {name(path)}"


def test_an_excerpt_must_keep_the_order_of_its_lines():
    assert _matches("a\n...\nc\n", "a\nb\nc\n", True) and not _matches("c\na\n", "a\nb\nc\n", True)
    assert not _matches("a\nc\n", "a\nb\nc\n", False)


# --------------------------------------------------------------------------- command examples


@pytest.mark.parametrize("example", EXAMPLES + [(b, transcript(b)[0]) for b in TRANSCRIPTS], ids=_example_id)
def test_every_example_is_a_command_pairbench_parses(example):
    block, command = example
    words = _words(command)
    if words[0] in PENDING:
        assert words[0] not in cli.list_commands(click.Context(cli)), (
            f"pairbench {words[0]} exists now: remove it from PENDING so its examples are checked")
        return
    try:
        _parses(words)
    except click.UsageError as exc:
        pytest.fail(f"{block.where}: {command}: {exc.format_message()}")


@pytest.mark.parametrize("example", [e for e in EXAMPLES if _words(e[1])[0] not in PENDING], ids=_example_id)
def test_every_example_runs_or_says_why_it_cannot(example, tmp_path, monkeypatch):
    block, command = example
    words = _words(command)
    how = _runnable(words)
    if how is None:
        assert command in CANNOT_RUN, f"{block.where}: `{command}` neither runs here nor is in CANNOT_RUN"
        return
    assert command not in CANNOT_RUN, f"{block.where}: `{command}` runs: take it out of CANNOT_RUN"
    monkeypatch.chdir(tmp_path)
    if how == "fake":
        for program in _programs(words):
            _stub(tmp_path / program)
        result = invoke(*words, executor=_fake_machine())
    elif how == "workers":
        programs = _bench_programs(words)
        for program in programs:
            _stub(tmp_path / program, worker=True)
        benchmarks = {"checksum": {"per_iteration_ns": 500.0}}
        result = invoke(*words, workers=FakeWorkers({p: benchmarks for p in programs}, seed=1))
    else:
        for file in (w for w in words if w in FILES):
            (tmp_path / file).write_bytes(FILES[file].read_bytes())
        result = invoke(*words, real_environment=True)
    expected = {0, 1} if "--fail-on" in words else {0}
    assert result.code in expected, f"{block.where}: `{command}` exited {result.code}:\n{result.err}{result.out[-2000:]}"


def test_the_list_of_examples_that_cannot_run_has_no_stale_entry():
    written = {command for _, command in EXAMPLES} | {transcript(b)[0] for b in TRANSCRIPTS}
    assert sorted(set(CANNOT_RUN) - written) == []


def test_an_example_with_an_option_pairbench_lacks_is_refused():
    with pytest.raises(click.UsageError):
        _parses(_words("pairbench compare --no-such-option a b"))
