"""One output guard for every file pairbench writes (issue 26, item 3): whatever the command, no
output replaces a live run's journal (G8), one of the command's own inputs (G9), or a file another
user's planted link points to (G7); and the files pairbench names itself in a project are never
written through a link, even one committed to the repository (G6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_runner import invoke
from planted_links import needs_root, planted_link
from store_runs import stored_run

from pairbench.errors import EXIT_USAGE
from pairbench.measure.executor import OutputPolicy
from pairbench.measure.posix import open_output
from pairbench.outputs import RefusedOutput, open_private, private_directory
from pairbench.store.journal import Journal

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "tests" / "report" / "data" / "compare.json"
OTHER_RESULT = ROOT / "tests" / "report" / "data" / "run.json"
HYPERFINE = ROOT / "tests" / "adapters" / "data" / "hyperfine-1.15.json"


@pytest.fixture
def live_journal(tmp_path):
    """The journal of a run in progress (``r.json.partial``, locked as a live run holds it), with its
    samples; yields its path, then checks that nothing replaced or changed it."""
    journal = Journal(tmp_path / "r.json", stored_run())
    path = journal.path
    before = (os.stat(path).st_ino, path.read_bytes())
    yield path
    assert (os.stat(path).st_ino, path.read_bytes()) == before, "the live journal was replaced"
    journal.close(remove=True)


def _writers(out: str) -> dict[str, list[str]]:
    """Every command that writes a file, writing ``out``."""
    return {
        "convert": ["convert", "--json", out, str(HYPERFINE)],
        "merge": ["merge", "--json", out, str(RESULT), str(OTHER_RESULT)],
        "diff": ["diff", str(RESULT), str(OTHER_RESULT), "--json", out],
        "report": ["report", str(RESULT), "--format", "markdown", "-o", out],
        "history": ["history", "-o", out, "--store", f"{Path(out).parent}/h.db"],
        "run --json": ["run", "--runs", "3", "--json", out, "sleep 0.1"],
        "run --export-html": ["run", "--runs", "3", "--export-html", out, "sleep 0.1"],
        "run --output": ["run", "--runs", "3", "--output", out, "sleep 0.1"],
    }


@pytest.mark.parametrize("command", list(_writers("x")))
def test_no_command_writes_over_a_live_runs_journal(use_executor, live_journal, command):
    use_executor()
    code, _, err = invoke(*_writers(str(live_journal))[command])
    assert code == EXIT_USAGE, err
    assert ".partial" in err and "journal" in err and "choose another name" in err


@pytest.mark.parametrize("command", ["convert", "diff", "report", "run --output"])
def test_a_live_journal_under_another_name_is_not_written_either(use_executor, live_journal, command):
    use_executor()
    hard = live_journal.parent / "hard.json"
    os.link(live_journal, hard)
    linked = live_journal.parent / "linked.json"
    linked.symlink_to(live_journal)
    for out in (hard, linked):
        code, _, err = invoke(*_writers(str(out))[command])
        assert code == EXIT_USAGE and "journal" in err, err


def test_diff_refuses_to_write_over_the_results_it_compares(tmp_path):
    old, new = tmp_path / "a.json", tmp_path / "b.json"
    old.write_bytes(RESULT.read_bytes())
    new.write_bytes(OTHER_RESULT.read_bytes())
    for out in (old, new):
        code, _, err = invoke("diff", str(old), str(new), "--json", str(out))
        assert code == EXIT_USAGE and "name the same file" in err, err
    assert old.read_bytes() == RESULT.read_bytes() and new.read_bytes() == OTHER_RESULT.read_bytes()


def test_no_output_replaces_the_history_store_it_reads_or_writes(use_executor, tmp_path):
    use_executor()
    store = tmp_path / "h.db"
    invoke("run", "--runs", "3", "--store", str(store), "sleep 0.1")
    before = store.read_bytes()
    for args in (["history", "--store", str(store), "-o", str(store)],
                 ["run", "--runs", "3", "--store", str(store), "--json", str(store), "sleep 0.1"],
                 ["run", "--runs", "3", "--store", str(store), "--output", f"{store}-wal", "sleep 0.1"]):
        code, _, err = invoke(*args)
        assert code == EXIT_USAGE and "name the same file" in err, (args, err)
    assert store.read_bytes() == before


def test_a_run_does_not_replace_its_own_input(use_executor, tmp_path):
    use_executor()
    given = tmp_path / "in.txt"
    given.write_text("data\n")
    code, _, err = invoke("run", "--runs", "3", "--input", str(given), "--output", str(given), "cat")
    assert code == EXIT_USAGE and "name the same file" in err
    assert given.read_text() == "data\n"


# --------------------------------------------------------------------------- planted links (G7)


@needs_root
def test_run_output_through_another_users_planted_link_is_refused(use_executor, tmp_path):
    use_executor()
    link, victim = planted_link(tmp_path, "out")
    code, _, err = invoke("run", "--runs", "3", "--output", str(link), "sleep 0.1")
    assert code == EXIT_USAGE and "protected_symlinks" in err
    assert victim.read_text() == "root:x:0:0\n"


@needs_root
def test_a_commands_output_file_is_never_opened_through_a_planted_link(tmp_path):
    link, victim = planted_link(tmp_path, "out")
    with pytest.raises(Exception, match="protected_symlinks"):
        open_output(OutputPolicy("file", str(link)))
    assert victim.read_text() == "root:x:0:0\n"


def test_a_link_planted_after_the_check_is_not_followed_when_the_output_opens(tmp_path, monkeypatch):
    """The check and the open are two steps: a link that appears between them is refused (O_NOFOLLOW)."""
    from pairbench import outputs

    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    out = tmp_path / "out"
    real_check = outputs.check_target

    def check_then_plant(path):
        found = real_check(path)
        out.symlink_to(victim)
        return found

    monkeypatch.setattr(outputs, "check_target", check_then_plant)
    with pytest.raises(RefusedOutput, match="became a symbolic link"):
        outputs.open_stream(out, truncate=True)
    assert victim.read_text() == "keep\n"


@needs_root
@pytest.mark.parametrize("planted", ["D.db", "D.db-wal", "D.db-journal"])
def test_a_sqlite_store_through_another_users_planted_link_is_refused(tmp_path, planted):
    link, victim = planted_link(tmp_path, planted)
    store = link.parent / "D.db"
    code, _, err = invoke("run", "--runs", "3", "--store", str(store), "true")
    assert code == 4 and "protected_symlinks" in err, err
    assert victim.read_text() == "root:x:0:0\n"
    assert sorted(p.name for p in link.parent.iterdir()) == [planted]


@needs_root
def test_a_sqlite_store_linked_to_a_missing_file_is_not_created_through_the_link(tmp_path):
    link, victim = planted_link(tmp_path, "D.db")
    victim.unlink()
    code, _, err = invoke("store", "import", str(RESULT), "--store", f"sqlite:///{link}")
    assert code == 4 and "protected_symlinks" in err
    assert not victim.exists()


# --------------------------------------------------------------------------- pairbench's own files (G6)


def test_pairbench_never_writes_its_own_files_through_a_committed_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("VICTIM\n")
    project = tmp_path / "project"
    (project / ".pairbench" / "confirm").mkdir(parents=True)
    (project / ".pairbench" / "confirm" / "build-abc.log").symlink_to(victim)
    directory = private_directory(project, ".pairbench/confirm")
    with pytest.raises(RefusedOutput, match="is a symbolic link"):
        open_private(directory, "build-abc.log")
    linked = tmp_path / "linked"
    (linked / ".pairbench").mkdir(parents=True)
    (linked / ".pairbench" / "confirm").symlink_to(outside)
    with pytest.raises(RefusedOutput, match="is a symbolic link"):
        private_directory(linked, ".pairbench/confirm")
    assert victim.read_text() == "VICTIM\n" and sorted(p.name for p in outside.iterdir()) == ["victim.txt"]


def test_a_result_kept_for_the_store_is_not_written_through_a_committed_link(tmp_path):
    from pairbench.sessions.record import StoreTarget, record
    from pairbench.store.database import parse_url
    from pairbench.store.history import Provenance
    from pairbench.store.project import Project

    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / ".pairbench").mkdir()
    (tmp_path / ".pairbench" / "unstored").symlink_to(outside)
    target = StoreTarget(parse_url("postgresql://u@127.0.0.1:1/h"), None, Project(tmp_path))
    recorded = record(stored_run(), None, target, result_path=None, provenance=Provenance())
    assert recorded.error is not None and recorded.kept_in is None
    assert list(outside.iterdir()) == []
