"""A worker speaking the worker protocol, for tests: spin-loop benchmarks and chosen misbehaviour.

Run as ``python protocol_worker.py [--slow NAME=FACTOR] [--misbehave NAME=HOW] [--only N,..]
[--fixed NAME=NS] [--leak NAME=BYTES]``. ``--fixed`` adds a busy wait of NS nanoseconds to every
sample, inside its timing (a setup in the timed loop); ``--leak`` keeps BYTES of new memory per
iteration. HOW is one of: error (an ``error`` reply), crash (SIGSEGV), exit (exit 3), hang (never answers),
garbage, huge (a line over the limit), truncated (half a reply, then exit). The standard library
only, and no pairbench import: it stands for a worker in any language.
"""

import os
import signal
import sys
import time

BENCHMARKS = {"spin[n=200]": 200, "spin[n=2000]": 2000, "add": 20}


def spin(n):
    total = 0
    for i in range(n):
        total += i
    return total


KEPT = []


def options(argv):
    slow, misbehave, only, fixed, leak = {}, {}, None, {}, {}
    for i, arg in enumerate(argv):
        if arg in ("--slow", "--fixed", "--leak"):
            name, amount = argv[i + 1].rsplit("=", 1)
            {"--slow": slow, "--fixed": fixed, "--leak": leak}[arg][name] = float(amount)
        elif arg == "--misbehave":
            name, how = argv[i + 1].rsplit("=", 1)
            misbehave[name] = how
        elif arg == "--only":
            only = argv[i + 1].split(",")
    return slow, misbehave, only, fixed, leak


def busy_wait(ns):
    end = time.perf_counter_ns() + ns
    while time.perf_counter_ns() < end:
        pass


def main():
    slow, misbehave, only, fixed, leak = options(sys.argv[1:])
    fds = os.environ.pop("PAIRBENCH_WORKER_FDS", None)
    if fds is None:
        print("run me with pairbench bench", file=sys.stderr)
        sys.exit(2)
    r, w = map(int, fds.split(","))
    os.set_inheritable(r, False)
    os.set_inheritable(w, False)
    requests, replies = os.fdopen(r, "r"), os.fdopen(w, "w", buffering=1)
    names = [n for n in BENCHMARKS if only is None or n in only]
    replies.write("pairbench-worker 1\n")
    for line in requests:
        words = line.split()
        if words == ["list"]:
            replies.write(f"benchmarks {len(names)}\n" + "".join(f"benchmark {n}\n" for n in names))
        elif words == ["quit"]:
            return
        elif words and words[0] == "run":
            name, iterations = words[1], int(words[2])
            how = misbehave.get(name)
            if how == "error":
                replies.write("error ValueError: bad input\x1b[31m\n")
            elif how == "crash":
                print("about to crash", file=sys.stderr, flush=True)
                os.kill(os.getpid(), signal.SIGSEGV)
            elif how == "exit":
                sys.exit(3)
            elif how == "hang":
                time.sleep(3600)
            elif how == "garbage":
                replies.write("\x00\x01 what?\n")
            elif how == "huge":
                replies.write("ok " + "x" * 10000 + "\n")
            elif how == "truncated":
                replies.write("ok ns=12")
                replies.flush()
                sys.exit(0)
            elif name not in BENCHMARKS:
                replies.write("error unknown benchmark\n")
            else:
                n = int(BENCHMARKS[name] * slow.get(name, 1.0))
                kept = int(leak.get(name, 0))
                start = time.perf_counter_ns()
                busy_wait(fixed.get(name, 0))
                for _ in range(iterations):
                    spin(n)
                    if kept:
                        KEPT.append(bytearray(b"x" * kept))
                replies.write(f"ok ns={time.perf_counter_ns() - start}\n")


if __name__ == "__main__":
    main()
