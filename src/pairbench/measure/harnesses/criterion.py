"""criterion.rs: bench binaries built by ``cargo bench --no-run`` (``target/release/deps/NAME-HASH``).

Listing: ``--bench --list`` prints ``ID: benchmark`` lines. An invocation runs
one benchmark (``--bench --exact ... -- ID``: after ``--``, so an id that starts
with ``-`` is not read as an option) with a short warm-up and measurement
time (half of ``--sample-time`` and ``--sample-time``), the fewest samples
criterion takes (10), few bootstrap resamples (its analysis is not used) and
no plots, with ``CRITERION_HOME`` set to a directory of ours, where criterion
saves what it measured. criterion has no option for an iteration count: it
chooses one from its warm-up, by the same rule on both sides, and each sample
records the count it ran.

Read from the saved files (``read_saved``, also used by ``pairbench import``):
``new/benchmark.json`` (the benchmark's id), ``new/sample.json`` (each of
criterion's samples: iterations and total time) and ``new/estimates.json``.
A pairbench sample is one invocation: criterion's own estimate of one
iteration (the slope of time on iterations for linear sampling, else the mean)
times all the iterations it ran.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

from pairbench.measure.harnesses.base import (
    Discovery,
    DiscoveryError,
    FormatError,
    Invocation,
    NoResult,
    Program,
    Report,
    capture,
    cleared,
    count,
    finite_number,
    listed_names,
    load_json,
    numbered_lines,
    read_bounded,
    total_ns,
)
from pairbench.model import MAX_SAMPLE_VALUE

NAME = "criterion"
MAX_SAVED = 100_000  # benchmark directories looked at in a CRITERION_HOME (or an imported target/criterion)
SAMPLES = 10  # the fewest criterion takes


class Criterion:
    """The adapter of criterion bench binaries."""

    name = NAME

    def discover(self, program: Program, scratch: Path, timeout_s: float | None) -> Discovery:
        listed = capture(program.command("--bench", "--list"), timeout_s=timeout_s)
        if listed.status != 0:
            raise DiscoveryError(listed.failure("listing its benchmarks (--bench --list)"))
        return Discovery(listed_names(_ids(listed.text()), NAME), explicit_iterations=False)

    def invocation(self, program: Program, name: str, iterations: int | None, sample_time_ns: int,
                   scratch: Path) -> Invocation:
        home = cleared(scratch / "criterion")
        seconds = sample_time_ns / 1e9
        env = dataclasses.replace(program, env=(*program.env, ("CRITERION_HOME", str(home))))
        options = ("--bench", "--exact", "--noplot", "--warm-up-time", f"{seconds / 2:.9g}",
                   "--measurement-time", f"{seconds:.9g}", "--sample-size", str(SAMPLES),
                   "--nresamples", "1000", "--", name)  # after "--": an id such as "--quiet" is no option
        return Invocation(env.command(*options, text=f"{program.text} --bench --exact {name}"), name, None, home)

    def read(self, invocation: Invocation, output: bytes) -> Report:
        home = invocation.result_path
        saved = {r.name: r for r in read_saved(home)} if home is not None and home.is_dir() else {}
        if invocation.benchmark not in saved:
            raise NoResult(NAME, str(home), f"criterion saved no result for {invocation.benchmark!r} "
                           "(--exact matched no benchmark)")
        return saved[invocation.benchmark]


def _ids(listing: str):
    """The benchmark ids of a ``--bench --list`` output (``ID: benchmark`` lines)."""
    for number, line in numbered_lines(listing):
        if not line.strip():
            continue
        name, sep, kind = line.rpartition(": ")
        if not sep or kind.strip() != "benchmark":
            raise DiscoveryError(f"line {number} of its --bench --list output is not \"ID: benchmark\": "
                                 f"{line[:200]!r} (criterion 0.4 to 0.7 print that format)")
        yield name


def saved_benchmarks(root: Path) -> list[Path]:
    """Every ``new/`` directory holding a ``benchmark.json`` under ``root`` (a CRITERION_HOME,
    ``target/criterion``, or one benchmark's directory), in path order, at most ``MAX_SAVED``."""
    found = []
    for directory, subdirectories, files in os.walk(root, followlinks=False):
        subdirectories.sort()
        if Path(directory).name == "new" and "benchmark.json" in files:
            found.append(Path(directory))
            if len(found) > MAX_SAVED:
                raise FormatError(NAME, str(root), f"more than {MAX_SAVED} saved benchmarks")
    return found


def read_saved(root: Path) -> list[Report]:
    """The report of every benchmark saved under ``root`` (its samples summed into one)."""
    return [read_one(new) for new in saved_benchmarks(root)]


def read_one(new: Path) -> Report:
    """One benchmark from its ``new/`` directory: the id from ``benchmark.json``, the iterations from
    ``sample.json``, the per-iteration estimate from ``estimates.json``."""
    meta = _json(new / "benchmark.json")
    name = meta.get("full_id") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not name:
        raise FormatError(NAME, str(new / "benchmark.json"), "no \"full_id\" string")
    iters, _ = sample_arrays(new / "sample.json")
    estimates = _json(new / "estimates.json")
    per_iteration = typical_estimate(estimates, str(new / "estimates.json"))
    total_iterations = count(int(round(math.fsum(iters))), NAME, str(new / "sample.json"), "the sum of \"iters\"")
    return Report(name, total_iterations, total_ns(per_iteration, total_iterations, NAME, str(new / "estimates.json"),
                                                   f"{name!r}: the estimate"), {"samples": float(len(iters))})


def sample_arrays(path: Path) -> tuple[list[float], list[float]]:
    """``iters`` and ``times`` (ns, the total of each of criterion's samples) of a ``sample.json``."""
    sample = _json(path)
    if not isinstance(sample, dict):
        raise FormatError(NAME, str(path), "not an object")
    iters, times = sample.get("iters"), sample.get("times")
    if not isinstance(iters, list) or not isinstance(times, list) or len(iters) != len(times) or not iters:
        raise FormatError(NAME, str(path), "\"iters\" and \"times\" must be lists of one length, not empty "
                          "(criterion 0.3 to 0.7 save them so)")
    iters = [finite_number(v, NAME, str(path), f"iters[{i}]") for i, v in enumerate(iters)]
    times = [finite_number(v, NAME, str(path), f"times[{i}]") for i, v in enumerate(times)]
    if min(iters) < 1 or min(times) <= 0:
        raise FormatError(NAME, str(path), "a sample with no iterations or no time")
    if max(iters) > MAX_SAMPLE_VALUE or math.fsum(iters) > MAX_SAMPLE_VALUE or max(times) > MAX_SAMPLE_VALUE:
        raise FormatError(NAME, str(path), "a sample's iterations (or all of them) or its time beyond 2**53 - 1")
    return iters, times


def typical_estimate(estimates, source: str) -> float:
    """criterion's estimate of one iteration, ns: the slope (linear sampling), else the mean."""
    if not isinstance(estimates, dict):
        raise FormatError(NAME, source, "not an object")
    for key in ("slope", "mean"):
        entry = estimates.get(key)
        if isinstance(entry, dict) and "point_estimate" in entry:
            value = finite_number(entry["point_estimate"], NAME, source, f"{key}.point_estimate")
            if value > 0:
                return value
    raise FormatError(NAME, source, "no positive \"slope\" or \"mean\" point_estimate")


def _json(path: Path):
    return load_json(read_bounded(path, NAME), NAME, str(path))
