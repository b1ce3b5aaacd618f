"""The CI examples (``examples/``) and the Action (``action.yml``) are checked by the tools that
would reject them: every file parses as YAML; ``actionlint``, with ``shellcheck`` on every
``run:`` script, passes on every workflow and on the Action's steps, and checks the inputs the
examples give the Action against ``action.yml``; the Kubernetes manifests decode strictly into
the API's own types (``k8scheck``, a Go program on k8s.io/api: no cluster is needed) and hold
together (volumes, claims, the order of the Jobs their comment gives). The tools are installed by
``scripts/install-test-deps.sh``; a missing one fails these tests."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from tools import require_tool

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (REPO / "examples").rglob("*") if p.suffix in (".yml", ".yaml"))
CHECKER = Path(__file__).resolve().parent / "k8scheck"
SELF_HOSTED_LABELS = ["benchmarks"]


def _documents(path: Path) -> list:
    return list(yaml.safe_load_all(path.read_text()))


def is_workflow(path: Path) -> bool:
    docs = _documents(path)
    return len(docs) == 1 and isinstance(docs[0], dict) and "jobs" in docs[0]


def is_manifest(path: Path) -> bool:
    return all(isinstance(d, dict) and "apiVersion" in d and "kind" in d for d in _documents(path) if d)


WORKFLOWS = [p for p in EXAMPLES if is_workflow(p)]
MANIFESTS = [p for p in EXAMPLES if is_manifest(p)]


@pytest.mark.parametrize("path", [*EXAMPLES, REPO / "action.yml"], ids=lambda p: str(p.relative_to(REPO)))
def test_every_example_and_the_action_parse_as_yaml(path):
    docs = _documents(path)
    assert docs and all(isinstance(d, dict) for d in docs)


def test_every_example_is_a_workflow_or_a_manifest_and_each_kind_is_there():
    assert sorted(WORKFLOWS + MANIFESTS) == EXAMPLES
    assert len(WORKFLOWS) >= 2 and len(MANIFESTS) >= 1


# ------------------------------------------------------------------------------------ actionlint

def action_as_workflow(action: dict) -> dict:
    """The Action's steps as one job of a reusable workflow, which actionlint checks (it reads
    action.yml only for the inputs a workflow gives it): its inputs become the workflow's."""
    inputs = {name: {"type": "string", "required": False} for name in action["inputs"]}
    return {"name": "the steps of action.yml", "on": {"workflow_call": {"inputs": inputs}},
            "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}}}


def _lint_project(root: Path, workflows: dict[str, str]) -> subprocess.CompletedProcess:
    """actionlint on ``workflows`` in a throwaway repository that holds the Action where the
    examples use it (``.github/actions/pairbench``), with shellcheck named explicitly (actionlint
    skips it silently when it cannot find it)."""
    (root / ".git").mkdir()
    github = root / ".github"
    (github / "workflows").mkdir(parents=True)
    (github / "actions" / "pairbench").mkdir(parents=True)
    shutil.copy(REPO / "action.yml", github / "actions" / "pairbench" / "action.yml")
    (github / "actionlint.yaml").write_text(yaml.safe_dump({"self-hosted-runner": {"labels": SELF_HOSTED_LABELS}}))
    for name, text in workflows.items():
        (github / "workflows" / name).write_text(text)
    return subprocess.run([require_tool("actionlint"), "-shellcheck", require_tool("shellcheck"), "-no-color"],
                          cwd=root, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.e2e
def test_actionlint_with_shellcheck_passes_on_every_workflow_and_on_the_actions_steps(tmp_path):
    workflows = {p.name: p.read_text() for p in WORKFLOWS}
    workflows["action-steps.yml"] = yaml.safe_dump(action_as_workflow(yaml.safe_load((REPO / "action.yml").read_text())),
                                                   sort_keys=False)
    done = _lint_project(tmp_path, workflows)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


LINTED = """name: x
on: pull_request
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./.github/actions/pairbench
        with:
          suite: bench
          fail_on: slower
      - run: pairbench history $changed
"""


@pytest.mark.e2e
def test_actionlint_here_checks_the_actions_inputs_and_runs_shellcheck(tmp_path):
    done = _lint_project(tmp_path, {"bad.yml": LINTED})
    assert 'input "fail_on" is not defined in action "pairbench"' in done.stdout
    assert "SC2086" in done.stdout


def test_the_examples_that_use_the_action_give_it_a_suite_or_a_command_or_record():
    uses = [step for p in WORKFLOWS for job in _documents(p)[0]["jobs"].values() for step in job["steps"]
            if str(step.get("uses", "")).endswith("actions/pairbench")]
    assert uses, "no example uses the Action"
    compared = [s for s in uses if s["with"].get("mode", "compare") == "compare"]
    assert all(("suite" in s["with"]) != ("command" in s["with"]) for s in compared)
    recorded = [s for s in uses if s["with"].get("mode") == "record"]
    assert len(recorded) >= 2 and not any("suite" in s["with"] or "command" in s["with"] for s in recorded)


def test_the_examples_record_only_on_pushes():
    for path in WORKFLOWS:
        workflow = _documents(path)[0]
        for job in workflow["jobs"].values():
            if any(s.get("with", {}).get("mode") == "record" for s in job["steps"]):
                triggers = workflow.get("on", workflow.get(True))
                assert job.get("if") == "github.event_name == 'push'" or list(triggers) == ["push"], path


@pytest.mark.e2e
def test_the_scripts_pass_shellcheck():
    scripts = sorted((REPO / "scripts").rglob("*.sh"))
    done = subprocess.run([require_tool("shellcheck"), *map(str, scripts)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout


# ------------------------------------------------------------------------------------ Kubernetes

@pytest.fixture(scope="module")
def k8scheck(tmp_path_factory) -> str:
    """The manifest checker, built from its Go modules (fetched by install-test-deps.sh)."""
    go = require_tool("go")
    target = tmp_path_factory.mktemp("k8scheck") / "k8scheck"
    done = subprocess.run([go, "build", "-o", str(target), "."], cwd=CHECKER, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "GOFLAGS": "-mod=readonly", "GOPROXY": "off"}, check=False)
    if done.returncode != 0:
        pytest.fail(f"building tests/examples/k8scheck failed (its modules come from scripts/install-test-deps.sh):\n"
                    f"{done.stderr[-2000:]}")
    return str(target)


def _decoded(k8scheck: str, path: Path) -> list[dict]:
    done = subprocess.run([k8scheck, str(path)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.e2e
def test_the_checker_refuses_a_misspelt_field_and_a_bad_quantity(k8scheck, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completionz: 4\n")
    done = subprocess.run([k8scheck, str(bad)], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and 'unknown field "completionz"' in done.stderr
    bad.write_text("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: x}\n"
                   "spec: {resources: {requests: {storage: lots}}}\n")
    assert subprocess.run([k8scheck, str(bad)], capture_output=True, check=False).returncode == 1


def _pod_specs(objects: list[dict]):
    for obj in objects:
        if obj["kind"] == "Job":
            yield obj, obj["spec"]["template"]["spec"]


@pytest.mark.e2e
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_a_manifest_decodes_strictly_and_its_volumes_and_claims_are_defined(k8scheck, path):
    objects = _decoded(k8scheck, path)
    claims = {o["metadata"]["name"]: o for o in objects if o["kind"] == "PersistentVolumeClaim"}
    for job, pod in _pod_specs(objects):
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for container in pod["containers"]:
            for mount in container.get("volumeMounts", []):
                assert mount["name"] in volumes, f"{job['metadata']['name']} mounts an undefined volume"
        for volume in volumes.values():
            claim = volume.get("persistentVolumeClaim", {}).get("claimName")
            if claim:
                assert claim in claims, f"{job['metadata']['name']}: claim {claim} is not defined"
                if job["spec"].get("parallelism", 1) > 1:  # pods on different nodes write to it
                    assert "ReadWriteMany" in claims[claim]["spec"]["accessModes"]


@pytest.mark.e2e
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_the_indexed_job_covers_its_shards_and_the_merge_waits_as_the_comment_says(k8scheck, path):
    objects = _decoded(k8scheck, path)
    jobs = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Job"}
    [indexed] = [j for j in jobs.values() if j["spec"].get("completionMode") == "Indexed"]
    count = indexed["spec"]["completions"]
    assert indexed["spec"]["parallelism"] == count
    script = " ".join(indexed["spec"]["template"]["spec"]["containers"][0]["args"])
    assert "JOB_COMPLETION_INDEX + 1" in script and f'--shard "$shard/{count}"' in script
    [merge] = [j for j in jobs.values() if "pairbench merge" in " ".join(j["spec"]["template"]["spec"]["containers"][0]["args"])]
    assert merge["spec"].get("suspend") is True, "nothing orders two Jobs: the merge must start suspended"
    comment = "\n".join(line for line in path.read_text().splitlines() if line.startswith("#"))
    named = re.findall(r"\b(cronjob|job)/([a-z0-9-]+)", comment)
    assert named and all(kind == "job" and name in jobs for kind, name in named), named
    wait = comment.index(f"kubectl wait --for=condition=complete --timeout=2h job/{indexed['metadata']['name']}")
    assert wait < comment.index(f"kubectl patch job/{merge['metadata']['name']}")
    assert '"suspend":false' in comment
