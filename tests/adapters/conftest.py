"""Real harness programs for the adapter tests, each built once into the test cache
(``~/.cache/pairbench-tests``, or ``$PAIRBENCH_TEST_CACHE``) under the digest of its sources, flags and
compiler, so the test workers of a session (and later sessions) share one build:

* Google Benchmark (Debian's ``libbenchmark-dev``): ``programs/gbench_suite.cc``, as the baseline and
  as a candidate whose ``BM_work`` does eight times as much and whose ``BM_crash`` aborts;
* Go (``go test -c``): ``programs/gobench``, likewise (``-ldflags -X``), its candidate's
  ``BenchmarkAlloc`` allocating 16 bytes more an iteration (one more allocation);
* criterion.rs: ``programs/critbench``: criterion and its crates take about a minute to compile here;
  later sessions link nothing. Its candidate is a copy named ``*slow*``;
* pytest-benchmark (the dev extra): test files written per test.

``scripts/install-test-deps.sh`` installs the compilers and libraries; a missing one fails these
tests with the command that installs it, it does not skip them.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from tools import test_cache, without_hypothesis

PROGRAMS = Path(__file__).resolve().parent / "programs"
INSTALL = "scripts/install-test-deps.sh"
GO_PACKAGE = "example.com/pairbench/gobench"


@dataclass(frozen=True)
class Pair:
    """A baseline program and a candidate whose ``work`` benchmark does eight times as much (and, for
    Google Benchmark and Go, whose crash benchmark crashes): a change no machine's noise hides, so that
    the tests check what the adapters do, not the statistics (the studies in benchmarks/ do that). Twice
    as much was not enough: with three busy processes beside and other jobs running, samples that a
    preemption stretched tenfold (Google Benchmark 1.7 then stops at one iteration) left it undecided."""

    baseline: str
    candidate: str
    same: str  # the baseline under another name: an A/A candidate


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed; run {INSTALL}")
    return path


def _copy(program: str, target: Path) -> str:
    """An A/A candidate: the baseline's program under another name. The same source built with the
    same flags again gives these compilers' same bytes, so a copy is that second build, without
    its compile."""
    shutil.copy2(program, target)
    return str(target)


def _run(argv: list[str], cwd: Path | None = None, env: dict | None = None, timeout: int = 600) -> None:
    done = subprocess.run(argv, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def _built_once(kind: str, inputs: list[str | bytes], build) -> Path:
    """The folder where ``build(folder)`` put its programs, once: kept in the test cache under the digest
    of everything the build reads (``inputs``: sources, flags, the compiler's version), so the test
    workers of a session, and later sessions, build them once (a lock keeps two from building at once)."""
    digest = hashlib.sha256(b"\0".join(i.encode() if isinstance(i, str) else i for i in inputs)).hexdigest()[:16]
    folder = test_cache() / f"{kind}-{digest}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / "done").touch()
    return folder


def _output(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False).stdout


def _gbench_built(kind: str, source: Path, builds: dict[str, tuple[str, ...]]) -> Path:
    """``source`` built with Debian's libbenchmark once per set of ``builds`` (name: compiler flags)."""
    compiler = _require("g++")
    header = Path("/usr/include/benchmark/benchmark.h")
    if not header.exists():
        pytest.fail(f"Google Benchmark (libbenchmark-dev) is not installed; run {INSTALL}")
    library = Path(_output([compiler, "-print-file-name=libbenchmark.so"]).strip()).resolve()
    linked = f"{library} {library.stat().st_size} {library.stat().st_mtime_ns}" if library.exists() else "static"

    def build(folder: Path) -> None:
        for name, flags in builds.items():
            _run([compiler, *flags, str(source), "-o", str(folder / name), "-lbenchmark", "-lpthread"])

    return _built_once(kind, [_output([compiler, "--version"]), source.read_bytes(), header.read_bytes(), linked,
                              repr(sorted(builds.items()))], build)


def _copies(folder: Path, out: Path, *names: str) -> list[str]:
    """The programs ``names`` of a cached build, copied for this session (a test may run or rename them)."""
    for name in names:
        shutil.copy2(folder / name, out / name)
    return [str(out / name) for name in names]


@pytest.fixture(scope="session")
def gbench(tmp_path_factory) -> Pair:
    folder = _gbench_built("gbench", PROGRAMS / "gbench_suite.cc", {
        "base": ("-O2", "-std=c++17"), "slower": ("-O2", "-std=c++17", "-DWORK=16000", "-DCRASH")})
    out = tmp_path_factory.mktemp("gbench")
    base, slower = _copies(folder, out, "base", "slower")
    return Pair(base, slower, _copy(base, out / "same"))


@pytest.fixture(scope="session")
def gbench_names(tmp_path_factory) -> str:
    """``programs/gbench_names.cc`` built with Debian's libbenchmark: benchmarks with the names a filter
    must quote."""
    return _copies(_gbench_names_built(), tmp_path_factory.mktemp("gbench-names"), "names")[0]


@pytest.fixture(scope="session")
def gbench_lenient(tmp_path_factory) -> str:
    """The same program with a ``main`` that never calls ``ReportUnrecognizedArguments``: an option
    the library does not know is warned about, and the program exits 0."""
    return _copies(_gbench_names_built(), tmp_path_factory.mktemp("gbench-names"), "lenient")[0]


def _gbench_names_built() -> Path:
    return _gbench_built("gbench-names", PROGRAMS / "gbench_names.cc", {
        "names": ("-O1", "-std=c++17"), "lenient": ("-O1", "-std=c++17", "-DIGNORES_UNKNOWN_FLAGS")})


@pytest.fixture(scope="session")
def gotest(tmp_path_factory) -> Pair:
    go = _require("go")
    env = {"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod", "GO111MODULE": "on"}
    package = PROGRAMS / "gobench"
    slower = f"-X {GO_PACKAGE}.work=16000 -X {GO_PACKAGE}.crash=yes -X {GO_PACKAGE}.grow=yes"
    builds = {"base.test": "", "slower.test": slower}

    def build(folder: Path) -> None:
        for name, flags in builds.items():
            _run([go, "test", "-c", "-o", str(folder / name), *(["-ldflags", flags] if flags else []), "."],
                 cwd=package, env=env)

    sources = [p.name.encode() + b"\0" + p.read_bytes() for p in sorted(package.rglob("*")) if p.is_file()]
    folder = _built_once("gotest", [_output([go, "version"]), *sources, repr(sorted(builds.items())), repr(env)],
                         build)
    out = tmp_path_factory.mktemp("gotest")
    base, candidate = _copies(folder, out, "base.test", "slower.test")
    return Pair(base, candidate, _copy(base, out / "same.test"))


def build_criterion() -> Path:
    """The criterion bench binary, built once into the test cache (``_built_once``; cargo's target
    directory is kept beside it)."""
    cargo = _require("cargo")
    crate_files = [p for p in sorted((PROGRAMS / "critbench").rglob("*")) if p.is_file()]

    def build(folder: Path) -> None:
        crate = folder / "crate"
        shutil.copytree(PROGRAMS / "critbench", crate)
        done = subprocess.run([cargo, "bench", "--no-run", "--message-format=json"], cwd=crate,
                              env={**os.environ, "CARGO_TARGET_DIR": str(folder / "target")},
                              capture_output=True, text=True, timeout=1200, check=False)
        if done.returncode != 0:
            pytest.fail(f"building the criterion bench failed (crates from crates.io are needed; run {INSTALL}):\n"
                        f"{done.stderr[-3000:]}")
        executables = [json.loads(line).get("executable") for line in done.stdout.splitlines()
                       if line.startswith("{") and '"executable"' in line]
        chains = [e for e in executables if e and Path(e).name.startswith("chains-")]
        shutil.copy2(chains[0], folder / "chains")

    sources = [p.relative_to(PROGRAMS).as_posix().encode() + b"\0" + p.read_bytes() for p in crate_files]
    return _built_once("critbench", [_output([cargo, "--version"]), *sources], build) / "chains"


@pytest.fixture(scope="session")
def criterion(tmp_path_factory) -> Pair:
    built = build_criterion()
    out = tmp_path_factory.mktemp("criterion")
    copies = []
    for name in ("chains-base", "chains-slow", "chains-same"):
        shutil.copy2(built, out / name)
        copies.append(str(out / name))
    return Pair(*copies)


PYTEST_BENCH = '''
def chain(n):
    x = 1
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
    return x


def test_work(benchmark):
    benchmark(chain, {work})


def test_same(benchmark):
    benchmark(chain, 300)


def test_plain():
    assert chain(3) > 0
'''


@pytest.fixture
def lean_pytest(monkeypatch) -> str:
    """Every pytest the test starts runs without hypothesis's plugin (``tools.without_hypothesis``,
    through ``PYTEST_ADDOPTS``, which pytest reads besides its configuration files); the variable's
    name, for ``--pass-env``."""
    monkeypatch.setenv("PYTEST_ADDOPTS", without_hypothesis(os.environ.get("PYTEST_ADDOPTS")))
    return "PYTEST_ADDOPTS"


@pytest.fixture
def pybench_files(tmp_path, lean_pytest) -> Pair:
    """Two directories of pytest-benchmark tests: the candidate's test_work does sixteen times as much
    (three samples a side must show it, on a loaded machine too); pytest started without hypothesis."""
    try:
        import pytest_benchmark  # noqa: F401 - the harness under test must be installed
    except ImportError:
        pytest.fail("pytest-benchmark is not installed: it is in the dev extra, run make setup")
    sides = []
    for name, work in (("base", 300), ("slower", 4800), ("same", 300)):
        directory = tmp_path / name
        directory.mkdir()
        (directory / "test_chain.py").write_text(PYTEST_BENCH.replace("{work}", str(work)))
        sides.append(str(directory / "test_chain.py"))
    return Pair(*sides)
