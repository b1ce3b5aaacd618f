"""Workers that say what the protocol allows, or nearly: each answer is judged as the protocol says,
and what a worker got wrong stays that benchmark's failure (the red-team audit of 2026-11-26).

The workers are small Python scripts written per test: they stand for a worker in any language, and
import nothing of pairbench."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import invoke

from pairbench.command import Execution
from pairbench.worker import protocol

pytestmark = pytest.mark.e2e

WORKER = r'''#!/usr/bin/env python3
import os, sys
r, w = map(int, os.environ.pop("PAIRBENCH_WORKER_FDS").split(","))
f, o = os.fdopen(r), os.fdopen(w, "w", buffering=1)
NAMES = {names!r}
REPLY = {reply!r}  # name -> (after this many samples of it, in any process, the reply)
o.write("pairbench-worker 1\n")
for line in f:
    words = line.split()
    if words[0] == "list":
        o.write("benchmarks %d\n" % len(NAMES) + "".join("benchmark %s\n" % n for n in NAMES))
    elif words[0] == "run":
        after, odd = REPLY.get(words[1], (None, None))
        counter = sys.argv[0] + "." + words[1] + ".count"
        count = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
        open(counter, "w").write(str(count))
        o.write(odd if after is not None and count > after else "ok ns=%d\n" % (1000 * int(words[2])))
    else:
        break
'''


def worker(tmp_path: Path, name: str, names: list[str], reply: dict[str, tuple[int, str]] | None = None) -> str:
    """A worker listing ``names``; ``reply[name] = (after, line)`` answers ``line`` to every sample of
    that benchmark after the first ``after`` (counted over its processes), else 1 us per iteration."""
    path = tmp_path / name
    path.write_text(WORKER.format(names=names, reply=reply or {}))
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("name", ["a\x9bb", "nel\x85", "bidi\u202eb", "lrm\u200e", "sep\u2028x"])
def test_a_name_holding_a_c1_or_bidirectional_control_breaks_the_protocol(name):
    with pytest.raises(protocol.ProtocolError, match="control character"):
        protocol.parse_listed(f"benchmark {name}")


def test_a_worker_listing_a_c1_control_in_a_name_fails_to_start_with_the_name_made_visible(tmp_path):
    code, out, err = invoke("bench", worker(tmp_path, "w", ["ok", "csi\x9b31m"]), "--runs", "8", "-q",
                            "--no-store")
    assert code == 3, err
    assert "control character" in err and "\x9b" not in err and "\x9b" not in out


def test_a_worker_reporting_ns_0_fails_that_benchmark_and_the_others_and_the_result_survive(tmp_path):
    """The audit's G10: the protocol allows ns=0, and a 0 on the candidate crashed the stopping rule
    (exit 70), leaving a journal that show refused."""
    result = tmp_path / "r.json"
    base = worker(tmp_path, "base", ["zero", "fine"])
    cand = worker(tmp_path, "cand", ["zero", "fine"], {"zero": (0, "ok ns=0\n")})
    code, _, err = invoke("bench", base, cand, "--runs", "8", "--seed", "1", "-q", "--no-store", "--json", str(result))
    assert code == 3, err
    assert "'zero'" in err and "0 ns" in err and "internal error" not in err
    assert not (tmp_path / "r.json.partial").exists()
    shown = invoke("show", str(result))
    assert shown.code == 0, shown.err
    document = json.loads(result.read_text())
    assert {document["benchmarks"][s["benchmark"]]["name"] for s in document["series"]} >= {"fine"}


@pytest.mark.parametrize("reply", ["ok ns=0\n", "error late\n"])
def test_a_sample_failing_during_the_rounds_is_kept_with_a_positive_duration(tmp_path, reply):
    """A failure after the pilot and validation is a failed sample of the rounds: stored with the time
    it took to fail (at least 1 ns), so the result can be read again (it was stored as 0 ns)."""
    result = tmp_path / "r.json"
    base = worker(tmp_path, "base", ["b"])
    cand = worker(tmp_path, "cand", ["b"], {"b": (60, reply)})
    code, _, err = invoke("bench", base, cand, "--runs", "50", "--seed", "1", "-q", "--no-store",
                          "--json", str(result))
    assert code == 3 and "failed on sample" in err, err
    shown = invoke("show", str(result))
    assert shown.code == 0, shown.err
    document = json.loads(result.read_text())
    failed = [w for s in document["series"] for w, st in zip(s["samples"]["wall_ns"], s["samples"]["status"],
                                                                strict=True) if st != 0]
    assert failed and min(failed) >= 1


def test_unknown_fields_of_the_documented_form_are_ignored_and_other_keys_break_the_protocol():
    assert protocol.parse_reply("ok ns=5 later_field2=3") == Execution(wall_ns=5, start_ns=0)
    with pytest.raises(protocol.ProtocolError, match="KEY=VALUE"):
        protocol.parse_reply("ok ns=5 Upper=2")
