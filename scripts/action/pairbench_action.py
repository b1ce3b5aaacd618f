"""The steps of pairbench's GitHub Action (``action.yml``), runnable on any machine with git.

    python pairbench_action.py measure   check out the base, build both sides, measure them in
                                         paired rounds, write the comment's body and the summary
    python pairbench_action.py comment   post the body on the pull request, or update the
                                         comment posted before
    python pairbench_action.py gate      end as pairbench did (1 when --fail-on matched)

What a step needs comes from environment variables: the Action's inputs as ``INPUT_*`` (set by
``action.yml``, never pasted into a script's text) and GitHub's own (``GITHUB_WORKSPACE``,
``RUNNER_TEMP``, ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ...). Nothing runs through a shell
but the workflow's own build command. Benchmark names from the pull request are data: they
reach ``pairbench history`` as separate arguments after ``--``.

The builds and the benchmarks run the pull request's code, so they get an environment without
the store's URL, database passwords and tokens, and GitHub's workflow commands are switched off
while they print. Only ``pairbench history`` is given the store (``$PAIRBENCH_STORE``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import github_comment

FAIL_ON = ("slower", "faster", "change", "never")
SECRET_VARIABLES = ("PAIRBENCH_STORE", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "GITHUB_TOKEN", "GH_TOKEN",
                    "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL")
"""What the pull request's builds and benchmarks are not given."""
MAX_HISTORY_NAMES = 20
"""The most changed benchmarks whose history the comment shows."""
EXIT_MEANINGS = {1: "a verdict matched --fail-on", 2: "a usage error", 3: "a command failed or could not be run",
                 4: "a result file or the history store could not be read or written",
                 70: "an internal error of pairbench (please report it)"}
_REF = re.compile(r"[^\s\x00-\x1f\x7f~^:?*\[\\-][^\s\x00-\x1f\x7f~^:?*\[\\]{0,254}")


class ActionError(Exception):
    """The Action cannot go on: shown as an error annotation, and the step exits ``code``."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Inputs:
    """The Action's inputs, validated."""

    base_ref: str
    build: str
    command: str
    suite: str
    harness: str
    name: str
    options: tuple[str, ...]
    fail_on: str
    history_branch: str
    history_last: int
    comment_id: str


def read_inputs(env: dict[str, str]) -> Inputs:
    """The inputs from ``INPUT_*`` variables; ``ActionError`` naming the first bad one."""
    def get(name: str) -> str:
        return env.get(f"INPUT_{name.upper().replace('-', '_')}", "").strip()

    command, suite = get("command"), get("suite")
    if bool(command) == bool(suite):
        raise ActionError("give exactly one of the inputs command (pairbench compare) and suite (pairbench bench)")
    if not _REF.fullmatch(get("base-ref")):
        raise ActionError(f"base-ref must be a commit or branch name, got {get('base-ref')!r}")
    if suite and (os.path.isabs(suite) or ".." in Path(suite).parts):
        raise ActionError(f"suite is a path inside the checkout, got {suite!r}")
    fail_on = get("fail-on") or "slower"
    if fail_on not in FAIL_ON:
        raise ActionError(f"fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    try:
        options = tuple(shlex.split(get("options")))
        last = int(get("history-last") or "100")
        github_comment.marker(get("comment-id") or "pairbench")
    except ValueError as exc:
        raise ActionError(f"bad input: {exc}") from None
    if not 2 <= last <= 100_000:
        raise ActionError(f"history-last must be 2 to 100000, got {last}")
    return Inputs(get("base-ref"), env.get("INPUT_BUILD", ""), command, suite, get("harness"), get("name"), options,
                  fail_on, get("history-branch"), last, get("comment-id") or "pairbench")


@dataclass(frozen=True)
class Layout:
    """Where things are: the pull request's checkout, and the Action's scratch directory with the
    base's worktree and every file the Action writes."""

    workspace: Path
    work: Path

    @property
    def base(self) -> Path:
        return self.work / "base"

    @property
    def result(self) -> Path:
        return self.work / "result.json"

    @property
    def verdicts(self) -> Path:
        return self.work / "verdicts.md"

    @property
    def report_dir(self) -> Path:
        return self.work / "report"

    @property
    def comment(self) -> Path:
        return self.work / "comment.md"


def layout_of(env: dict[str, str]) -> Layout:
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
    temp = env.get("RUNNER_TEMP")
    if not temp:
        raise ActionError("RUNNER_TEMP is not set (GitHub sets it; locally, name a scratch directory)")
    return Layout(workspace, Path(temp).resolve() / "pairbench")


def scrubbed(env: dict[str, str], **extra: str) -> dict[str, str]:
    """``env`` without what the pull request's code must not read, plus ``extra``."""
    return {k: v for k, v in env.items() if k not in SECRET_VARIABLES and not k.startswith("INPUT_")} | extra


# ---------------------------------------------------------------------------------------- sides

def _git(layout: Layout, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(layout.workspace), *args], capture_output=True, text=True,
                          check=check, timeout=600)


