"""The step ``record`` of pairbench's GitHub Action: on a push to a branch (main), ``pairbench record``
of the pushed commit against the last commit recorded on the branch, in the same interleaved rounds
(and every few records the window's anchor as a third side), kept as links in the history store;
then the branch's history in the job's summary and as an HTML page for the artifact.

Who holds what. This step runs the *branch's* code (its ``[confirm]`` build and benchmarks) in the
job that holds the store's writing URL, unlike ``measure`` on a pull request. pairbench gives that
code no store URL, ``PG*`` password or token in its environment, and is itself non-dumpable; but
the code runs as the runner's user, so it could change files that this step or pairbench load later.
That is acceptable only for code already on the branch: whoever can push it can change the workflow
itself, and a workflow on the branch is given the secret anyway. So the step refuses to run for a
pull request (``GITHUB_EVENT_NAME`` pull_request or pull_request_target): a pull request's code is
measured by ``measure``, which holds no secret (``docs/security.md``).
"""

from __future__ import annotations

import shlex
from pathlib import Path

UNTRUSTED_EVENTS = ("pull_request", "pull_request_target")
TOKENS = ("GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
          "ACTIONS_ID_TOKEN_REQUEST_URL")
"""What the branch's code is not given here either: the store's URL is pairbench's own, the tokens nobody's."""


def record_argv(branch: str, options: tuple[str, ...]) -> list[str]:
    return ["pairbench", "record", "HEAD", "--branch", branch, *options]


def history_argv(branch: str, last: int, fmt: str, output: Path | None = None) -> list[str]:
    argv = ["pairbench", "history", "--branch", branch, "--last", str(last), "--format", fmt]
    return argv + (["-o", str(output)] if output else [])


def record(env: dict[str, str], action) -> dict[str, str]:
    """The step ``record`` (module docstring); ``action`` is ``pairbench_action`` (its layout, keeper,
    validation and step files). Its outputs: pairbench's exit status and the report directory."""
    event = env.get("GITHUB_EVENT_NAME", "")
    if event in UNTRUSTED_EVENTS:
        raise action.ActionError(f"mode record keeps results with the store's writing URL and runs the branch's code: "
                                 f"it is for pushes to a branch, not a {event} (use mode compare there)")
    layout = action.layout_of(env)
    branch = (env.get("INPUT_HISTORY_BRANCH") or env.get("GITHUB_REF_NAME") or "").strip()
    if not action._REF.fullmatch(branch):
        raise action.ActionError(f"history-branch must name the branch recorded, got {branch!r}")
    try:
        options = tuple(shlex.split(env.get("INPUT_OPTIONS", "")))
        last = int(env.get("INPUT_HISTORY_LAST", "").strip() or "100")
    except ValueError as exc:
        raise action.ActionError(f"bad input: {exc}") from None
    layout.report_dir.mkdir(parents=True, exist_ok=True)
    given = {k: v for k, v in env.items() if k not in TOKENS and k not in action.STEP_FILES
             and not k.startswith("INPUT_")}
    argv = record_argv(branch, options)
    print("+ " + shlex.join(argv), flush=True)
    code = action.run_kept(argv, cwd=layout.workspace, env=given)
    action.reclaim_step_files(env)  # the branch's code has ended: what it wrote for the runner is dropped
    page = layout.report_dir / "history.html"
    shown = action.subprocess.run(history_argv(branch, last, "markdown"), cwd=layout.workspace, env=given,
                                  capture_output=True, text=True, timeout=600)
    action.subprocess.run(history_argv(branch, last, "html", page), cwd=layout.workspace, env=given,
                          capture_output=True, text=True, timeout=600)
    summary = shown.stdout if shown.returncode == 0 else \
        f"_pairbench history exited {shown.returncode}: {action.github_comment.escape(shown.stderr[-500:])}_\n"
    action._append(env.get("GITHUB_STEP_SUMMARY"), summary)
    return {"exit-code": str(code), "report-dir": str(layout.report_dir),
            "result": ""}
