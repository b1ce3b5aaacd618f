"""Run a composite GitHub Action's steps (``action.yml``) on this machine, as the runner would.

Each ``run:`` step runs as GitHub runs ``shell: bash`` (``bash --noprofile --norc -eo pipefail
FILE``) in the workspace, with the step's ``env:`` evaluated, and the files GitHub gives a step
(``GITHUB_OUTPUT``, ``GITHUB_PATH``, ``GITHUB_ENV``, ``GITHUB_STEP_SUMMARY``): outputs become
``steps.ID.outputs``, paths are put before ``PATH`` for the later steps. A ``uses:`` step (another
action, such as actions/upload-artifact) is not run: it is recorded with its ``with:`` evaluated.

Expressions are the few the Action uses: ``inputs.X``, ``steps.ID.outputs.X``, ``github.X.Y``
(from a given context), string literals, ``==``, ``!=``, ``&&`` and ``always()``/``success()``.
Anything else raises ``UnsupportedExpression``, so a test never passes on an expression this
runner misread.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class UnsupportedExpression(Exception):
    """An expression this runner does not evaluate."""


@dataclass
class StepRun:
    """What one step did: its id, whether it ran, its exit status, output and outputs."""

    id: str
    name: str
    ran: bool
    code: int = 0
    output: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    uses: str = ""
    with_: dict[str, str] = field(default_factory=dict)


class CompositeAction:
    """One run of the action at ``action_path`` with ``inputs``, in ``workspace``."""

    def __init__(self, action_path: Path, workspace: Path, inputs: dict[str, str], github: dict, env: dict,
                 drop: tuple[list[str], int, int] | None = None):
        """``drop``: the command prefix that runs each step as another user, and that user's uid and
        gid (the step's files are made its own)."""
        self.action_path = action_path
        self.drop = drop
        self.spec = yaml.safe_load((action_path / "action.yml").read_text())
        assert self.spec["runs"]["using"] == "composite"
        self.workspace, self.github, self.env = workspace, github, dict(env)
        unknown = set(inputs) - set(self.spec.get("inputs", {}))
        assert not unknown, f"the action has no inputs {unknown}"
        self.inputs = inputs
        self.steps: dict[str, dict[str, str]] = {}
        self.paths: list[str] = []
        self.summary = ""
        self.failed = False

    # -------------------------------------------------------------------------- expressions
    def value(self, expression: str) -> str:
        """The value of one expression (without ``${{ }}``)."""
        parts = [p.strip() for p in expression.split("&&")]
        if len(parts) > 1:
            return "true" if all(self._truthy(self.value(p)) for p in parts) else ""
        compared = re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", expression)
        if compared:
            left, op, right = self.value(compared[1]), compared[2], self.value(compared[3])
            return "true" if (left == right) == (op == "==") else ""
        return self._operand(expression.strip())

    def _operand(self, text: str) -> str:
        if re.fullmatch(r"'[^']*'", text):
            return text[1:-1]
        if text in ("always()", "success()"):
            return "true" if text == "always()" or not self.failed else ""
        path = text.split(".")
        if path[0] == "inputs" and len(path) == 2:
            return self.input(path[1])
        if path[0] == "steps" and len(path) == 4 and path[2] == "outputs":
            return self.steps.get(path[1], {}).get(path[3], "")
        if path[0] == "github":
            found = self.github
            for key in path[1:]:
                found = found.get(key, "") if isinstance(found, dict) else ""
            return str(found)
        raise UnsupportedExpression(text)

    @staticmethod
    def _truthy(value: str) -> bool:
        return value not in ("", "false", "0")

    def render(self, text: str) -> str:
        """``text`` with every ``${{ }}`` replaced by its value."""
        return _EXPRESSION.sub(lambda m: self.value(m[1]), str(text))

    def input(self, name: str) -> str:
        if name in self.inputs:
            return self.inputs[name]
        declared = self.spec["inputs"].get(name)
        if declared is None:
            raise UnsupportedExpression(f"inputs.{name} is not declared")
        return self.render(declared.get("default", ""))

    # -------------------------------------------------------------------------- steps
    def run(self, skip: tuple[str, ...] = (), only: tuple[str, ...] = ()) -> list[StepRun]:
        """Run the steps in order (``skip``/``only`` by id; a skipped step's outputs may be given
        in ``self.steps`` beforehand)."""
        done = []
        for index, step in enumerate(self.spec["runs"]["steps"]):
            step_id = step.get("id", f"step{index}")
            if step_id in skip or (only and step_id not in only):
                continue
            done.append(self._step(step_id, step))
        return done

    def _step(self, step_id: str, step: dict) -> StepRun:
        condition = step.get("if", "success()")
        condition = _EXPRESSION.sub(lambda m: m[1], str(condition))
        if "always()" not in condition and "success()" not in condition:
            condition = f"success() && {condition}"
        if not self._truthy(self.value(condition)):
            return StepRun(step_id, step.get("name", ""), ran=False)
        if "uses" in step:
            return StepRun(step_id, step.get("name", ""), ran=True, uses=step["uses"],
                           with_={k: self.render(v) for k, v in step.get("with", {}).items()})
        assert step.get("shell") == "bash", f"step {step_id}: only shell: bash is run here"
        result = self._run_script(step_id, step)
        self.failed = self.failed or result.code != 0
        return result

    def _run_script(self, step_id: str, step: dict) -> StepRun:
        with tempfile.TemporaryDirectory(prefix="step-") as scratch:
            files = {name: Path(scratch) / name.lower() for name in
                     ("GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_ENV", "GITHUB_STEP_SUMMARY")}
            for file in files.values():
                file.touch()
            script = Path(scratch) / "script.sh"
            script.write_text(step["run"])
            prefix: list[str] = []
            if self.drop:
                prefix, uid, gid = self.drop
                for path in (Path(scratch), script, *files.values()):
                    os.chown(path, uid, gid)
            env = {**self.env, **{k: self.render(v) for k, v in step.get("env", {}).items()},
                   **{k: str(v) for k, v in files.items()}, "GITHUB_ACTION_PATH": str(self.action_path),
                   "GITHUB_WORKSPACE": str(self.workspace)}
            env["PATH"] = os.pathsep.join([*self.paths, env.get("PATH", "")])
            done = subprocess.run([*prefix, "bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                  cwd=self.workspace, env=env, capture_output=True, text=True, timeout=900,
                                  check=False)
            outputs = parse_output_file(files["GITHUB_OUTPUT"].read_text())
            self.steps[step_id] = outputs
            self.paths = [*reversed(files["GITHUB_PATH"].read_text().split()), *self.paths]
            self.summary += files["GITHUB_STEP_SUMMARY"].read_text()
        return StepRun(step_id, step.get("name", ""), ran=True, code=done.returncode,
                       output=done.stdout + done.stderr, outputs=outputs)


def parse_output_file(text: str) -> dict[str, str]:
    """``GITHUB_OUTPUT``'s ``name=value`` lines and ``name<<DELIMITER`` blocks."""
    outputs, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            for item in lines:
                if item == delimiter:
                    break
                block.append(item)
            outputs[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs
