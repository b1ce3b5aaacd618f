"""The steps of pairbench's GitHub Action (``action.yml``), runnable on any machine with git.

    python pairbench_action.py measure   check out the base, build both sides and measure them in
                                         paired rounds: the pull request's code runs here, so this
                                         step holds no store URL and no token
    python pairbench_action.py history   the history of the benchmarks that changed, read from the
                                         store ($PAIRBENCH_STORE); runs no code of the pull request
    python pairbench_action.py compose   the comment's body and the job's summary: whether the pull
                                         request passes its fail-on gate, the verdicts, the history
    python pairbench_action.py comment   post the body on the pull request, or update the comment
                                         posted before ($GITHUB_TOKEN)
    python pairbench_action.py gate      end as pairbench did (1 when --fail-on matched)

What a step needs comes from environment variables: the Action's inputs as ``INPUT_*`` (set by
``action.yml``, never pasted into a script's text) and GitHub's own (``GITHUB_WORKSPACE``,
``RUNNER_TEMP``, ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ...). The steps share files in
``$RUNNER_TEMP/pairbench``. Nothing runs through a shell but the workflow's own build command.
Benchmark names from the pull request are data: they reach ``pairbench history`` as separate
arguments after ``--``.

Who holds what. The pull request's code (its build, its benchmarks) runs only in ``measure``,
whose environment ``action.yml`` empties of the store's URL and the tokens (:data:`SECRET_VARIABLES`;
the step refuses to run holding one), so neither its shell, nor this process, nor anything they
start has them to show in ``/proc/PID/environ``. Each build and the measurement run under
pairbench's keeper (``pairbench.measure.children``): whatever they leave running is ended when they
end (a cgroup where the machine gives one, else the keeper's scan of its descendants), so no process
of the pull request's lives on into ``history`` (which holds the store's URL) or ``comment`` (the
token). After the pull request's code has ended, ``measure`` takes back the files through which a
step talks to the runner (``GITHUB_ENV``, ``GITHUB_PATH``, ``GITHUB_OUTPUT``, the summary): what the
code wrote there is dropped. Every step's process is non-dumpable (``PR_SET_DUMPABLE`` 0), so its
memory and environment need root to read. What this cannot stop (code that changes files the
runner's user owns, or a build with sudo) is in ``docs/security.md``.

Adding a step: a function of the environment that returns the step's outputs, in :data:`STEPS`, and
a step in ``action.yml`` that empties whatever secret the step does not need (a step that holds a
secret runs no program of the pull request's).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import github_comment

FAIL_ON = ("slower", "faster", "change", "never")
SECRET_VARIABLES = ("PAIRBENCH_STORE", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "GITHUB_TOKEN", "GH_TOKEN",
                    "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL")
"""What the pull request's builds and benchmarks are not given, and ``measure`` may not hold."""
STEP_FILES = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")
"""The files through which a step talks to the runner: not given to the pull request's code, and
emptied by ``measure`` once that code has ended."""
MAX_HISTORY_NAMES = 20
"""The most changed benchmarks whose history the comment shows."""
EXIT_MEANINGS = {1: "a verdict matched --fail-on", 2: "a usage error", 3: "a command failed or could not be run",
                 4: "a result file or the history store could not be read or written",
                 70: "an internal error of pairbench (please report it)"}
_REF = re.compile(r"[^\s\x00-\x1f\x7f~^:?*\[\\-][^\s\x00-\x1f\x7f~^:?*\[\\]{0,254}")
_COMMIT = re.compile(r"[0-9a-f]{7,64}")


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
    base's worktree and every file the steps write."""

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
    def history(self) -> Path:
        return self.work / "history.md"

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
    """``env`` without what the pull request's code must not read or write (the secrets, the
    Action's inputs, the step's files for the runner), plus ``extra``."""
    return {k: v for k, v in env.items()
            if k not in SECRET_VARIABLES and k not in STEP_FILES and not k.startswith("INPUT_")} | extra


def write_new(path: Path, text: str) -> None:
    """``text`` into a new file at ``path``: whatever was there (a file, or a link a build left) is
    removed first, and the file is created afresh, never through a link."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with open(fd, "w", encoding="utf-8") as file:
        file.write(text)


def read_data(path: Path, limit: int = 64 << 20) -> str:
    """A file a step before wrote (the pull request's code could have changed it: data, never
    code), read without following a link; "" when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise ActionError(f"cannot read {path}: {exc.strerror or exc}", 4) from None
    with open(fd, encoding="utf-8", errors="replace") as file:
        return file.read(limit)


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


def run_kept(argv: list[str], *, cwd: Path, env: dict[str, str]) -> int:
    """Run the pull request's code (a build, or pairbench measuring it) under pairbench's keeper:
    when it ends, so does everything it started. Its exit status (negative: the signal)."""
    from pairbench.measure import children

    with Untrusted():
        return children.run(argv, timeout_s=None, cwd=str(cwd), env=env)


