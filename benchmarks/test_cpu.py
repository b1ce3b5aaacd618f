"""Where the test suite's CPU time goes: per test, per file and per directory, children included.

A pytest plugin and its summary. Loaded into a run of one tests/ directory, the plugin writes, for
every test, the CPU time (user + system) its process spent and that of the children it waited for
(a pairbench in a subprocess, a harness build, pip) from its setup to its teardown, and its wall
time, one JSON line per test, a file per xdist worker. Session-scoped builds and servers count
towards the first test that uses them. CPU time, not wall time: on this shared machine the load
stretches wall times several-fold, while the CPU a test costs moves little::

    PYTHONPATH=benchmarks CPU_PER_TEST=benchmarks/out/test_cpu/cli \\
        /usr/bin/time -f "wall %e user %U sys %S" .venv/bin/python -m pytest -q -p no:cacheprovider \\
        -p test_cpu -n 2 tests/cli
    .venv/bin/python benchmarks/test_cpu.py benchmarks/out/test_cpu/cli [--top 20]

``/usr/bin/time``'s user + sys is the directory's whole cost (collection and xdist included);
the summary's is the tests' own. Figures: benchmarks/results/test_suite.md.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import resource
import sys
import time

import pytest


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    own, children = _cpu()
    started = time.perf_counter()
    yield
    own_after, children_after = _cpu()
    prefix = os.environ.get("CPU_PER_TEST", "test_cpu")
    with open(f"{prefix}.{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a") as out:
        out.write(json.dumps({"id": item.nodeid, "self": own_after - own, "children": children_after - children,
                              "wall": time.perf_counter() - started}) + "\n")


def summary(prefix: str, top: int) -> str:
    rows = []
    for name in glob.glob(f"{prefix}.*.jsonl"):
        with open(name) as lines:
            rows += [json.loads(line) for line in lines]
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for row in rows:
        totals = files[row["id"].split("::")[0]]
        totals[0] += row["self"]
        totals[1] += row["children"]
        totals[2] += row["wall"]
        totals[3] += 1
    lines = [f"{len(rows)} tests: {sum(r['self'] + r['children'] for r in rows):.1f} s of CPU "
             f"({sum(r['children'] for r in rows):.1f} s in children), {sum(r['wall'] for r in rows):.1f} s of wall",
             "", "| file | tests | CPU (s) | of which children | wall (s) |", "|---|---|---|---|---|"]
    for name, (own, children, wall, count) in sorted(files.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        lines.append(f"| `{name}` | {count} | {own + children:.1f} | {children:.1f} | {wall:.1f} |")
    lines += ["", "| test | CPU (s) | wall (s) |", "|---|---|---|"]
    for row in sorted(rows, key=lambda r: -(r["self"] + r["children"]))[:top]:
        lines.append(f"| `{row['id']}` | {row['self'] + row['children']:.1f} | {row['wall']:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefix", help="the CPU_PER_TEST prefix the run wrote under")
    parser.add_argument("--top", type=int, default=15, help="how many files and tests to list")
    args = parser.parse_args(argv)
    print(summary(args.prefix, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
