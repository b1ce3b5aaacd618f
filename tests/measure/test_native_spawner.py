"""The native spawner (``spawner.c``): its RSS floor, which spawner runs the commands and why, its
side of the protocol, and how the package builds it.

The behaviours it shares with the Python spawner are checked for both in
``test_spawner.py`` and ``test_posix.py``; peak memory through cgroups is in
``test_peak_memory.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from processes import is_gone
from spawners import require_native

from pairbench.errors import UsageError
from pairbench.measure import containment, native
from pairbench.measure.commandline import parse_command
from pairbench.measure.spawner import SpawnerExecutor, chosen_spawner

MIB = 1024  # KiB
TRUE = parse_command("true")


@pytest.fixture
def built():
    require_native()


# -- the RSS floor --------------------------------------------------------------------------


@pytest.mark.e2e
def test_native_spawner_floor_and_the_max_rss_of_true_are_at_most_2_mib(built):
    with SpawnerExecutor(spawner="native") as ex:
        runs = [ex.run(TRUE) for _ in range(5)]
        floor = ex.rss_floor_kib()
    assert 0 < floor <= 2 * MIB
    assert all(0 < run.max_rss_kib <= 2 * MIB for run in runs), [run.max_rss_kib for run in runs]


@pytest.mark.e2e
@pytest.mark.parametrize(("chosen", "largest_kib"), [("native", 2 * MIB), ("python", 40 * MIB)])
def test_a_result_says_which_spawner_measured_it_and_how_peak_memory_was_read(
        tmp_path, monkeypatch, chosen, largest_kib):
    from cli_runner import invoke

    if chosen == "native":
        require_native()
    monkeypatch.setenv("PAIRBENCH_SPAWNER", chosen)
    result = tmp_path / "r.json"
    done = invoke("run", "--runs", "5", "--json", str(result), "true")
    assert done.code == 0, done.err
    document = json.loads(result.read_text())
    executor = document["environment"]["executor"]
    assert executor["kind"] == "SpawnerExecutor" and executor["spawner"] == chosen
    assert executor["peak_memory"] == "rusage"
    rss = [kib for series in document["series"] for kib in series["samples"]["max_rss_kib"]]
    assert len(rss) == 5 and max(rss) <= largest_kib
    if chosen == "python":
        assert min(rss) > 8 * MIB  # the Python spawner's floor, which the native one removes


@pytest.mark.e2e
def test_pairbench_run_true_reports_max_rss_at_most_2_mib_marked_at_the_floor(built, monkeypatch):
    from cli_runner import invoke

    monkeypatch.delenv("PAIRBENCH_SPAWNER", raising=False)
    done = invoke("run", "--runs", "5", "true")
    assert done.code == 0, done.err
    shown = next(line for line in done.out.splitlines() if "max RSS" in line)
    figure = shown.split("max RSS", 1)[1].split()
    if figure[0] == "≤":  # true's peak is below the spawner's size: marked, as any value at the floor
        figure = figure[1:]
    value, unit = float(figure[0]), figure[1]
    assert unit in ("KiB", "MiB") and (value <= 2.0 if unit == "MiB" else value <= 2048), shown


# -- which spawner ----------------------------------------------------------------------------


@pytest.mark.parametrize(("variable", "chosen"), [(None, "auto"), ("", "auto"), ("python", "python"),
                                                   ("Native", "native"), (" auto ", "auto")])
def test_pairbench_spawner_variable_chooses_the_spawner(monkeypatch, variable, chosen):
    if variable is None:
        monkeypatch.delenv("PAIRBENCH_SPAWNER", raising=False)
    else:
        monkeypatch.setenv("PAIRBENCH_SPAWNER", variable)
    assert chosen_spawner() == chosen


@pytest.mark.e2e
def test_an_unknown_spawner_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setenv("PAIRBENCH_SPAWNER", "rust")
    with pytest.raises(UsageError, match=r"PAIRBENCH_SPAWNER must be 'native', 'python' or 'auto', got 'rust'"):
        SpawnerExecutor()


@pytest.mark.e2e
@pytest.mark.parametrize("asked", ["python", None])
def test_the_python_spawner_runs_when_asked_for_or_when_nothing_was_built(monkeypatch, tmp_path, asked):
    monkeypatch.delenv("PAIRBENCH_SPAWNER", raising=False)
    if asked is None:  # as where no C compiler was found at install
        monkeypatch.setattr(native, "program_path", lambda: str(tmp_path / "pairbench-spawner"))
    with SpawnerExecutor(spawner=asked) as ex:
        assert ex.spawner == "python" and ex.notes == ()
        assert ex.run(TRUE).status == 0
        assert ex.info().to_dict()["spawner"] == "python"
        assert ex.rss_floor_kib() > 8 * MIB


@pytest.mark.e2e
def test_the_native_spawner_runs_by_default_where_it_was_built(built, monkeypatch):
    monkeypatch.delenv("PAIRBENCH_SPAWNER", raising=False)
    with SpawnerExecutor() as ex:
        assert ex.spawner == "native" and ex.notes == ()
        with open(f"/proc/{ex.spawner_pid}/cmdline", "rb") as f:
            assert f.read().split(b"\0")[0] == native.program_path().encode()


@pytest.mark.e2e
def test_asking_for_the_native_spawner_where_none_was_built_says_how_to_build_it(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "program_path", lambda: str(tmp_path / "pairbench-spawner"))
    monkeypatch.setenv("PAIRBENCH_SPAWNER", "native")
    with pytest.raises(UsageError, match="native spawner was not built .* C compiler .* PAIRBENCH_SPAWNER=python"):
        SpawnerExecutor()


def _broken_program(tmp_path: Path) -> str:
    program = tmp_path / "pairbench-spawner"
    program.write_text("#!/bin/sh\necho 'not a spawner' >&2\nexit 3\n")
    program.chmod(0o755)
    return str(program)


@pytest.mark.e2e
def test_a_native_spawner_that_cannot_start_gives_way_to_the_python_one_with_a_note(monkeypatch, tmp_path, capfd):
    program = _broken_program(tmp_path)
    monkeypatch.setattr(native, "program_path", lambda: program)
    monkeypatch.delenv("PAIRBENCH_SPAWNER", raising=False)
    with SpawnerExecutor() as ex:
        assert ex.spawner == "python"
        assert ex.run(TRUE).status == 0
    (note,) = ex.info().notes
    assert note.code == "spawner-fallback" and "exited" in note.data["reason"]
    assert note.data["floor_kib"] > 8 * MIB


@pytest.mark.e2e
def test_a_native_spawner_asked_for_that_cannot_start_falls_back_in_process(monkeypatch, tmp_path):
    program = _broken_program(tmp_path)
    monkeypatch.setattr(native, "program_path", lambda: program)
    with SpawnerExecutor(spawner="native") as ex:
        assert ex.spawner is None and ex.spawner_pid is None
        assert ex.run(TRUE).status == 0
    assert [note.code for note in ex.info().notes] == ["executor-fallback"]
    assert "spawner" not in ex.info().to_dict()


# -- its ready, read at first use ----------------------------------------------------------------


def _held_program(tmp_path: Path) -> tuple[str, Path]:
    """The native spawner behind a gate: it starts only once the file ``go`` exists."""
    go, program = tmp_path / "go", tmp_path / "pairbench-spawner"
    program.write_text(f"#!/bin/sh\nwhile [ ! -e '{go}' ]; do sleep 0.01; done\n"
                       f"exec '{native.program_path()}' \"$@\"\n")
    program.chmod(0o755)
    return str(program), go


@pytest.mark.e2e
def test_the_native_spawner_starts_while_pairbench_goes_on_and_answers_at_first_use(built, monkeypatch, tmp_path):
    # made before it answered: a constructor that waited would wait out STARTUP_TIMEOUT_S for the
    # gate and then fall back to the Python spawner
    program, go = _held_program(tmp_path)
    monkeypatch.setattr(native, "program_path", lambda: program)
    with SpawnerExecutor(spawner="native") as ex:
        go.touch()
        assert ex.run(TRUE).status == 0
        assert ex.spawner == "native" and ex.notes == ()


@pytest.mark.e2e
def test_a_ctrl_c_while_waiting_for_its_ready_leaves_the_next_use_waiting_again(built, monkeypatch, tmp_path):
    program, go = _held_program(tmp_path)
    monkeypatch.setattr(native, "program_path", lambda: program)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with SpawnerExecutor(spawner="native") as ex:
            with pytest.raises(KeyboardInterrupt):  # however late the alarm comes, it comes in here
                signal.setitimer(signal.ITIMER_REAL, 0.05)
                ex.run(TRUE)  # waits at the gate until the alarm
            go.touch()
            assert ex.run(TRUE).status == 0
            assert ex.spawner == "native" and ex.notes == ()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.e2e
def test_closed_before_its_first_use_the_spawner_exits_and_leaves_no_cell(built):
    ex = SpawnerExecutor(spawner="native")
    pid = ex.spawner_pid
    ex.close()
    assert is_gone(pid)
    directory = containment.containment().directory
    if directory:
        assert not [cell for cell in os.listdir(directory) if cell.startswith(f"pairbench-{pid}-")]


# -- its side of the protocol -------------------------------------------------------------------


class _Raw:
    """The native spawner started by hand: requests written, replies read, one line each."""

    def __init__(self, *options: str):
        request_r, self.requests = os.pipe()
        self._replies_r, reply_w = os.pipe()
        self.process = subprocess.Popen(
            [native.program_path(), *options, str(request_r), str(reply_w), str(os.getpid())],
            pass_fds=(request_r, reply_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        os.close(request_r)
        os.close(reply_w)
        self.replies = os.fdopen(self._replies_r, "rb")
        self.ready = json.loads(self.replies.readline())

    def ask(self, line: bytes) -> list:
        os.write(self.requests, line + b"\n")
        return json.loads(self.replies.readline())

    def close(self) -> int:
        os.close(self.requests)
        self.replies.close()
        return self.process.wait(5)


@pytest.fixture
def raw(built):
    spawner = _Raw("--grace-ns", "100000000")
    yield spawner
    spawner.close()


@pytest.mark.e2e
def test_native_spawner_answers_ready_with_its_floor_rusage_and_how_it_contains(raw):
    kind, floor, memory, why, contained, not_cgroup = raw.ready[1:]
    assert raw.ready[0] == 0 and kind == "ready"
    assert 0 < floor <= 2 * MIB and memory == "rusage" and why == ""
    assert contained == "scan" and not_cgroup == ""  # a subreaper, and no --contain given


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("request_line", "reply_id"),
    [
        (b'[5,"run",null,false,"x"]', 5),  # no program
        (b'[6,"run",0,false,"x","/bin/true"]', 6),  # a timeout must be positive
        (b'[7,"run",null,false,"x","/bin/\\u0100"]', 7),  # not a byte
        (b'[8,"run",null,false,"x","/bin/tr\\u0000ue"]', 8),  # NUL in an argument
        (b'[9,"run",null,false,"x","/bin/true"', 9),  # torn
        (b'[10,"launch"]', 10),
        (b'"floor"]', None),  # no id
        (b'[' + b"1" * 30 + b',"floor"]', None),  # an id too long to be one
    ],
    ids=["no-program", "zero-timeout", "not-a-byte", "nul", "torn", "unknown", "no-id", "huge-id"],
)
def test_native_spawner_answers_a_bad_request_with_an_error_and_carries_on(raw, request_line, reply_id):
    reply = raw.ask(request_line)
    assert reply[0] == reply_id and reply[1:3] == ["err", "MeasurementError"]
    assert reply[3].startswith("pairbench's spawner process failed: ")
    assert raw.ask(b'[11,"run",null,false,"true","/bin/true"]')[:2] == [11, "ok"]


@pytest.mark.e2e
def test_native_spawner_reports_a_program_it_cannot_start_by_errno(raw, tmp_path):
    script = tmp_path / "script"
    script.write_text("exit 0\n")
    script.chmod(0o644)
    assert raw.ask(b'[1,"run",null,false,"x","%s"]' % bytes(script)) == [1, "noexec", 13]  # EACCES
    assert raw.ask(b'[2,"run",null,false,"x","%s"]' % bytes(tmp_path / "none")) == [2, "noexec", 2]  # ENOENT


@pytest.mark.e2e
def test_native_spawner_runs_a_huge_request_and_gives_its_memory_back(raw):
    argument = b'"' + b"x" * 100_000 + b'"'  # three of them: a request beyond the 256 KiB kept
    reply = raw.ask(b'[1,"run",null,false,"x","/bin/true",%s]' % b",".join([argument] * 3))
    assert reply[:2] == [1, "ok"]
    assert raw.ask(b'[2,"floor"]')[2] <= 2 * MIB


@pytest.mark.e2e
def test_native_spawner_exits_at_end_of_file_on_its_requests(built):
    spawner = _Raw()
    assert spawner.close() == 0


@pytest.mark.e2e
def test_native_spawner_refuses_to_start_by_hand():
    require_native()
    done = subprocess.run([native.program_path()], capture_output=True, text=True)
    assert done.returncode == 2 and "started by pairbench" in done.stderr


# -- the build ------------------------------------------------------------------------------


def test_without_a_compiler_the_build_says_so_and_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    target = tmp_path / "pairbench-spawner"
    problem = native.build(str(Path(native.__file__).with_name(native.SOURCE)), str(target))
    assert problem.startswith("no C compiler found")
    assert not target.exists()


def test_cc_names_the_compiler(monkeypatch, tmp_path):
    compiler = tmp_path / "my-cc"
    compiler.write_text("#!/bin/sh\nexit 1\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CC", "my-cc -O3")
    assert native.find_compiler() == str(compiler)
    monkeypatch.setenv("CC", "missing-cc")
    assert native.find_compiler() is None


@pytest.mark.e2e
def test_a_compiler_error_is_reported_and_leaves_no_program(tmp_path):
    if native.find_compiler() is None:
        pytest.skip("no C compiler")
    source = tmp_path / "broken.c"
    source.write_text("int main(void) { return missing; }\n")
    target = tmp_path / "out" / "pairbench-spawner"
    problem = native.build(str(source), str(target))
    assert "failed" in problem and "missing" in problem
    assert not target.exists() and os.listdir(target.parent) == []


@pytest.mark.e2e
def test_the_source_builds_warning_free_into_a_program_that_runs_commands(tmp_path, monkeypatch):
    compiler = native.find_compiler()
    if compiler is None:
        pytest.skip("no C compiler")
    source = str(Path(native.__file__).with_name(native.SOURCE))
    built = subprocess.run([compiler, *native.CFLAGS, "-Wextra", "-Werror", "-fsyntax-only", source],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    target = tmp_path / "pairbench-spawner"
    assert native.build(source, str(target)) == ""
    assert os.access(target, os.X_OK)
    monkeypatch.setattr(native, "program_path", lambda: str(target))
    with SpawnerExecutor(spawner="native") as ex:
        assert ex.run(TRUE).status == 0