def build_sides(layout: Layout, build: str, env: dict[str, str]) -> None:
    """Run the build command in each side's checkout (bash, exit on the first error)."""
    if not build.strip():
        return
    for side, directory in sides(layout):
        print(f"::group::Build the {side} ({directory})", flush=True)
        status = run_kept(["bash", "-e", "-o", "pipefail", "-c", build], cwd=directory,
                          env=scrubbed(env, PAIRBENCH_SIDE=side))
        print("::endgroup::", flush=True)
        if status != 0:
            raise ActionError(f"the build of the {side} failed (exit status {status})", 3)


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
    return run_kept(argv, cwd=layout.work, env=scrubbed(env))


def refuse_secrets(env: dict[str, str]) -> None:
    """``measure`` runs the pull request's code: it may not hold a secret to show it."""
    held = [name for name in SECRET_VARIABLES if env.get(name)]
    if held:
        raise ActionError(f"the measure step runs the pull request's code, so it must not hold {', '.join(held)} "
                          "(action.yml empties them for it; run the steps as action.yml does)")


def reclaim_step_files(env: dict[str, str]) -> None:
    """Empty the step's files for the runner: the pull request's code, ended now, may have written
    variables, paths, outputs or a summary there for later steps to take."""
    for name in STEP_FILES:
        path = env.get(name)
        if not path:
            continue
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC))
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise ActionError(f"the step's file {name} ({path}) cannot be emptied ({exc.strerror or exc}): "
                              "the pull request's code may have replaced it", 3) from None


def measure(env: dict[str, str]) -> dict[str, str]:
    """The step ``measure``: returns the step's outputs."""
    refuse_secrets(env)
    inputs, layout = read_inputs(env), layout_of(env)
    layout.work.mkdir(parents=True, exist_ok=True)
    for stale in (layout.result, layout.verdicts, layout.history, layout.comment):
        stale.unlink(missing_ok=True)
    try:
        commit = check_out_base(layout, inputs.base_ref)
        build_sides(layout, inputs.build, env)
        code = run_pairbench(inputs, layout, env)
    finally:
        reclaim_step_files(env)
    return {"exit-code": str(code), "result": str(layout.result) if layout.result.exists() else "",
            "report-dir": str(layout.report_dir), "base-commit": commit}


def changed_benchmarks(result: dict, inputs: Inputs) -> list[str]:
    """The benchmarks with a verdict of slower or faster (not negligible), as history names them;
    in ``compare`` the command's name is the input ``name`` (none: no history)."""
    names = []
    for comparison in _comparisons(result):
        if comparison.get("verdict") not in ("slower", "faster") or comparison.get("negligible"):
            continue
        key = comparison.get("benchmark") if isinstance(comparison.get("benchmark"), dict) else {}
        label = _label(str(key.get("name", "")), key.get("params") if isinstance(key.get("params"), dict) else {})
        names.append(inputs.name if inputs.command else label)
    return sorted({n for n in names if n})


def _comparisons(result) -> list[dict]:
    found = result.get("comparisons", []) if isinstance(result, dict) else []
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _label(name: str, params: dict) -> str:
    return f"{name}[{','.join(f'{k}={v}' for k, v in sorted(params.items()))}]" if params else name


def _result(layout: Layout) -> dict:
    try:
        return json.loads(read_data(layout.result) or "{}")
    except ValueError:
        return {}


# -------------------------------------------------------------------------------------- history

def _history(names: list[str], inputs: Inputs, cwd: Path, env: dict[str, str], fmt: str):
    argv = ["pairbench", "history", "--format", fmt, "--last", str(inputs.history_last)]
    argv += ["--branch", inputs.history_branch] if inputs.history_branch else []
    return subprocess.run([*argv, "--", *names], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, timeout=600)


def history_section(names: list[str], inputs: Inputs, layout: Layout, env: dict[str, str]) -> str:
    """The history of ``names`` in the store, as Markdown; those it has no results of are left
    out (each is asked alone only when the first answer says one is missing). pairbench runs in a
    directory of its own, made now, whose empty ``pairbench.toml`` ends the search for a config
    (and git's for a repository) there: nothing a build left in the scratch directory is read."""
    names = names[:MAX_HISTORY_NAMES]
    with tempfile.TemporaryDirectory(prefix="history-", dir=layout.work.parent) as private:
        cwd = Path(private)
        (cwd / "pairbench.toml").write_text("")
        env = {**env, "GIT_CEILING_DIRECTORIES": str(cwd.parent)}
        done = _history(names, inputs, cwd, env, "markdown")
        if done.returncode == 4 and len(names) > 1:
            known = [n for n in names if _history([n], inputs, cwd, env, "json").returncode == 0]
            done = _history(known, inputs, cwd, env, "markdown") if known else done
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-2000:])
        return (f"_No history of the changed benchmarks on "
                f"{github_comment.escape(inputs.history_branch or 'any branch')} (pairbench history exited "
                f"{done.returncode}; see the job's log)._")
    title = f"History of the changed benchmarks on {github_comment.escape(inputs.history_branch or 'every branch')}"
    return f"<details>\n<summary>{title}</summary>\n\n{done.stdout.strip()}\n\n</details>"


