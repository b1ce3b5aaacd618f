"""The CI examples call pairbench as it is: every option a ``pairbench`` command of theirs gives
(in a workflow's ``run:`` scripts, a manifest's container arguments, or the Action's ``options``
input) is one that command has; the store's URL reaches pairbench only through the environment,
from a secret; and the shards of a sharded example cover the suite once."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml
from cli_runner import invoke

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (REPO / "examples").rglob("*") if p.suffix in (".yml", ".yaml"))
_INVOCATION = re.compile(r"(?:^|[;&|(])\s*pairbench ([a-z][a-z-]*)((?: [^;|&\n>)]*)?)", re.MULTILINE)


def _scripts(path: Path) -> list[str]:
    """The shell scripts of a workflow's steps, or of a manifest's containers."""
    found = []
    for doc in yaml.safe_load_all(path.read_text()):
        for job in (doc.get("jobs") or {}).values():
            found += [step["run"] for step in job.get("steps", []) if "run" in step]
        template = (doc.get("spec") or {}).get("template", {}).get("spec", {})
        found += [" ".join(c.get("args", [])) for c in template.get("containers", [])]
    return found


def _action_steps(path: Path) -> list[dict]:
    docs = list(yaml.safe_load_all(path.read_text()))
    return [step for doc in docs for job in (doc.get("jobs") or {}).values() for step in job.get("steps", [])
            if str(step.get("uses", "")).endswith("actions/pairbench")]


def invocations(path: Path) -> list[tuple[str, list[str]]]:
    """Each ``pairbench COMMAND ...`` of the example: the command, and its words up to ``--``."""
    found = []
    for script in _scripts(path):
        joined = re.sub(r"\\\n\s*", " ", script)
        for command, rest in _INVOCATION.findall(joined):
            words = rest.split()
            found.append((command, words[:words.index("--")] if "--" in words else words))
    for step in _action_steps(path):  # the Action's build input is a bash script too
        found += [(command, rest.split()) for command, rest in _INVOCATION.findall(str(step["with"].get("build", "")))]
        command = "record" if step["with"].get("mode") == "record" else "bench" if "suite" in step["with"] else "compare"
        found.append((command, shlex.split(str(step["with"].get("options", "")))))
    return found


CASES = [(p, command, words) for p in EXAMPLES for command, words in invocations(p)]


@pytest.mark.parametrize("path, command, words", CASES,
                         ids=[f"{p.name}:{c}:{i}" for i, (p, c, _) in enumerate(CASES)])
def test_every_option_an_example_gives_pairbench_is_an_option_of_its_command(path, command, words):
    code, help_text, err = invoke(command, "--help")
    assert code == 0, f"{path.name}: pairbench has no command {command}: {err}"
    for option in (w.split("=")[0] for w in words if w.startswith("--")):
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_text), \
            f"{path.name}: pairbench {command} has no {option}"


def test_the_examples_run_the_commands_a_ci_needs():
    commands = {c for _, c, _ in CASES}
    assert commands >= {"bench", "history", "include-dir", "merge", "record", "report"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_store_url_reaches_pairbench_only_from_a_secret_in_the_environment(path):
    text = path.read_text()
    assert "--store" not in " ".join(_scripts(path)), f"{path.name}: a store URL on a command line"
    for value in re.findall(r"PAIRBENCH_STORE: (.*)", text.split("# Trying it")[0]):  # a SQLite file is no secret
        assert re.fullmatch(r"\$\{\{ secrets\.[A-Z_]+ \}\}|sqlite:///[^\s@]+", value.strip()), value
    uncommented = "\n".join(line.split(" #")[0] for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert not re.search(r"postgres(?:ql)?://[^\s@/]*:[^\s@/]*@", uncommented)


def test_a_sharded_workflows_matrix_covers_its_shards():
    sharded = [p for p in EXAMPLES if "matrix" in p.read_text()]
    assert sharded
    for path in sharded:
        doc = yaml.safe_load(path.read_text())
        count = int(doc["env"]["SHARDS"])
        assert doc["jobs"]["bench"]["strategy"]["matrix"]["shard"] == list(range(1, count + 1))
        assert '--shard "$SHARD/$SHARDS"' in " ".join(_scripts(path))
