"""The Action keeps the store's URL and the token from the pull request's code: the red-team audit's
two reproducers (its H1), run as an unprivileged user (root reads every process's environment, so
as root they prove nothing) through ``action.yml``'s own steps.

1. The build reads the environment of every process it can (its ancestors: the keeper, the step's
   Python and shell, and anything else of the user's): neither secret is in any.
2. The base's build leaves a daemon (``setsid``) that keeps reading every process's environment for
   the secrets while the later steps run: it is ended with the build, and finds nothing.

Each reader also looks for a variable given to the build on purpose (``CANARY``): finding it shows
the reading works, so that finding no secret means something.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from composite_action import CompositeAction
from fake_github import FakeGitHubServer
from other_user import private_to

TOKEN = "ghs_FAKE_TOKEN_123"
STORE_SECRET = "TOPSECRET"
CANARY = "canary-7Qx2"
THIEF = """import os, sys, time
out, until = sys.argv[1], time.time() + float(sys.argv[2])
wanted = [w.encode() for w in sys.argv[3:]]
with open(out + ".pid", "w") as f:
    f.write(str(os.getpid()))
seen = set()
while time.time() < until and not os.path.exists(out + ".stop"):
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == str(os.getpid()):
            continue
        try:
            data = open(f"/proc/{pid}/environ", "rb").read()
        except OSError:
            continue
        for word in wanted:
            if word in data and word not in seen:
                seen.add(word)
                with open(out, "a") as f:
                    f.write(word.decode() + "\\n")
    time.sleep(0.005)
"""
BUILD = f"""echo "built the $PAIRBENCH_SIDE: store=${{PAIRBENCH_STORE:-unset}} token=${{GITHUB_TOKEN:-unset}}"
for f in /proc/[0-9]*/environ; do
    if tr '\\0' '\\n' < "$f" 2>/dev/null | grep -a -q -e {STORE_SECRET} -e {TOKEN}; then echo "LEAK in $f"; fi
    if tr '\\0' '\\n' < "$f" 2>/dev/null | grep -a -q {CANARY}; then echo "canary readable in $f"; fi
done
if [ "$PAIRBENCH_SIDE" = base ]; then
    setsid python "$THIEF_SCRIPT" "$THIEF_OUT" 60 {STORE_SECRET} {TOKEN} {CANARY} </dev/null >/dev/null 2>&1 &
    for _ in $(seq 200); do [ -s "$THIEF_OUT" ] && break; sleep 0.05; done
fi
"""


def _action_copy(destination: Path, repo: Path) -> Path:
    shutil.copy2(repo / "action.yml", destination / "action.yml")
    shutil.copytree(repo / "scripts" / "action", destination / "scripts" / "action",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return destination


def _workspace(root: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    root.mkdir()
    (root / "prog").write_text("#!/bin/sh\ntrue\n")
    (root / "prog").chmod(0o755)
    for args in (["init", "-q"], ["add", "prog"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                          text=True).stdout.strip()


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.e2e
def test_the_pull_requests_build_reads_neither_secret_and_its_daemon_ends_with_it(other_user):
    shared, (uid, gid) = other_user["shared"], other_user["ids"]
    scratch = Path(tempfile.mkdtemp(prefix="action-secrets-", dir=shared.root))  # a place the user reaches
    scratch.chmod(0o755)
    repo = Path(__file__).resolve().parents[2]
    action = _action_copy(scratch, repo)
    base = _workspace(scratch / "ws")
    (scratch / "tmp").mkdir()
    (scratch / "thief.py").write_text(THIEF)
    stolen = scratch / "tmp" / "stolen.txt"
    private_to(scratch / "ws", uid, gid)
    private_to(scratch / "tmp", uid, gid)
    env = {"PATH": f"{shared.bin}:/usr/local/bin:/usr/bin:/bin", "HOME": str(scratch / "tmp"), "LANG": "C.UTF-8",
           "RUNNER_TEMP": str(scratch / "tmp"), "GITHUB_REPOSITORY": "octo/app", "CANARY": CANARY,
           "PAIRBENCH_STORE": f"sqlite:///{scratch}/tmp/{STORE_SECRET}.db", "THIEF_SCRIPT": str(scratch / "thief.py"),
           "THIEF_OUT": str(stolen), **shared.env}
    inputs = {"command": "./prog", "build": BUILD, "options": "--runs 6 --warmup 0", "fail-on": "never"}
    github = {"token": TOKEN, "event": {"pull_request": {"number": 7, "base": {"sha": base, "ref": "main"}}}}
    try:
        with FakeGitHubServer(TOKEN) as (url, fake):
            run = CompositeAction(action, scratch / "ws", inputs, github, {**env, "GITHUB_API_URL": url},
                                  drop=(other_user["drop"], uid, gid))
            run.steps["install"], run.paths = {"python": str(shared.python), "bin": str(shared.bin)}, [str(shared.bin)]
            steps = {step.id: step for step in run.run(skip=("install",))}
            measured = steps["measure"]
            assert measured.code == 0 and measured.outputs["exit-code"] == "0", measured.output
            thief = int((stolen.parent / "stolen.txt.pid").read_text())
            alive_after = _alive(thief)
            time.sleep(0.3)  # had it lived, it would have read the later steps by now
            [posted] = fake.comments[("octo/app", 7)]
        assert "built the base: store=unset token=unset" in measured.output
        assert "built the candidate: store=unset token=unset" in measured.output
        assert "canary readable in" in measured.output, measured.output  # the reading works...
        assert "LEAK" not in measured.output, measured.output  # ...and finds no secret
        assert steps["comment"].code == 0 and posted["body"].startswith("<!-- pairbench-action:pairbench -->")
        assert stolen.read_text().split() == [CANARY]  # it read, but never a secret
        assert not alive_after, "the build's daemon outlived the build"
    finally:
        (stolen.parent / "stolen.txt.stop").touch()
        shutil.rmtree(scratch, ignore_errors=True)
