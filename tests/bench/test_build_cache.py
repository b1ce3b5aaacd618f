"""The build cache of ``bisect`` (``sessions.builds``) and the ``[confirm]`` recipe, on real git
repositories with a build that only writes a file: a tree is built once, a failed build is not
kept, the least recently used builds beyond ``keep`` go, and one another search holds stays."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest
from tools import git

from pairbench.errors import MeasurementError, UsageError
from pairbench.sessions.builds import BuildCache, Recipe, Revision, recipe_of, target_in
from pairbench.store.project import find_project

BUILD = "n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count; test ! -e broken"


@pytest.fixture
def repo(tmp_path):
    """Four commits: a file changes in each but the third, an empty commit (the second's tree)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commits = []
    for k in range(4):
        if k != 2:
            (root / "a.txt").write_text(f"{k}\n")
            git(root, "add", "a.txt")
        git(root, "commit", "-q", "--allow-empty", "-m", f"c{k}")
        commits.append(git(root, "rev-parse", "HEAD"))
    return root, commits


def _cache(root: Path, build: str = BUILD) -> BuildCache:
    return BuildCache(Recipe(build, bench="count"), str(root), ".", 60 * 10**9)


@pytest.mark.e2e
def test_a_tree_is_built_once_even_for_another_commit_with_the_same_files(repo):
    root, commits = repo
    cache = _cache(root)
    first = cache.built(Revision("c1", commits[1]))
    again = cache.built(Revision("c2", commits[2]))  # an empty commit: the same tree
    assert first.tree == again.tree and Path(first.tree, "count").read_text() == "1\n"
    assert cache.built_now == [commits[1]] and cache.reused == [commits[2]]
    cache.close()
    later = _cache(root)
    later.built(Revision("c1", commits[1]))
    assert later.built_now == [] and later.reused == [commits[1]]
    later.close()


@pytest.mark.e2e
def test_the_build_runs_in_a_worktree_of_the_commit(repo):
    root, commits = repo
    cache = _cache(root)
    built = cache.built(Revision("c0", commits[0]))
    assert Path(built.tree, "a.txt").read_text() == "0\n"
    assert git(Path(built.tree), "rev-parse", "HEAD") == commits[0]
    assert Path(built.tree).is_relative_to(root / ".git" / "pairbench" / "builds")
    assert target_in(cache.recipe, built) == os.path.join(built.tree, "count")
    cache.close()


@pytest.mark.e2e
def test_a_new_build_command_builds_again(repo):
    root, commits = repo
    one, two = _cache(root), _cache(root, BUILD + " # another")
    assert one.key(commits[1]) != two.key(commits[1]) and one.key(commits[1]) == one.key(commits[2])


@pytest.mark.e2e
def test_a_failed_build_is_not_kept_and_its_log_is_named(repo):
    root, commits = repo
    (root / "broken").write_text("x")
    git(root, "add", "broken")
    git(root, "commit", "-q", "-m", "broken")
    broken = git(root, "rev-parse", "HEAD")
    cache = _cache(root)
    with pytest.raises(MeasurementError, match=r"does not build: .* exited 1 .*build\.log"):
        cache.built(Revision("broken", broken))
    entry = cache.directory / cache.key(broken)
    assert not (entry / "built").exists() and not (entry / "tree").exists() and (entry / "build.log").exists()
    cache.close()
    assert len(git(root, "worktree", "list").splitlines()) == 1  # only the main tree


@pytest.mark.e2e
def test_the_least_recently_used_builds_beyond_keep_are_removed(repo):
    root, commits = repo
    cache = _cache(root)
    for k in (0, 1, 3):
        cache.built(Revision(f"c{k}", commits[k]))
        os.utime(cache.directory / cache.key(commits[k]) / "built", (1000 + k, 1000 + k))
    removed = cache.close(keep=1)
    assert sorted(removed) == sorted(cache.key(commits[k]) for k in (0, 1))
    left = [p.name for p in cache.directory.iterdir() if p.is_dir()]
    assert left == [cache.key(commits[3])]
    assert len(git(root, "worktree", "list").splitlines()) == 2  # the main tree and the one kept


@pytest.mark.e2e
def test_a_build_another_search_holds_is_not_removed(repo):
    root, commits = repo
    cache = _cache(root)
    cache.built(Revision("c0", commits[0]))
    cache.close()
    held = os.open(cache.directory / f"{cache.key(commits[0])}.lock", os.O_WRONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert _cache(root).close(keep=0) == []
    finally:
        os.close(held)
    assert _cache(root).close(keep=0) == [cache.key(commits[0])]


def test_the_recipe_wants_a_build_and_one_of_bench_and_command(tmp_path):
    (tmp_path / "pairbench.toml").write_text('[confirm]\nbuild = "make"\nbench = "b"\ncommand = "./c"\n')
    with pytest.raises(UsageError, match="one of bench and command"):
        recipe_of(find_project(tmp_path), "bisect")
    (tmp_path / "pairbench.toml").write_text('[confirm]\nbuild = "make"\nbench = "b"\nname = "x"\n')
    with pytest.raises(UsageError, match="name names the command"):
        recipe_of(find_project(tmp_path))
    (tmp_path / "pairbench.toml").write_text('[confirm]\nbuild = "make"\ncommand = "./app in.txt"\nname = "app"\n')
    recipe = recipe_of(find_project(tmp_path))
    assert (recipe.kind, recipe.label) == ("compare", "app")
    assert target_in(recipe, Revision("r", "0" * 40, "/tmp/a tree")) == "env -C '/tmp/a tree' ./app in.txt"


def test_a_command_recipe_takes_only_a_filter_that_finds_its_name():
    recipe = Recipe("make", command="./app", name="app")
    recipe.check_filter("^app$")
    recipe.check_filter(None)
    with pytest.raises(UsageError, match="does not match 'app'"):
        recipe.check_filter("^other$")
