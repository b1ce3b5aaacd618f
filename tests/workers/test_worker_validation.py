"""``pairbench bench`` validates each benchmark of a real C worker (built with ``pairbench.h``)
before measuring it: a body the compiler removed and memory kept by every iteration are noted for
their benchmark; a clean body is not."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_runner import invoke

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parents[1] / "src" / "pairbench" / "worker" / "include"


@pytest.fixture(scope="module")
def probes(tmp_path_factory) -> Path:
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (cc) on this machine")
    out = tmp_path_factory.mktemp("validation") / "probes"
    subprocess.run([cc, "-O2", "-std=c11", f"-I{INCLUDE}", str(HERE / "validation_probes.c"), "-o", str(out)],
                   check=True, capture_output=True, timeout=120)
    return out


def test_an_elided_body_and_a_leak_are_noted_for_their_benchmarks_and_a_clean_one_is_not(probes, tmp_path):
    result = tmp_path / "r.json"
    code, out, err = invoke("bench", "--max-time", "1s", "--runs", "16", "--seed", "3", "-q",
                            "--json", str(result), str(probes))
    assert code == 0, err
    document = json.loads(result.read_text())
    flagged = {(n["code"], n["subject"]["benchmark"]) for n in document["analysis_notes"]
               if n["code"].startswith("benchmark-")}
    assert flagged == {("benchmark-elided-body", "elided"), ("benchmark-memory-growth", "leaky")}
    assert "elided · " in out and "pairbench_keep()" in out
    leak = next(n for n in document["analysis_notes"] if n["code"] == "benchmark-memory-growth")
    assert leak["data"]["per_iteration_bytes"] == pytest.approx(1024, rel=0.25)
