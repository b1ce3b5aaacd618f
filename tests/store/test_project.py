"""Finding the project's config: pairbench.toml or [tool.pairbench], up to the git working tree's top."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairbench.errors import UsageError
from pairbench.store.project import DEFAULT_BUILD_TIMEOUT_NS, find_project


def test_the_config_is_found_from_a_subdirectory_and_relative_urls_are_its_directory(tmp_path):
    (tmp_path / "pairbench.toml").write_text('[store]\nurl = "h.db"\n')
    (tmp_path / "a" / "b").mkdir(parents=True)
    project = find_project(tmp_path / "a" / "b")
    assert project.root == tmp_path and project.file == tmp_path / "pairbench.toml"
    assert project.store_url(environ={}) == ("h.db", tmp_path)


def test_pairbench_toml_wins_over_pyproject_in_the_same_directory(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.pairbench.store]\nurl = "py.db"\n')
    assert find_project(tmp_path).store == {"url": "py.db"}
    (tmp_path / "pairbench.toml").write_text('[store]\nurl = "own.db"\n')
    assert find_project(tmp_path).store == {"url": "own.db"}


def test_a_pyproject_without_a_pairbench_table_is_no_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / ".git").mkdir()
    project = find_project(tmp_path)
    assert project.file is None and project.root == tmp_path and project.store_url(environ={}) is None
    assert project.store_url(environ={}, default=True) == (".pairbench/history.db", tmp_path)


def test_the_search_stops_at_the_git_working_trees_top(tmp_path):
    (tmp_path / "pairbench.toml").write_text('[store]\nurl = "outer.db"\n')
    repository = tmp_path / "repo"
    (repository / "src").mkdir(parents=True)
    (repository / ".git").write_text("gitdir: /elsewhere\n")  # a worktree's .git is a file
    project = find_project(repository / "src")
    assert project.root == repository and project.store is None


def test_the_environment_and_the_option_win_over_the_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pairbench.toml").write_text('[store]\nurl = "config.db"\nmachine = "laptop"\n')
    project = find_project()
    assert project.store_url("given.db", environ={"PAIRBENCH_STORE": "env.db"})[0] == "given.db"
    assert project.store_url(environ={"PAIRBENCH_STORE": "env.db"})[0] == "env.db"
    assert project.machine_name(environ={}) == "laptop"
    assert project.machine_name(environ={"PAIRBENCH_MACHINE": "ci"}) == "ci"
    with pytest.raises(UsageError, match="PAIRBENCH_MACHINE"):
        project.machine_name(environ={"PAIRBENCH_MACHINE": "bad\x1bname"})


def test_confirm_settings_are_read_with_their_build_timeout(tmp_path):
    (tmp_path / "pairbench.toml").write_text('[confirm]\nbuild = "make"\nbench = "b"\nbuild_timeout = "90s"\n')
    project = find_project(tmp_path)
    assert project.confirm["bench"] == "b" and project.build_timeout_ns() == 90 * 10**9
    assert find_project(Path("/")).build_timeout_ns() == DEFAULT_BUILD_TIMEOUT_NS


def test_a_config_that_is_not_utf8_is_named_as_a_toml_file(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pairbench.toml").write_bytes(b'[store]\nurl = "\xff"\n')
    with pytest.raises(UsageError, match="pairbench.toml: not a TOML file"):
        find_project(tmp_path)
