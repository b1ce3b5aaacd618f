"""``pairbench merge``: shards of one suite are joined, and anything that makes them not belong
together is refused before anything is written, naming the file and what differs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from cli_runner import invoke
from runs import make_run, series, side

from pairbench.model import BenchmarkKey
from pairbench.store import shards
from pairbench.store.merge import Shard, merge
from pairbench.store.resultfile import read_result, write_result

SUITE = ["BM_a", "BM_b", "BM_c"]


def shard_run(k: int, n: int = 2, names=SUITE, **options):
    mine = shards.select(names, k, n)
    rng = np.random.default_rng(k)
    samples = {}
    for b, _ in enumerate(mine):
        base = 1000 + rng.normal(0, 5, 40)
        samples[(b, 0)] = series(base, start_seq=80 * b, stride=2)
        samples[(b, 1)] = series(base * 1.2, start_seq=80 * b + 1, stride=2)
    run = make_run("bench", [side("old", "baseline"), side("new", "candidate")], samples,
                   benchmarks=[BenchmarkKey(m) for m in mine], shard=f"{k}/{n}", **options)
    return run.replace(suite=shards.suite_record(names, (k, n), "gbench"),
                       environment={"host": f"ci-{k}"})


def write(tmp_path, name: str, run) -> str:
    path = tmp_path / name
    write_result(run, path)
    return str(path)


def test_shards_join_into_one_suite_with_every_benchmark_and_distinct_sample_order(tmp_path):
    paths = [write(tmp_path, f"s{k}.json", shard_run(k)) for k in (2, 1)]
    out = tmp_path / "suite.json"
    code, text, err = invoke("merge", "--json", str(out), *paths)
    assert code == 0, err
    run = read_result(out)
    assert sorted(k.label for k in run.benchmarks) == SUITE
    assert run.suite.merged == (1, 2) and [m["host"] for m in run.suite.shards] == ["ci-1", "ci-2"]
    seqs = np.concatenate([s["seq"] for s in run.samples.values()])
    assert len(seqs) == len(set(seqs.tolist()))
    assert run.settings.workers.shard is None
    assert "Merged from 2 shards of a suite of 3 benchmarks" in text and "Holm" in text


def test_a_file_that_is_no_shard_is_refused():
    whole = shard_run(1).replace(suite=shards.suite_record(SUITE, None, "gbench"))
    with pytest.raises(Exception, match="not a shard of a suite"):
        merge([Shard("whole.json", whole), Shard("s2.json", shard_run(2))])


@pytest.mark.parametrize(("other", "problem"), [
    (lambda: shard_run(2, names=[*SUITE, "BM_d"]), "are shards of different suites (4 and 3 benchmarks"),
    (lambda: shard_run(2, n=3), "split the suite into different numbers of shards (3 and 2)"),
    (lambda: shard_run(2, alpha=0.05), "different settings (decision.alpha: 0.05 and 0.01)"),
    (lambda: shard_run(2).replace(tool_version="9.9.9"), "different pairbench versions (9.9.9 and 0.2.0)"),
    (lambda: shard_run(2).replace(sides=(side("old", "baseline"), side("newer", "candidate"))),
     "compare different sides"),
    (lambda: shard_run(1), "are both shard 1 of 2"),
])
def test_shards_that_do_not_belong_together_are_refused_naming_the_files_and_the_difference(other, problem):
    with pytest.raises(Exception) as error:
        merge([Shard("s1.json", shard_run(1)), Shard("other.json", other())])
    assert problem in str(error.value) and "other.json" in str(error.value)


def test_a_missing_shard_is_refused_naming_it(tmp_path):
    paths = [write(tmp_path, f"s{k}.json", shard_run(k, n=3)) for k in (1, 3)]
    code, _, err = invoke("merge", "--json", str(tmp_path / "suite.json"), *paths)
    assert code == 2 and "shard 2 of 3 is missing" in err and not (tmp_path / "suite.json").exists()


def test_the_seed_and_the_balance_may_differ_between_shards():
    other = shard_run(2)
    workers = dataclasses.replace(other.settings.workers, balance="earlier.json")
    sampling = dataclasses.replace(other.settings.sampling, seed=99)
    other = other.replace(settings=dataclasses.replace(other.settings, workers=workers, sampling=sampling))
    assert len(merge([Shard("s1.json", shard_run(1)), Shard("s2.json", other)]).benchmarks) == 3
