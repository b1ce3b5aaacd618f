"""Reading what a measuring command stored, as other tools read it (tests' shorthand)."""

from __future__ import annotations

import json
from pathlib import Path

from pairbench.model import Samples
from pairbench.store.resultfile import read_result


def comparisons(path) -> list[dict]:
    """The comparisons a result document holds for other tools (never read back by pairbench)."""
    return json.loads(Path(path).read_text())["comparisons"]


def side_samples(path_or_run, side: int = 0) -> Samples:
    """The samples of side ``side`` (benchmark 0) of the run stored at ``path`` (or of a run)."""
    run = read_result(path_or_run) if isinstance(path_or_run, (str, Path)) else path_or_run
    return run.series(0, side)


def total_samples(path_or_run) -> int:
    run = read_result(path_or_run) if isinstance(path_or_run, (str, Path)) else path_or_run
    return sum(len(s) for _, _, s in run.all_series())
