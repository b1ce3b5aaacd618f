"""The Action's script (``scripts/action``) part by part: its inputs are validated, the sides and
benchmark names are arguments after ``--``, the pull request's code gets no secrets, and the
comment is found again by its marker (against the fake of GitHub's API)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import psycopg
import pytest
from cli_runner import FIXED_ENVIRONMENT, invoke
from fake_github import FakeGitHubServer
from history_runs import store_history
from tools import git

import github_comment
import pairbench_action
from github_comment import GitHubApi, post_or_update_comment
from pairbench.store.history import Store

INPUTS = {"INPUT_BASE_REF": "0123abc", "INPUT_SUITE": "build/bench"}
LAYOUT = pairbench_action.Layout(Path("/w/pr"), Path("/t/pairbench"))


def _inputs(**changes):
    env = {**INPUTS, **{f"INPUT_{k.upper()}": v for k, v in changes.items()}}
    return pairbench_action.read_inputs({k: v for k, v in env.items() if v is not None})


@pytest.mark.parametrize("changes, message", [
    ({"command": "./app"}, "exactly one of"),
    ({"suite": None}, "exactly one of"),
    ({"base_ref": "--upload-pack=evil"}, "base-ref"),
    ({"base_ref": "main\nmore"}, "base-ref"),
    ({"suite": "../outside/bench"}, "suite is a path inside"),
    ({"suite": "/usr/bin/bench"}, "suite is a path inside"),
    ({"fail_on": "sometimes"}, "fail-on"),
    ({"options": "--max-time '2m"}, "bad input"),
    ({"history_last": "1"}, "history-last"),
    ({"comment_id": "a b"}, "comment-id"),
])
def test_a_bad_input_is_refused_naming_it(changes, message):
    with pytest.raises(pairbench_action.ActionError, match=message):
        _inputs(**changes)


def test_bench_gets_both_programs_after_double_dash_and_never_the_store():
    argv = pairbench_action.measure_argv(_inputs(options="--max-time 2m -k 'Parse|Format'"), LAYOUT)
    assert argv[:2] == ["pairbench", "bench"] and "--no-store" in argv
    assert argv[argv.index("--"):] == ["--", "/t/pairbench/base/build/bench", "/w/pr/build/bench"]
    assert argv[argv.index("-k") + 1] == "Parse|Format"


def test_compare_runs_the_command_in_each_sides_checkout():
    argv = pairbench_action.measure_argv(_inputs(suite=None, command="./app --size 10"), LAYOUT)
    assert argv[1] == "compare" and argv[-3:] == ["--", "env -C /t/pairbench/base ./app --size 10",
                                                  "env -C /w/pr ./app --size 10"]


def test_the_pull_requests_code_gets_no_store_password_token_or_the_steps_files():
    env = {"PATH": "/bin", "PAIRBENCH_STORE": "postgresql://u:secret@db/b", "PGPASSWORD": "secret",
           "GITHUB_TOKEN": "t", "GH_TOKEN": "t", "INPUT_GITHUB_TOKEN": "t", "HOME": "/h", "GITHUB_ENV": "/f/env",
           "GITHUB_PATH": "/f/path", "GITHUB_OUTPUT": "/f/out", "GITHUB_STEP_SUMMARY": "/f/sum"}
    assert pairbench_action.scrubbed(env, PAIRBENCH_SIDE="base") == {"PATH": "/bin", "HOME": "/h",
                                                                      "PAIRBENCH_SIDE": "base"}


@pytest.mark.parametrize("held", ["PAIRBENCH_STORE", "GITHUB_TOKEN", "PGPASSWORD"])
def test_the_step_that_runs_the_pull_requests_code_refuses_to_hold_a_secret(held, capsys):
    assert pairbench_action.main(["measure"], {**INPUTS, held: "secret", "RUNNER_TEMP": "/nonexistent"}) == 2
    assert f"must not hold {held}" in capsys.readouterr().out


def test_measure_drops_what_the_pull_requests_code_wrote_to_the_steps_files(tmp_path):
    files = {name: tmp_path / name.lower() for name in pairbench_action.STEP_FILES}
    for path in files.values():
        path.write_text("LD_PRELOAD=/tmp/evil.so\n")
    pairbench_action.reclaim_step_files({name: str(path) for name, path in files.items()})
    assert all(path.read_text() == "" for path in files.values())
    files["GITHUB_ENV"].unlink()
    files["GITHUB_ENV"].symlink_to(tmp_path / "elsewhere")
    with pytest.raises(pairbench_action.ActionError, match="cannot be emptied"):
        pairbench_action.reclaim_step_files({"GITHUB_ENV": str(files["GITHUB_ENV"])})


def test_a_file_the_steps_write_replaces_a_link_a_build_left_instead_of_writing_through_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("kept")
    (tmp_path / "comment.md").symlink_to(victim)
    pairbench_action.write_new(tmp_path / "comment.md", "body")
    assert victim.read_text() == "kept" and (tmp_path / "comment.md").read_text() == "body"
    assert not (tmp_path / "comment.md").is_symlink()
    (tmp_path / "history.md").symlink_to(victim)
    assert pairbench_action.read_data(tmp_path / "missing.md") == ""
    with pytest.raises(pairbench_action.ActionError):
        pairbench_action.read_data(tmp_path / "history.md")


RESULT = {"comparisons": [
    {"benchmark": {"name": "parse", "params": {}}, "verdict": "slower", "negligible": False, "self_check": False},
    {"benchmark": {"name": "tiny", "params": {}}, "verdict": "slower", "negligible": True, "self_check": False},
    {"benchmark": {"name": "fmt", "params": {"n": "8"}}, "verdict": "faster", "negligible": False,
     "self_check": False}]}


@pytest.mark.parametrize("code, fail_on, said", [
    (1, "slower", "**This pull request fails the `fail-on: slower` gate**: 1 benchmark(s) matched (`parse`). "
                  "The job fails."),
    (1, "change", "**This pull request fails the `fail-on: change` gate**: 2 benchmark(s) matched "
                  "(`fmt\\[n=8\\]`, `parse`). The job fails."),
    (0, "faster", "This pull request passes the `fail-on: faster` gate: no benchmark is faster."),
    (0, "never", "The `fail-on: never` gate is off: no verdict fails this job."),
    (3, "slower", "**The `fail-on: slower` gate could not decide**: pairbench exited 3. The job fails."),
])
def test_the_comment_says_first_whether_the_pull_request_fails_its_gate(code, fail_on, said):
    assert pairbench_action.gate_section(code, fail_on, RESULT) == said


def test_compose_puts_the_gate_before_the_verdicts_and_the_history_after(tmp_path):
    layout = pairbench_action.layout_of({"RUNNER_TEMP": str(tmp_path), "GITHUB_WORKSPACE": str(tmp_path)})
    layout.work.mkdir()
    layout.result.write_text(json.dumps(RESULT))
    layout.verdicts.write_text("| verdicts |")
    layout.history.write_text("<details>history</details>")
    summary = tmp_path / "summary.md"
    env = {**INPUTS, "RUNNER_TEMP": str(tmp_path), "INPUT_EXIT_CODE": "1", "INPUT_BASE_COMMIT": "0123abcd",
           "GITHUB_STEP_SUMMARY": str(summary)}
    assert pairbench_action.main(["compose"], env) == 0
    body = layout.comment.read_text()
    assert body.index("fails the `fail-on: slower` gate") < body.index("| verdicts |") < body.index("history")
    assert "(0123abcd)" in body and summary.read_text() == body + "\n"


def test_changed_benchmarks_are_the_slower_and_faster_ones_named_as_history_names_them():
    result = {"comparisons": [
        {"benchmark": {"name": "sort", "params": {"n": "64", "kind": "r"}}, "verdict": "slower"},
        {"benchmark": {"name": "--output=x.md", "params": {}}, "verdict": "faster"},
        {"benchmark": {"name": "tiny", "params": {}}, "verdict": "slower", "negligible": True},
        {"benchmark": {"name": "same", "params": {}}, "verdict": "equivalent"}]}
    assert pairbench_action.changed_benchmarks(result, _inputs()) == ["--output=x.md", "sort[kind=r,n=64]"]
    command = _inputs(suite=None, command="./app", name="app")
    assert pairbench_action.changed_benchmarks({"comparisons": result["comparisons"][:1]}, command) == ["app"]


def test_the_gate_exits_as_pairbench_did_and_says_why(capsys):
    assert pairbench_action.main(["gate"], {"INPUT_EXIT_CODE": "1"}) == 1
    assert "::error::pairbench exited 1: a verdict matched --fail-on" in capsys.readouterr().out
    assert pairbench_action.main(["gate"], {"INPUT_EXIT_CODE": "0"}) == 0


def test_a_comment_too_long_for_github_is_cut_and_says_so():
    verdicts = "| row |\n" * 20_000
    body = github_comment.compose("<!-- m -->", [verdicts, "history"], "footer")
    assert len(body) <= github_comment.MAX_BODY and body.startswith("<!-- m -->")
    assert "Cut to fit a comment" in body and body.rstrip().endswith("footer") and "history" in body


def test_markdown_from_outside_is_shown_literally():
    assert github_comment.escape("@team <b>[x](y)</b> #1\nnext") == \
        "@\u200bteam &lt;b&gt;\\[x\\]\\(y\\)&lt;/b&gt; #\u200b1 next"


def test_the_comment_is_posted_once_then_updated_and_a_quote_of_it_is_left_alone():
    marker = github_comment.marker("suite")
    with FakeGitHubServer("tok") as (url, github):
        github.add("octo/app", 5, f"> {marker}\n> quoted by a reviewer")
        api = GitHubApi(url, "tok")
        first = post_or_update_comment(api, "octo/app", 5, f"{marker}\nfirst", marker)
        second = post_or_update_comment(api, "octo/app", 5, f"{marker}\nsecond", marker)
        assert first["id"] == second["id"]
        assert [c["body"] for c in github.comments[("octo/app", 5)]] == [f"> {marker}\n> quoted by a reviewer",
                                                                         f"{marker}\nsecond"]


def test_the_comment_is_found_beyond_the_first_page_of_comments():
    marker = github_comment.marker("pairbench")
    with FakeGitHubServer("tok") as (url, github):
        for k in range(150):
            github.add("octo/app", 9, f"comment {k}")
        mine = github.add("octo/app", 9, f"{marker}\nold")
        post_or_update_comment(GitHubApi(url, "tok"), "octo/app", 9, f"{marker}\nnew", marker)
        assert mine["body"] == f"{marker}\nnew" and len(github.comments[("octo/app", 9)]) == 151


def test_a_refused_token_is_an_error_that_does_not_show_it():
    with FakeGitHubServer("right") as (url, _), \
            pytest.raises(github_comment.GitHubError, match="HTTP 401: Bad credentials") as caught:
        post_or_update_comment(GitHubApi(url, "wrong-secret"), "octo/app", 1, "body", "<!-- m -->")
    assert "wrong-secret" not in str(caught.value)


def test_outside_a_pull_request_nothing_is_posted(capsys):
    assert pairbench_action.main(["comment"], {"INPUT_PULL_REQUEST": ""}) == 0
    assert "not a pull request" in capsys.readouterr().out


@pytest.mark.e2e
def test_the_history_a_pull_request_shows_needs_only_a_role_that_can_read(postgres_url, monkeypatch, tmp_path):
    """The examples give pull requests a store role that can only read (their code runs in that job)."""
    with Store.open(postgres_url) as store:
        store_history(store, [{"parse": 1e6, "--output=x.md": 2e6}] * 3, environment=FIXED_ENVIRONMENT)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        role = "reader_" + postgres_url.rsplit("/", 1)[1]  # roles are the server's, databases the test's
        admin.execute(f'CREATE ROLE "{role}" LOGIN')
        admin.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"')
    monkeypatch.chdir(tmp_path)
    reader = postgres_url.replace("pairbench@", f"{role}@", 1)
    code, out, err = invoke("history", "--store", reader, "--format", "markdown", "--", "parse", "--output=x.md")
    assert code == 0, err
    assert "parse" in out and "--output=x.md" in out and list(tmp_path.iterdir()) == []


def test_a_comment_github_refuses_is_a_warning_and_leaves_the_gate_to_decide(tmp_path, capsys):
    body = tmp_path / "comment.md"
    body.write_text("<!-- pairbench-action:pairbench -->\nverdicts\n")
    with FakeGitHubServer("write-token") as (url, github):
        env = {"INPUT_PULL_REQUEST": "3", "INPUT_COMMENT_FILE": str(body), "GITHUB_API_URL": url,
               "GITHUB_REPOSITORY": "octo/app", "GITHUB_TOKEN": "read-only-token"}
        assert pairbench_action.main(["comment"], env) == 0
        assert not github.comments
    out = capsys.readouterr().out
    assert "::warning::could not post the comment" in out and "read-only-token" not in out


@pytest.mark.e2e
def test_the_history_of_changed_benchmarks_takes_every_name_as_a_name_and_leaves_out_new_ones(
        tmp_path, monkeypatch, use_executor):
    """Issue 26 G5: a benchmark named --output=PATH made the CI example's history write that file."""
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    git(main, "commit", "-q", "--allow-empty", "-m", "first")
    monkeypatch.chdir(main)
    monkeypatch.delenv("PAIRBENCH_MACHINE", raising=False)
    store = f"sqlite:///{tmp_path / 'history.db'}"
    for name in ("work", "--output=injected.md"):
        use_executor()
        code, _, err = invoke("run", "--runs", "3", f"--name={name}", "--store", store, "sleep 0.001",
                              real_environment=True)
        assert code == 0, err
    layout = pairbench_action.Layout(main, tmp_path / "scratch")
    layout.work.mkdir()
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path),
           "PAIRBENCH_STORE": store}
    section = pairbench_action.history_section(["--output=injected.md", "new-one", "work"],
                                               _inputs(history_branch="main"), layout, env)
    assert section.startswith("<details>") and "output=injected.md" in section and "work" in section
    assert "new-one" not in section
    assert not list(tmp_path.rglob("injected.md"))
