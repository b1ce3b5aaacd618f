"""What a paired record costs against an unpaired record of the same rounds, builds aside.

In a generated repository of a C worker (``paired_history_study.py``'s ``step8``), with every build
already in the record's cache, alternates three commands, each a fresh ``pairbench`` process, for
``--repeat`` cycles in a random order per cycle:

* ``record-3``: ``pairbench record HEAD --against HEAD~1 --anchor HEAD~2 --anchor-every 1``: the commit,
  its predecessor and the anchor as three sides of the same rounds (a record that measures its anchor);
* ``record-2``: ``pairbench record HEAD --against HEAD~1``, a fresh store: two sides (the predecessor
  is the anchor, one comparison gives both links: a record that does not measure a separate anchor);
* ``unpaired``: ``pairbench bench BUILD --store``: the commit alone, as ``bench --store`` records it;

each with ``--runs N`` (the same rounds) and ``--sample-time``. Prints each command's seconds per
cycle and the ratios against ``unpaired`` measured in the same cycle. Run it under the timing lock:

    flock /work/timing.lock .venv/bin/python benchmarks/paired_record_cost.py --work /tmp/pbstudy
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired_history_study import repository  # noqa: E402


def _run(argv: list[str], cwd: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIRBENCH_")}
    began = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-800:]}")
    return time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True)
    parser.add_argument("--runs", type=int, default=896, help="rounds of every command (896: 14 blocks of 64)")
    parser.add_argument("--sample-time", default="500us")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args()
    root, _ = repository(Path(args.work), "c", "step8")
    pairbench = str(Path(sys.executable).parent / "pairbench")
    scratch = Path(tempfile.mkdtemp(prefix="record-cost-"))
    try:
        from pairbench import __file__ as package

        header = Path(package).parent / "worker" / "include"
        source = subprocess.run(["git", "show", "HEAD:bench.c"], cwd=root, capture_output=True, text=True,
                                check=True).stdout
        (scratch / "bench.c").write_text(source)
        subprocess.run(["cc", "-O2", f"-I{header}", "bench.c", "-o", "bench"], cwd=scratch, check=True)
        common = ["--runs", str(args.runs), "--sample-time", args.sample_time, "-q", "--seed", "1"]

        def store(name: str) -> str:
            path = scratch / f"{name}.db"
            path.unlink(missing_ok=True)
            return f"sqlite:///{path}"

        commands = {
            "record-3": lambda: [pairbench, "record", "HEAD", "--against", "HEAD~1", "--anchor", "HEAD~2",
                                 "--anchor-every", "1", "--branch", "cost", "--store", store("r3"), *common],
            "record-2": lambda: [pairbench, "record", "HEAD", "--against", "HEAD~1", "--branch", "cost",
                                 "--store", store("r2"), *common],
            "unpaired": lambda: [pairbench, "bench", str(scratch / "bench"), "--store", store("u"), *common],
        }
        for argv in commands.values():  # warm: the builds in the cache, the files in the page cache
            _run(argv(), root)
        rng = random.Random(args.seed)
        seconds: dict[str, list[float]] = {name: [] for name in commands}
        load = [Path("/proc/loadavg").read_text().split()[0]]
        for _ in range(args.repeat):
            order = list(commands)
            rng.shuffle(order)
            for name in order:
                seconds[name].append(_run(commands[name](), root))
        load.append(Path("/proc/loadavg").read_text().split()[0])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"runs {args.runs}, sample time {args.sample_time}, {args.repeat} cycles, load average {load[0]} before, "
          f"{load[1]} after\n")
    print("| cycle | record, 3 sides (s) | record, 2 sides (s) | unpaired bench (s) | 3 sides / unpaired | "
          "2 sides / unpaired |")
    print("|---|---|---|---|---|---|")
    for k in range(args.repeat):
        r3, r2, u = (seconds[n][k] for n in ("record-3", "record-2", "unpaired"))
        print(f"| {k + 1} | {r3:.2f} | {r2:.2f} | {u:.2f} | {r3 / u:.2f} | {r2 / u:.2f} |")
    ratio3 = np.array(seconds["record-3"]) / np.array(seconds["unpaired"])
    ratio2 = np.array(seconds["record-2"]) / np.array(seconds["unpaired"])
    print(f"\nmedian ratio: 3 sides {np.median(ratio3):.2f}, 2 sides {np.median(ratio2):.2f}; with the anchor "
          f"every 4th record: {np.median(0.25 * ratio3 + 0.75 * ratio2):.2f} on average")
    return 0


if __name__ == "__main__":
    sys.exit(main())