def base_commit(layout: Layout, ref: str) -> str:
    """The commit ``ref`` names, fetched from ``origin`` when the checkout lacks it (a shallow
    checkout of the pull request has no base)."""
    found = _git(layout, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if found.returncode == 0:
        return found.stdout.strip()
    fetched = _git(layout, "fetch", "--quiet", "--no-tags", "--depth=1", "origin", ref, check=False)
    if fetched.returncode != 0:
        raise ActionError(f"base-ref {ref!r} is not in the checkout and could not be fetched from origin: "
                          f"{fetched.stderr.strip()[-500:]}")
    return _git(layout, "rev-parse", "--verify", "FETCH_HEAD^{commit}").stdout.strip()


def check_out_base(layout: Layout, ref: str) -> str:
    """A worktree of the base at ``layout.base``; returns its commit."""
    commit = base_commit(layout, ref)
    if layout.base.exists():
        _git(layout, "worktree", "remove", "--force", str(layout.base), check=False)
    _git(layout, "worktree", "add", "--detach", "--quiet", str(layout.base), commit)
    return commit


def sides(layout: Layout) -> tuple[tuple[str, Path], tuple[str, Path]]:
    return ("base", layout.base), ("candidate", layout.workspace)


class Untrusted:
    """While the pull request's code prints, GitHub's workflow commands are off (a benchmark that
    prints ``::error::`` or ``::add-mask::`` is only text)."""

    def __enter__(self):
        self.token = secrets.token_hex(16)
        print(f"::stop-commands::{self.token}", flush=True)
        return self

    def __exit__(self, *exc):
        print(f"::{self.token}::", flush=True)


def build_sides(layout: Layout, build: str, env: dict[str, str]) -> None:
    """Run the build command in each side's checkout (bash, exit on the first error)."""
    if not build.strip():
        return
    for side, directory in sides(layout):
        print(f"::group::Build the {side} ({directory})", flush=True)
        with Untrusted():
            done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", build], cwd=directory,
                                  env=scrubbed(env, PAIRBENCH_SIDE=side), check=False)
        print("::endgroup::", flush=True)
        if done.returncode != 0:
            raise ActionError(f"the build of the {side} failed (exit status {done.returncode})", 3)


# -------------------------------------------------------------------------------------- measure

def measure_argv(inputs: Inputs, layout: Layout) -> list[str]:
    """The ``pairbench compare`` or ``bench`` command line: the sides after ``--``."""
    common = ["--name", "base", "--name", "candidate", "--no-store", "--fail-on", inputs.fail_on,
              "--json", str(layout.result), "--export-markdown", str(layout.verdicts),
              "--export-html", str(layout.report_dir / "report.html")]
    if inputs.command:
        in_side = [f"env -C {shlex.quote(str(directory))} {inputs.command}" for _, directory in sides(layout)]
        return ["pairbench", "compare", *common, *inputs.options, "--", *in_side]
    harness = ["--harness", inputs.harness] if inputs.harness else []
    programs = [str(directory / inputs.suite) for _, directory in sides(layout)]
    return ["pairbench", "bench", *common, *harness, *inputs.options, "--", *programs]


def run_pairbench(inputs: Inputs, layout: Layout, env: dict[str, str]) -> int:
    """Measure both sides (in the scratch directory: no checkout's pairbench config is read)."""
    layout.report_dir.mkdir(parents=True, exist_ok=True)
    argv = measure_argv(inputs, layout)
    print("+ " + shlex.join(argv), flush=True)
    with Untrusted():
        return subprocess.run(argv, cwd=layout.work, env=scrubbed(env), check=False).returncode


def changed_benchmarks(result: dict, inputs: Inputs) -> list[str]:
    """The benchmarks with a verdict of slower or faster (not negligible), as history names them;
    in ``compare`` the command's name is the input ``name`` (none: no history)."""
    names = []
    for comparison in result.get("comparisons", []):
        if comparison.get("verdict") not in ("slower", "faster") or comparison.get("negligible"):
            continue
        key = comparison.get("benchmark", {})
        label = _label(str(key.get("name", "")), key.get("params") or {})
        names.append(inputs.name if inputs.command else label)
    return sorted({n for n in names if n})


def _label(name: str, params: dict) -> str:
    return f"{name}[{','.join(f'{k}={v}' for k, v in sorted(params.items()))}]" if params else name


# -------------------------------------------------------------------------------------- history

def _history(names: list[str], inputs: Inputs, layout: Layout, env: dict[str, str], fmt: str):
    argv = ["pairbench", "history", "--format", fmt, "--last", str(inputs.history_last)]
    argv += ["--branch", inputs.history_branch] if inputs.history_branch else []
    return subprocess.run([*argv, "--", *names], cwd=layout.work, env=env, capture_output=True, text=True,
                          check=False, timeout=600)


