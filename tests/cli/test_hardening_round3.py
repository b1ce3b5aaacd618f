"""The red team's third round (H3 to H7), each reproducer a test: ``bisect`` in a repository whose path
holds a space, a committed ``.pairbench`` symbolic link, an import of a pytest-benchmark file with no
benchmarks, store URLs that hid a password badly or dropped parameters, and ``bisect``'s rough edges
(``:/message`` revisions, a build that deletes its own worktree)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from cli_runner import invoke
from tools import git

from pairbench.errors import MeasurementError, StoreError
from pairbench.measure.commandline import parse_command
from pairbench.measure.revisions import resolve
from pairbench.sessions.builds import BuildCache, Recipe, Revision, target_in
from pairbench.store.database import parse_url

BENCH = "import pairbench\n\n@pairbench.benchmark\ndef work():\n    sum(range(1000))\n"


def _repository(root: Path, *, link_to: Path | None = None) -> None:
    """The report's repository: a benchmark, a [confirm] recipe, a second commit (and, given
    ``link_to``, a third that commits ``.pairbench`` as a link to it)."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    (root / "bench_x.py").write_text(BENCH)
    (root / "pairbench.toml").write_text('[confirm]\nbuild = "true"\nbench = "bench_x.py"\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    (root / "two").write_text("2\n")
    git(root, "add", "two")
    git(root, "commit", "-qm", "two")
    if link_to is not None:
        (root / ".pairbench").symlink_to(link_to)
        git(root, "add", ".pairbench")
        git(root, "commit", "-qm", "link")


# ---------------------------------------------------------------------------------------- H3


def test_the_target_of_a_build_whose_tree_holds_a_space_is_found_and_stays_one_word(tmp_path):
    tree = tmp_path / "my repo" / "tree"
    (tree / "build").mkdir(parents=True)
    (tree / "bench_x.py").write_text(BENCH)
    (tree / "build" / "bench").write_text("#!/bin/sh\n")
    (tree / "build" / "bench").chmod(0o755)
    revision = Revision("HEAD", "0" * 40, str(tree))
    assert target_in(Recipe("true", bench="bench_x.py"), revision) == str(tree / "bench_x.py")
    program = target_in(Recipe("true", bench="build/bench"), revision)
    assert parse_command(program).argv == (str(tree / "build" / "bench"),)
    with_args = target_in(Recipe("true", bench="build/bench --fast 'two words'"), revision)
    assert shlex.split(with_args) == [str(tree / "build" / "bench"), "--fast", "two words"]
    with pytest.raises(MeasurementError, match="'build/missing' is not in its worktree"):
        target_in(Recipe("true", bench="build/missing"), revision)


@pytest.mark.e2e
def test_bisect_works_in_a_repository_whose_path_holds_a_space(tmp_path, monkeypatch):
    root = tmp_path / "my repo"
    _repository(root)
    monkeypatch.chdir(root)
    code, _, err = invoke("bisect", "HEAD~1", "HEAD", "--no-store", "-q", "--runs", "6", "--warmup", "0",
                          real_environment=True)
    assert code in (0, 5, 7), err  # decided or not, it measured: never "not in its worktree" (3)
    assert "not in its worktree" not in err


# ---------------------------------------------------------------------------------------- H4


@pytest.mark.e2e
def test_bisect_writes_nothing_through_a_committed_pairbench_link(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    _repository(tmp_path / "repo", link_to=outside)
    monkeypatch.chdir(tmp_path / "repo")
    code, _, err = invoke("bisect", "HEAD~2", "HEAD", "--no-store", "-q", "--max-time", "2s", real_environment=True)
    assert code == 3 and "is a symbolic link" in err, err
    assert list(outside.iterdir()) == []


@pytest.mark.e2e
def test_confirm_opens_no_default_store_through_a_committed_pairbench_link(tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    _repository(tmp_path / "repo", link_to=outside)
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.delenv("PAIRBENCH_STORE", raising=False)
    code, _, err = invoke("confirm", "HEAD~2", "HEAD", "-q", "--max-time", "2s", real_environment=True)
    assert code == 4 and "is a symbolic link" in err, err
    assert list(outside.iterdir()) == []


# ---------------------------------------------------------------------------------------- H5


def test_an_import_of_a_pytest_benchmark_file_without_benchmarks_is_refused_in_one_line(tmp_path):
    report = tmp_path / "pb.json"
    report.write_text('{"machine_info": {}, "commit_info": {}, "benchmarks": [], "datetime": '
                      '"2026-11-29T00:00:00", "version": "5.3.1"}\n')
    code, _, err = invoke("convert", "--json", str(tmp_path / "out.json"), str(report))
    assert code == 4 and err.count("\n") == 1, err
    assert "holds no benchmark results" in err and not (tmp_path / "out.json").exists()


# ---------------------------------------------------------------------------------------- H6


@pytest.mark.parametrize("name", ["PASSWORD", "PassWord", "password", "SSLPassword"])
def test_a_password_given_as_a_query_parameter_in_any_case_is_never_shown(name):
    store = parse_url(f"postgresql://u@127.0.0.1:1/d?{name}=S3cr3t")
    assert "S3cr3t" not in store.shown and f"{name}=***" in store.shown
    assert store.scrubbed("libpq said S3cr3t") == "libpq said ***"


@pytest.mark.parametrize("url", ["postgresql://bench:pw@127.0.0.1:1/be%00nch",
                                 "postgresql://bench:pw@127.0.0.1:1/bench?sslmode=require%00&port=5"])
def test_a_nul_in_a_store_url_is_refused_not_cut_short(url):
    with pytest.raises(StoreError, match="holds a NUL") as refused:
        parse_url(url)
    assert "pw" not in str(refused.value).replace("postgresql", "")


def test_a_password_holding_a_raw_at_sign_is_refused_without_its_tail():
    with pytest.raises(StoreError, match="holds @ more than once") as refused:
        parse_url("postgresql://bench:Zq9@xK7pw@127.0.0.1:1/bench")
    assert "xK7pw" not in str(refused.value) and "Zq9" not in str(refused.value)


# ---------------------------------------------------------------------------------------- H7


@pytest.mark.e2e
def test_a_revision_named_by_its_message_is_resolved(tmp_path):
    _repository(tmp_path / "repo")
    first = git(tmp_path / "repo", "rev-parse", "HEAD~1")
    assert resolve(":/one", str(tmp_path / "repo"), option="bisect") == first
    assert resolve("HEAD~1", str(tmp_path / "repo"), option="bisect") == first


@pytest.mark.e2e
def test_a_build_that_deletes_its_own_worktree_fails_and_leaves_no_worktree_entry(tmp_path):
    root = tmp_path / "repo"
    _repository(root)
    cache = BuildCache(Recipe('rm -rf "$PWD"/* "$PWD"/.git', bench="bench_x.py"), str(root), ".", 60 * 10**9)
    commit = git(root, "rev-parse", "HEAD")
    try:
        with pytest.raises(MeasurementError, match="removed its own worktree"):
            cache.built(Revision("HEAD", commit))
    finally:
        cache.close()
    listed = subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=root, capture_output=True, text=True,
                            check=True).stdout
    assert "prunable" not in listed and listed.count("worktree ") == 1, listed
