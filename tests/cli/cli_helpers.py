"""Run ``pairbench`` in-process and capture what it prints (shared by the CLI tests)."""

from __future__ import annotations

import io
from dataclasses import dataclass

from pairbench import cli


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def invoke(*args: str) -> CliResult:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(args), stdout=out, stderr=err, color=False)
    return CliResult(code, out.getvalue(), err.getvalue())
