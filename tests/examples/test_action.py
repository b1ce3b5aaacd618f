"""The GitHub Action (``action.yml``) runs its own steps here, as GitHub's runner would, against a
throwaway git repository with two commits (the second makes two benchmarks slower): it installs
pairbench from its own copy, checks the base out into a worktree, builds both sides, measures
them, posts one pull request comment and updates it on the next run, hands the HTML report to
the upload step and fails the job on a slowdown. Only GitHub's API is a fake
(``tests/support/fake_github.py``), served on localhost; every other part is real.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from composite_action import CompositeAction
from fake_github import FakeGitHubServer
from installs import REPO, scratch_directory
from tools import git

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # starts real programs: the Action's install and runs

TOKEN = "ghs_faketoken0123456789"
WORKER = """#include "pairbench.h"
static unsigned long mix(unsigned long n) {
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++) x ^= x * 2654435761u + i;
    return x;
}
PAIRBENCH(work) { pairbench_keep(mix(WORK)); }
PAIRBENCH(steady) { pairbench_keep(mix(2000)); }
PAIRBENCH_NAMED(option_like, "--output=injected.md") { pairbench_keep(mix(WORK)); }
PAIRBENCH_MAIN()
"""
APP = """#define _POSIX_C_SOURCE 199309L
#include <time.h>
int main(void) {  /* sleeps WORK / 20 microseconds: 10 ms, then 30 ms; load barely moves a sleep */
    struct timespec t = {0, (WORK / 20) * 1000L};
    return nanosleep(&t, 0);
}
"""
BUILD = ('cc -O2 -DWORK="$(cat work.txt)" -o app app.c\n'
         'cc -O2 -DWORK="$(cat work.txt)" -I"$(pairbench include-dir)" -o bench bench.c\n'
         'echo "built the $PAIRBENCH_SIDE"')
FAST = "--warmup 1 --min-runs 6 --max-time 20s --seed 1"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> dict:
    """A bare ``origin`` with main (commit 1) and a pull request's branch (commit 2: ``work`` and
    ``--output=injected.md`` three times the work, the command three times the sleep), and the pull request's
    checkout made as actions/checkout makes it: a clone of depth 1, without the base."""
    root = tmp_path_factory.mktemp("project")
    author = root / "author"
    author.mkdir()
    git(author, "init", "-q", "-b", "main")
    for name, text in {"bench.c": WORKER, "app.c": APP, "work.txt": "200000\n"}.items():
        (author / name).write_text(text)
    git(author, "add", ".")
    git(author, "commit", "-q", "-m", "base")
    base = git(author, "rev-parse", "HEAD")
    git(author, "checkout", "-q", "-b", "pr")
    (author / "work.txt").write_text("600000\n")
    git(author, "commit", "-q", "-am", "three times the work")
    origin = root / "origin.git"
    git(root, "clone", "-q", "--bare", str(author), str(origin))
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")  # as GitHub's servers allow
    workspace = root / "workspace"
    git(root, "clone", "-q", "--depth", "1", "--branch", "pr", f"file://{origin}", str(workspace))
    return {"origin": origin, "author": author, "workspace": workspace, "base": base}


def _action_copy(destination: Path) -> Path:
    """The repository's files as GitHub checks the Action out (tracked and new, not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory):
    with scratch_directory("pairbench-action-") as scratch:
        yield Path(scratch)


@pytest.fixture(scope="module")
def installed(project, runner_temp, wheelhouse, tmp_path_factory) -> dict:
    """The Action's install step, run once for the module: its outputs and the PATH it adds."""
    action = _action_copy(tmp_path_factory.mktemp("action"))
    env = {**_base_env(runner_temp), **wheelhouse}
    run = CompositeAction(action, project["workspace"], {}, _github(project), env)
    [step] = run.run(only=("install",))
    assert step.code == 0, step.output
    return {"action": action, "outputs": run.steps["install"], "paths": run.paths}


def _base_env(runner_temp: Path) -> dict:
    keep = ("PATH", "HOME", "LANG", "TMPDIR", "PAIRBENCH_TEST_CACHE")
    return {**{k: os.environ[k] for k in keep if k in os.environ}, "RUNNER_TEMP": str(runner_temp),
            "GITHUB_REPOSITORY": "octo/app", "GITHUB_SERVER_URL": "https://github.test", "GITHUB_RUN_ID": "42"}


def _github(project: dict) -> dict:
    return {"token": TOKEN, "event": {"pull_request": {"number": 7, "base": {"sha": project["base"], "ref": "main"}}}}


def _run_action(installed, project, runner_temp, api_url, inputs, env=()):
    run = CompositeAction(installed["action"], project["workspace"], inputs, _github(project),
                          {**_base_env(runner_temp), "GITHUB_API_URL": api_url, **dict(env)})
    run.steps["install"], run.paths = dict(installed["outputs"]), list(installed["paths"])
    return run, {step.id: step for step in run.run(skip=("install",))}


def _rerun_from_compose(first, installed, project, runner_temp, api_url, inputs) -> dict:
    """A next run of the Action whose install, measure and history steps gave what ``first``'s did:
    its compose and comment steps run again, as the next push's job would run them."""
    run = CompositeAction(installed["action"], project["workspace"], inputs, _github(project),
                          {**_base_env(runner_temp), "GITHUB_API_URL": api_url})
    run.steps = {step: dict(first.steps[step]) for step in ("install", "measure", "history") if step in first.steps}
    run.paths = list(installed["paths"])
    return {step.id: step for step in run.run(only=("compose", "comment"))}


def test_the_action_compares_a_command_posts_one_comment_updates_it_and_fails_on_the_slowdown(
        installed, project, runner_temp):
    inputs = {"command": "./app", "build": BUILD, "options": FAST}
    with FakeGitHubServer(TOKEN) as (url, github):
        run, steps = _run_action(installed, project, runner_temp, url, inputs)
        measured = steps["measure"]
        assert measured.code == 0, measured.output
        assert "built the base" in measured.output and "built the candidate" in measured.output
        assert measured.outputs["exit-code"] == "1", measured.output  # --fail-on slower matched
        [posted] = github.comments[("octo/app", 7)]
        assert posted["body"].startswith("<!-- pairbench-action:pairbench -->")
        assert "slower" in posted["body"] and "actions/runs/42" in posted["body"]
        gate_line = posted["body"].split("\n\n")[1]  # the first thing a reviewer reads
        assert gate_line == "**This pull request fails the `fail-on: slower` gate**: 1 benchmark(s) matched " \
                            "(`command`). The job fails."
        assert steps["comment"].outputs["comment-url"] == posted["html_url"]
        upload = steps["upload"]
        assert upload.uses.startswith("actions/upload-artifact@")
        assert [Path(p) for p in upload.with_["path"].split()] == [runner_temp / "pairbench" / "report",
                                                                    runner_temp / "pairbench" / "result.json"]
        assert (runner_temp / "pairbench" / "report" / "report.html").stat().st_size > 10_000
        assert steps["gate"].code == 1 and "a verdict matched --fail-on" in steps["gate"].output
        assert "slower" in run.summary

        # the next run of the job posts no second comment but updates the first: the steps from the
        # comment on run again, on this run's measurement (measuring again would repeat the above)
        again = _rerun_from_compose(run, installed, project, runner_temp, url, inputs)
        assert again["comment"].code == 0, again["comment"].output
        assert len(github.comments[("octo/app", 7)]) == 1 and ("PATCH", "/repos/octo/app/issues/comments/1000") \
            in github.requests


def test_the_action_benches_a_suite_with_the_history_of_what_changed_and_reads_no_name_as_an_option(
        installed, project, runner_temp, tmp_path):
    store = f"sqlite:///{tmp_path / 'history.db'}"
    _store_main(project, store, tmp_path)
    inputs = {"suite": "bench", "build": BUILD, "options": "--warmup 2 --min-runs 8 --max-time 4s --seed 1 --alpha 0.05",
              "fail-on": "never"}
    with FakeGitHubServer(TOKEN) as (url, github):
        _, steps = _run_action(installed, project, runner_temp, url, inputs, {"PAIRBENCH_STORE": store})
        measured = steps["measure"]
        assert measured.code == 0 and measured.outputs["exit-code"] == "0", measured.output
        [comment] = github.comments[("octo/app", 7)]
    result = json.loads((runner_temp / "pairbench" / "result.json").read_text())
    assert {c["benchmark"]["name"] for c in result["comparisons"]} == {"work", "steady", "--output=injected.md"}
    # Which verdicts load lets through varies (three times the work is usually "slower"); whatever
    # changed is shown with its history, each name given to pairbench history as a name.
    changed = {c["benchmark"]["name"] for c in result["comparisons"]
               if c["verdict"] in ("slower", "faster") and not c["negligible"]}
    assert ("History of the changed benchmarks on main" in comment["body"]) == bool(changed)
    if changed:
        history = comment["body"].split("History of the changed benchmarks on main", 1)[1]
        assert all(name.lstrip("-") in history for name in changed)
    for where in (runner_temp / "pairbench", project["workspace"], tmp_path):
        assert not list(where.rglob("injected.md"))