def history_section(names: list[str], inputs: Inputs, layout: Layout, env: dict[str, str]) -> str:
    """The history of ``names`` in the store, as Markdown; those it has no results of are left
    out (each is asked alone only when the first answer says one is missing)."""
    names = names[:MAX_HISTORY_NAMES]
    done = _history(names, inputs, layout, env, "markdown")
    if done.returncode == 4 and len(names) > 1:
        known = [n for n in names if _history([n], inputs, layout, env, "json").returncode == 0]
        done = _history(known, inputs, layout, env, "markdown") if known else done
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-2000:])
        return (f"_No history of the changed benchmarks on "
                f"{github_comment.escape(inputs.history_branch or 'any branch')} (pairbench history exited "
                f"{done.returncode}; see the job's log)._")
    title = f"History of the changed benchmarks on {github_comment.escape(inputs.history_branch or 'every branch')}"
    return f"<details>\n<summary>{title}</summary>\n\n{done.stdout.strip()}\n\n</details>"


# -------------------------------------------------------------------------------------- the body

def footer(env: dict[str, str], commit: str) -> str:
    run = "/".join(env.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY"))
    link = f"{run}/actions/runs/{env['GITHUB_RUN_ID']}" if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY") \
        else ""
    where = f"[this run's artifacts]({link})" if link else "this run's artifacts"
    return (f"<sub>pairbench: the base ({commit[:12]}) and the pull request, built and measured in one job, in "
            f"interleaved paired rounds. The HTML report with charts is in {where}.</sub>")


def failure_section(code: int) -> str:
    return (f"**pairbench exited {code} ({EXIT_MEANINGS.get(code, 'unexpected status')}) without a result**; "
            "see the job's log.")


def measure(env: dict[str, str]) -> dict[str, str]:
    """The step ``measure``: returns the step's outputs."""
    inputs, layout = read_inputs(env), layout_of(env)
    layout.work.mkdir(parents=True, exist_ok=True)
    for stale in (layout.result, layout.verdicts, layout.comment):
        stale.unlink(missing_ok=True)
    commit = check_out_base(layout, inputs.base_ref)
    build_sides(layout, inputs.build, env)
    code = run_pairbench(inputs, layout, env)
    if layout.result.exists() and layout.verdicts.exists():
        sections = [layout.verdicts.read_text()]
        changed = changed_benchmarks(json.loads(layout.result.read_text()), inputs)
        if env.get("PAIRBENCH_STORE") and changed:
            sections.append(history_section(changed, inputs, layout, env))
    else:
        sections = [failure_section(code)]
    body = github_comment.compose(github_comment.marker(inputs.comment_id), sections, footer(env, commit))
    layout.comment.write_text(body)
    _append(env.get("GITHUB_STEP_SUMMARY"), body)
    return {"exit-code": str(code), "result": str(layout.result) if layout.result.exists() else "",
            "report-dir": str(layout.report_dir), "comment": str(layout.comment)}


def comment(env: dict[str, str]) -> dict[str, str]:
    """The step ``comment``: post or update the pull request's comment; its URL. A comment GitHub
    refuses (a pull request from a fork gets a read-only token) is a warning: the gate decides."""
    number = env.get("INPUT_PULL_REQUEST", "").strip()
    if not number:
        print("not a pull request: the verdicts are in the job's summary")
        return {}
    body = Path(env.get("INPUT_COMMENT_FILE") or layout_of(env).comment).read_text()
    api = github_comment.GitHubApi(env.get("GITHUB_API_URL") or "https://api.github.com", env.get("GITHUB_TOKEN", ""))
    marker_line = body.split("\n", 1)[0]
    try:
        posted = github_comment.post_or_update_comment(api, env.get("GITHUB_REPOSITORY", ""), int(number), body,
                                                       marker_line)
    except (github_comment.GitHubError, ValueError) as exc:  # a fork's read-only token, say: the gate decides
        _annotate("warning", f"could not post the comment ({exc}); the verdicts are in the job's summary")
        return {}
    print(f"comment: {posted.get('html_url', '')}")
    return {"comment-url": str(posted.get("html_url", ""))}


def gate(env: dict[str, str]) -> int:
    """The step ``gate``: pairbench's exit status, said in words."""
    code = int(env.get("INPUT_EXIT_CODE") or "0")
    if code:
        _annotate("error", f"pairbench exited {code}: {EXIT_MEANINGS.get(code, 'unexpected status')}")
    return code


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(text + "\n")


def _annotate(level: str, message: str) -> None:
    """A workflow command (``::error::``), its message escaped as GitHub asks."""
    escaped = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    print(f"::{level}::{escaped}", flush=True)


def main(argv: list[str] | None = None, env: dict[str, str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = dict(os.environ) if env is None else env
    steps = {"measure": measure, "comment": comment}
    try:
        if argv[:1] == ["gate"]:
            return gate(env)
        if len(argv) != 1 or argv[0] not in steps:
            raise ActionError("usage: pairbench_action.py measure|comment|gate")
        outputs = steps[argv[0]](env)
    except ActionError as exc:
        _annotate("error", str(exc))
        return exc.code
    _append(env.get("GITHUB_OUTPUT"), "".join(f"{k}={v}\n" for k, v in outputs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
