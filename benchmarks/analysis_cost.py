"""CPU time of one ``analysis.analyse`` call on a compare's samples, for two source trees side by side.

    .venv/bin/python benchmarks/analysis_cost.py --source before=DIR --source after=DIR
        [--sizes 30 200] [--commands 20ms 0.7ms] [--rounds 6] [--repeats 40]

``DIR`` is a tree's ``src`` folder (``git -C /work/main archive main src | tar -x -C /tmp/x``
gives ``/tmp/x/src``). Each measurement runs in its own process with ``PYTHONPATH=DIR``, the
trees alternating (before, after, before, ...) ``--rounds`` times, so that both meet the same
load. The inputs are fixed and seeded: a two-command compare (``synthetic_results``) of lognormal
timings, paired (each round's shared factor moves both sides), the candidate 0.5% slower, of 30
and of 200 rounds, of a 20 ms command and of a 0.7 ms one whose CPU times tie (``COMMANDS_NS``).

A process (one per tree, size and round) builds the run, loads what a measuring command loads
beside its warm-up rounds (``cli.measuring.load_what_follows_the_samples``, from the bytecode
``compileall`` writes first), times its first ``analyse`` call (``first``: what a compare pays
after its last sample), then ``--repeats`` more, each after clearing every
``functools`` cache in ``pairbench`` so that none carries a table over from the call before
(``steady``: the median), and the terminal report of the result (its first render, and the
median of as many more). CPU time is ``time.process_time``. Prints one Markdown row per
tree and case: the medians over the rounds' processes, and after/before ratios. Time it under
``flock /work/timing.lock``: its figures depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

SEED = 2026
KINDS = ("first", "steady", "render_first", "render")
COMMANDS_NS = {"20ms": 20e6, "0.7ms": 0.7e6}
"""The commands' typical times: a 20 ms command (the start-up goal's), and a 0.7 ms one whose CPU
times, in rusage's whole microseconds, tie (the rank statistics then take their tie routes)."""


def synthetic_run(n: int, command: str = "20ms"):
    """A complete two-command compare of ``n`` rounds: paired lognormal timings, candidate +0.5%,
    CPU times in whole microseconds as rusage gives them."""
    from synthetic_results import synthetic_columns, synthetic_compare

    command_ns = COMMANDS_NS[command]
    rng = np.random.default_rng(SEED + n + int(command_ns))
    shared = rng.lognormal(0.0, 0.03, n)  # what a round's load does to both commands
    columns = []
    for i in range(2):
        wall = command_ns * (1.0 + 0.005 * i) * shared * rng.lognormal(0.0, 0.02, n)
        user, sys_ = (1000 * np.rint(share * wall * rng.lognormal(0.0, 0.01, n) / 1000) for share in (0.9, 0.05))
        columns.append(synthetic_columns(wall, rng, start_ns=(np.arange(n) * 2 * command_ns).astype(np.int64),
                                         seq=2 * np.arange(n) + i, slot=rng.integers(0, 2, n),
                                         user_ns=user.astype(np.int64), sys_ns=sys_.astype(np.int64)))
    return synthetic_compare(["baseline", "candidate"], columns, "2026-11-30T00:00:00Z", "2026-11-30T00:01:00Z")


def clear_caches() -> None:
    """Empty every ``functools`` cache of every loaded pairbench module, as in a fresh process."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("pairbench") or module is None:
            continue
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def worker(n: int, command: str, repeats: int) -> dict:
    """Times of ``n`` rounds' analysis in this process, in ms of CPU, and where pairbench came from."""
    import pairbench
    from pairbench.analysis import analyse

    run = synthetic_run(n, command)
    preload(run)
    start = time.process_time()
    analyse(run)
    first = time.process_time() - start
    steady = []
    for _ in range(repeats):
        clear_caches()
        start = time.process_time()
        analyse(run)
        steady.append(time.process_time() - start)
    render_first, render = render_cost(run, analyse(run), repeats)
    return {"pairbench": os.path.dirname(pairbench.__file__), "first": 1e3 * first,
            "steady": 1e3 * statistics.median(steady), "render_first": render_first, "render": render}