def _store_main(project: dict, store: str, scratch: Path) -> None:
    """A result of main's benchmarks in the history store, measured in a checkout of main."""
    main = scratch / "main"
    git(scratch, "clone", "-q", "--branch", "main", str(project["origin"]), str(main))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIRBENCH_")}
    pairbench = [sys.executable, "-m", "pairbench"]
    include = subprocess.run([*pairbench, "include-dir"], capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["cc", "-O2", "-DWORK=200000", f"-I{include}", "-o", "bench", "bench.c"], cwd=main, check=True)
    done = subprocess.run([*pairbench, "bench", "./bench", "--store", store, "--runs", "4", "--warmup", "1", "-q"],
                          cwd=main, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


RECORDED = "int main(void) { return WORK - WORK; }\n"


def _recorded_project(root: Path, store: str) -> tuple[Path, list[str]]:
    """A repository of two commits of a C program with a [confirm] recipe, checked out at the first."""
    repo = root / "recorded"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "pairbench.toml").write_text(f'[store]\nurl = "{store}"\n\n[confirm]\n'
                                         'build = "cc -O1 -DWORK=$(cat work.txt) work.c -o work"\n'
                                         'command = "./work"\nname = "work"\n')
    (repo / ".gitignore").write_text("work\n.pairbench/\n")
    (repo / "work.c").write_text(RECORDED)
    commits = []
    for work in ("1", "2"):
        (repo / "work.txt").write_text(work + "\n")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", f"work {work}")
        commits.append(git(repo, "rev-parse", "HEAD"))
    git(repo, "checkout", "-q", commits[0])
    return repo, commits


def test_the_action_records_each_push_to_main_as_links_and_refuses_a_pull_request(installed, runner_temp, tmp_path):
    from pairbench.store.history import Store

    store = f"sqlite:///{tmp_path / 'history.db'}"
    repo, commits = _recorded_project(tmp_path, store)
    inputs = {"mode": "record", "options": "--runs 12 --seed 1 -q"}
    push = {"token": TOKEN, "ref_name": "main", "event": {}}
    env = {**_base_env(runner_temp), "GITHUB_EVENT_NAME": "push", "PAIRBENCH_STORE": store}
    for commit in commits:
        git(repo, "checkout", "-q", commit)
        run = CompositeAction(installed["action"], repo, inputs, push, env)
        run.steps["install"], run.paths = dict(installed["outputs"]), list(installed["paths"])
        steps = {step.id: step for step in run.run(skip=("install",))}
        assert steps["record"].code == 0 and steps["record"].outputs["exit-code"] == "0", steps["record"].output
        assert not steps["measure"].ran and not steps["comment"].ran and steps["gate"].code == 0
    assert "Paired history" in run.summary and f"{commits[0][:10]}..{commits[1][:10]}" in run.summary
    assert (runner_temp / "pairbench" / "report" / "history.html").stat().st_size > 10_000
    with Store.open(store, read_only=True) as opened:
        [machine] = opened.machines()
        links = opened.links(machine.id, [b.id for b in opened.link_benchmarks(machine.id)])
    assert [(link.kind, link.before, link.after) for link in links] == [
        ("predecessor", commits[0], commits[1]), ("anchor", commits[0], commits[1])]

    refused = CompositeAction(installed["action"], repo, inputs, push, {**env, "GITHUB_EVENT_NAME": "pull_request"})
    refused.steps["install"], refused.paths = dict(installed["outputs"]), list(installed["paths"])
    [step] = refused.run(only=("record",))
    assert step.code != 0 and "not a pull_request" in step.output