def history(env: dict[str, str]) -> dict[str, str]:
    """The step ``history``: with a store, the history of what changed, for ``compose``."""
    inputs, layout = read_inputs(env), layout_of(env)
    layout.history.unlink(missing_ok=True)
    changed = changed_benchmarks(_result(layout), inputs)
    if not env.get("PAIRBENCH_STORE") or not changed:
        return {}
    write_new(layout.history, history_section(changed, inputs, layout, env))
    return {"history": str(layout.history)}


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


def gate_section(code: int, fail_on: str, result: dict) -> str:
    """One sentence first in the comment: whether the pull request fails its ``fail-on`` gate, and
    which benchmarks made it fail."""
    gate = f"`fail-on: {fail_on}`"
    if fail_on == "never":
        return f"The {gate} gate is off: no verdict fails this job."
    wanted = ("slower", "faster") if fail_on == "change" else (fail_on,)
    matched = sorted({_label(str(c["benchmark"].get("name", "")), c["benchmark"].get("params") or {})
                      for c in _comparisons(result) if isinstance(c.get("benchmark"), dict)
                      and c.get("verdict") in wanted and not c.get("negligible") and not c.get("self_check")})
    if code == 1:
        named = ", ".join(f"`{github_comment.escape(n)}`" for n in matched[:10]) + (" ..." if len(matched) > 10 else "")
        which = f": {len(matched)} benchmark(s) matched ({named})" if matched else " (see the job's log)"
        return f"**This pull request fails the {gate} gate**{which}. The job fails."
    if code == 0:
        word = "slower or faster" if fail_on == "change" else fail_on
        return f"This pull request passes the {gate} gate: no benchmark is {word}."
    return f"**The {gate} gate could not decide**: pairbench exited {code}. The job fails."


def compose(env: dict[str, str]) -> dict[str, str]:
    """The step ``compose``: the comment's body, also written to the job's summary."""
    inputs, layout = read_inputs(env), layout_of(env)
    code = _exit_code(env.get("INPUT_EXIT_CODE", ""))
    commit = env.get("INPUT_BASE_COMMIT", "")
    commit = commit if _COMMIT.fullmatch(commit) else "unknown"
    verdicts, result = read_data(layout.verdicts), _result(layout)
    if verdicts and result:
        sections = [gate_section(code, inputs.fail_on, result) + "\n\n" + verdicts, read_data(layout.history)]
    else:
        sections = [failure_section(code)]
    body = github_comment.compose(github_comment.marker(inputs.comment_id), sections, footer(env, commit))
    write_new(layout.comment, body)
    _append(env.get("GITHUB_STEP_SUMMARY"), body)
    return {"comment": str(layout.comment)}


def comment(env: dict[str, str]) -> dict[str, str]:
    """The step ``comment``: post or update the pull request's comment; its URL. A comment GitHub
    refuses (a pull request from a fork gets a read-only token) is a warning: the gate decides."""
    number = env.get("INPUT_PULL_REQUEST", "").strip()
    if not number:
        print("not a pull request: the verdicts are in the job's summary")
        return {}
    body = read_data(Path(env.get("INPUT_COMMENT_FILE") or layout_of(env).comment))
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


def _exit_code(text: str) -> int:
    """pairbench's exit status as the step ``measure`` gave it (70, an internal error, if garbled)."""
    try:
        return int(text.strip() or "0")
    except ValueError:
        return 70


def gate(env: dict[str, str]) -> int:
    """The step ``gate``: pairbench's exit status, said in words."""
    code = _exit_code(env.get("INPUT_EXIT_CODE", ""))
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


STEPS: dict[str, Callable[[dict[str, str]], dict[str, str]]] = {
    "measure": measure, "history": history, "compose": compose, "comment": comment}
"""The steps that write outputs, by name (``gate`` only exits)."""


def main(argv: list[str] | None = None, env: dict[str, str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = dict(os.environ) if env is None else env
    try:
        if argv[:1] == ["gate"]:
            return gate(env)
        if len(argv) != 1 or argv[0] not in STEPS:
            raise ActionError(f"usage: pairbench_action.py {'|'.join([*STEPS, 'gate'])}")
        outputs = STEPS[argv[0]](env)
    except ActionError as exc:
        _annotate("error", str(exc))
        return exc.code
    _append(env.get("GITHUB_OUTPUT"), "".join(f"{k}={v}\n" for k, v in outputs.items()))
    return 0


def keep_to_ourselves() -> None:
    """This process non-dumpable: its memory and ``/proc/PID/environ`` need root to read."""
    from pairbench.measure.child_environment import keep_to_ourselves as hidden

    hidden()


if __name__ == "__main__":
    keep_to_ourselves()
    sys.exit(main())
