"""A harness program whose one benchmark ``bad`` reports what no real harness would, for tests.

Run as ``python fake_harness.py KIND MODE [options the adapter passes]``. KIND is ``gbench``,
``go`` or ``criterion``: the program answers that adapter's listing and invocations as the real
harness does (Google Benchmark 1.8's options, a ``go test -c`` binary's, a criterion 0.5 bench's)
for three benchmarks, ``good_a``, ``bad`` and ``good_b`` (Go: ``BenchmarkGoodA`` ...), each
reporting 1 us per iteration, except that ``bad`` reports as MODE says:

=============  ==========================================================================
gbench         ``real_huge`` (real_time 1e308 s), ``cpu_huge`` (cpu_time 1e308 s),
               ``iterations_float`` (1e30), ``iterations_huge`` (10**400),
               ``negative`` (real_time -5), ``out_dir`` (a directory where its report
               goes, left for the next invocation), ``counter_value`` (a counter named
               "value", the name of pairbench's measured time)
go             ``ns_inf`` (1e999 ns/op), ``ns_huge`` (1e308 ns/op), ``count_400``,
               ``count_5000`` (iteration counts of that many digits), ``negative``,
               ``mbs_inf`` (1e999 MB/s)
criterion      ``iters_huge`` (iters 1e308), ``slope_huge`` (slope 1e308),
               ``home_link`` (CRITERION_HOME left as a link to a directory of the test's,
               which holds ``victim``)
=============  ==========================================================================

The standard library only: it stands for a harness binary in any language.
"""

import json
import os
import re
import sys

NAMES = {"gbench": ["good_a", "bad", "good_b"], "go": ["BenchmarkGoodA", "BenchmarkBad", "BenchmarkGoodB"],
         "criterion": ["good_a", "bad", "good_b"]}


def option(argv, name, default=None):
    """The value of ``--name=value`` or ``-name value`` in ``argv``."""
    for i, arg in enumerate(argv):
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
    return default


def unescaped(pattern: str) -> str:
    """The name a filter anchored with ^...$ matches (its escapes and bracket expressions undone)."""
    body = pattern.strip("^$")
    body = re.sub(r"\[(.)\]", r"\1", body)
    return re.sub(r"\\(.)", r"\1", body)


def gbench(mode, argv):
    if any(a.startswith("--benchmark_list_tests") for a in argv):
        print("\n".join(NAMES["gbench"]))
        return 0
    name = unescaped(option(argv, "--benchmark_filter"))
    out = option(argv, "--benchmark_out")
    iterations = int(option(argv, "--benchmark_min_time", "1x").rstrip("x"))
    entry = {"name": name, "run_type": "iteration", "iterations": iterations, "real_time": 1000.0,
             "cpu_time": 1000.0, "time_unit": "ns"}
    if name == "bad":
        if mode == "out_dir":
            os.mkdir(out)
            return 0
        entry.update({"real_huge": {"real_time": 1e308, "time_unit": "s"},
                      "cpu_huge": {"cpu_time": 1e308, "time_unit": "s"},
                      "iterations_float": {"iterations": 1e30}, "negative": {"real_time": -5.0},
                      "counter_value": {"value": 1e-3}}.get(mode, {}))
    text = json.dumps({"context": {}, "benchmarks": [entry]})
    if name == "bad" and mode == "iterations_huge":
        text = text.replace(f'"iterations": {iterations}', '"iterations": 1' + "0" * 400)
    with open(out, "w") as handle:
        handle.write(text)
    return 0


def go(mode, argv):
    if "-test.list" in argv:
        print("\n".join(NAMES["go"]))
        return 0
    pattern = option(argv, "-test.bench")
    n = option(argv, "-test.benchtime", "1x").rstrip("x")
    repetitions = int(option(argv, "-test.count", "1"))  # a line per repetition, as go test -count prints them
    procs = int(option(argv, "-test.cpu", "2"))
    suffix = f"-{procs}" if procs > 1 else ""  # as the testing package names a benchmark run at GOMAXPROCS
    for name in NAMES["go"]:
        if not re.search(pattern, name):
            continue
        count, value, extra = n, f"{1000 * 1.0:.1f}", ""
        if name == "BenchmarkBad":
            value = {"ns_inf": "1e999", "ns_huge": "1e308", "negative": "-1234"}.get(mode, value)
            count = {"count_400": "9" * 400, "count_5000": "9" * 5000}.get(mode, count)
            extra = "\t1e999 MB/s" if mode == "mbs_inf" else ""
        for _ in range(repetitions):
            print(f"{name}{suffix}\t{count}\t{value} ns/op{extra}")
    print("PASS")
    return 0


def criterion(mode, argv):
    if "--list" in argv:
        print("\n".join(f"{n}: benchmark" for n in NAMES["criterion"]))
        return 0
    name = argv[argv.index("--") + 1]  # the filter comes after "--", as criterion's adapter gives it
    home = os.environ["CRITERION_HOME"]
    new = os.path.join(home, name, "new")
    os.makedirs(new)
    iters, slope = [10.0, 20.0], 1000.0
    if name == "bad":
        if mode == "home_link":
            os.rename(home, home + ".gone")
            os.symlink(os.environ["FAKE_HARNESS_LINK"], home)
            return 0
        iters = [1e308, 1e308] if mode == "iters_huge" else iters
        slope = 1e308 if mode == "slope_huge" else slope
    times = [10000.0, 20000.0] if name == "bad" else [i * slope for i in iters]
    files = {"benchmark.json": {"full_id": name}, "sample.json": {"iters": iters, "times": times},
             "estimates.json": {"slope": {"point_estimate": slope}, "mean": {"point_estimate": slope}}}
    for file, content in files.items():
        with open(os.path.join(new, file), "w") as handle:
            json.dump(content, handle)
    return 0


if __name__ == "__main__":
    kind, mode = sys.argv[1], sys.argv[2]
    sys.exit({"gbench": gbench, "go": go, "criterion": criterion}[kind](mode, sys.argv[3:]))
