"""Run ``pairbench`` in-process and capture what it prints (shared by the CLI, report and doctor tests)."""

from __future__ import annotations

import io
from typing import NamedTuple

from pairbench import cli


class CliResult(NamedTuple):
    """Exit code and captured output; unpacks as ``code, out, err``."""

    code: int
    out: str
    err: str


def invoke(*args: str) -> CliResult:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(args), stdout=out, stderr=err, color=False)
    return CliResult(code, out.getvalue(), err.getvalue())