def preload(run) -> None:
    """Load what a measuring command loads beside its warm-up rounds (``cli.measuring``), so that the
    first call costs what it costs after a compare's last sample."""
    from pairbench.cli.measuring import load_what_follows_the_samples

    load_what_follows_the_samples(run.settings)


def render_cost(run, analysis, repeats: int) -> tuple[float, float]:
    """ms of CPU of the terminal report of ``run``: its first render, and the median of as many more."""
    from pairbench.report import text

    start = time.process_time()
    render = text.renderer(run, analysis)
    render(run, analysis, color=False)
    first = time.process_time() - start
    times = []
    for _ in range(repeats):
        start = time.process_time()
        render(run, analysis, color=False)
        times.append(time.process_time() - start)
    return 1e3 * first, 1e3 * statistics.median(times)


def measure(sources: list[tuple[str, str]], cases: list[tuple[str, int]], rounds: int, repeats: int) -> dict:
    """{label: {case: {"first": [ms per process], "steady": [ms per process]}}}, trees alternating."""
    # imported here: overhead imports pairbench, which the workers must not have loaded before they time
    from overhead import compile_package

    found = {label: {case: {kind: [] for kind in KINDS} for case in cases} for label, _ in sources}
    for _, tree in sources:  # bytecode as an installed package has it, also under PYTHONDONTWRITEBYTECODE
        compile_package(tree)
    for _ in range(rounds):
        for command, n in cases:
            for label, tree in sources:
                env = dict(os.environ, PYTHONPATH=tree)
                done = subprocess.run([sys.executable, __file__, "--worker", "--sizes", str(n), "--commands",
                                       command, "--repeats", str(repeats)],
                                      env=env, check=True, capture_output=True, text=True)
                got = json.loads(done.stdout)
                if os.path.realpath(got["pairbench"]) != os.path.realpath(os.path.join(tree, "pairbench")):
                    raise SystemExit(f"{label}: imported pairbench from {got['pairbench']}, not from {tree}")
                for kind in KINDS:
                    found[label][command, n][kind].append(got[kind])
    return found


def table(found: dict, cases: list[tuple[str, int]]) -> str:
    labels = list(found)
    rows = ["| tree | command | rounds | first call (ms CPU) | steady call (ms CPU) | first report (ms CPU) "
            "| steady report (ms CPU) |", "|---|---|---|---|---|---|---|"]
    for case in cases:
        medians = {label: [statistics.median(found[label][case][k]) for k in KINDS] for label in labels}
        for label in labels:
            rows.append(f"| {label} | {case[0]} | {case[1]} | " + " | ".join(f"{v:.1f}" for v in medians[label]) + " |")
        if len(labels) == 2:
            ratios = (b / a for a, b in zip(*medians.values(), strict=True))
            rows.append(f"| {labels[1]} / {labels[0]} | {case[0]} | {case[1]} | "
                        + " | ".join(f"{r:.2f}" for r in ratios) + " |")
    return "\n".join(rows)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", action="append", default=[], metavar="LABEL=DIR",
                        help="a tree's src folder to measure (give two to compare them)")
    parser.add_argument("--sizes", nargs="+", type=int, default=[30, 200], help="rounds per compare")
    parser.add_argument("--commands", nargs="+", choices=list(COMMANDS_NS), default=list(COMMANDS_NS),
                        help="the commands' typical times")
    parser.add_argument("--rounds", type=int, default=6, help="processes per tree (alternating)")
    parser.add_argument("--repeats", type=int, default=40, help="steady calls per process")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.sizes[0], args.commands[0], args.repeats)))
        return
    sources = [tuple(s.split("=", 1)) for s in args.source]
    if not sources or any(len(s) != 2 or not os.path.isdir(s[1]) for s in sources):
        raise SystemExit("give each tree as --source LABEL=DIR, DIR an existing src folder")
    cases = [(command, n) for command in args.commands for n in args.sizes]
    print(table(measure(sources, cases, args.rounds, args.repeats), cases))


if __name__ == "__main__":
    main(sys.argv[1:])
