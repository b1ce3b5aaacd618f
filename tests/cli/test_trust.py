"""The trust model (README, "What pairbench trusts"): pairbench's credentials reach none of the programs
it runs, whichever runs them (a command in either spawner, a worker, a harness's listing and its
invocations, a build), unless the user names them with --pass-env; code of another commit gets only
the basics (the red-team audit's G4, whose reproducer is the confirm test here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import invoke

pytestmark = pytest.mark.e2e

CREDENTIALS = {"PGPASSWORD": "S3cr3t", "PGHOST": "db.example"}
DUMP = "import os; open({path!r}, 'a').write('\\n'.join(sorted(os.environ)) + '\\n--\\n')"


@pytest.fixture
def credentials(monkeypatch, tmp_path):
    """pairbench's credentials in its environment (the store a SQLite file of the test's), and FOO."""
    monkeypatch.setenv("PAIRBENCH_STORE", f"sqlite:///{tmp_path / 'history.db'}")
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("FOO", "bar")


def seen(path: Path) -> list[set[str]]:
    """The variable names each program that dumped its environment to ``path`` had."""
    return [set(block.split()) for block in path.read_text().split("--\n") if block.strip()]


@pytest.mark.parametrize("spawner", ["native", "python"])
def test_a_command_gets_no_credential_unless_it_is_passed(credentials, tmp_path, monkeypatch, spawner):
    monkeypatch.setenv("PAIRBENCH_SPAWNER", spawner)
    out = tmp_path / "env.txt"
    for passed in ((), ("--pass-env", "PGHOST")):
        out.unlink(missing_ok=True)
        code, _, err = invoke("run", "-q", "--runs", "2", "--no-store", "--output", str(out), *passed, "env")
        assert code == 0, err
        names = {line.split("=", 1)[0] for line in out.read_text().splitlines()}
        assert "FOO" in names and not names & {"PAIRBENCH_STORE", "PGPASSWORD"}
        assert ("PGHOST" in names) == bool(passed)


def test_a_worker_and_a_harness_listing_and_invocation_get_no_credential(credentials, tmp_path):
    out = tmp_path / "env.txt"
    bench = tmp_path / "bench_env.py"
    bench.write_text(DUMP.format(path=str(out)) + "\nimport pairbench\n\n@pairbench.benchmark\ndef x():\n    pass\n")
    assert invoke("bench", str(bench), "--runs", "8", "-q", "--no-store").code == 0
    program = tmp_path / "gb"
    program.write_text(f"#!{sys.executable}\n" + DUMP.format(path=str(out)) + "\nimport sys\n"
                       "if any(a.startswith('--benchmark_list_tests') for a in sys.argv): print('BM_x')\n")
    program.chmod(0o755)
    invoke("bench", "--harness", "gbench", str(program), "--runs", "8", "-q", "--no-store")
    environments = seen(out)
    assert len(environments) >= 4  # the worker, the listings, at least one invocation
    for names in environments:
        assert "FOO" in names and not names & {"PAIRBENCH_STORE", "PGPASSWORD", "PGHOST"}


def repository(root: Path, build: str, bench_source: str) -> tuple[str, str]:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    (root / "pairbench.toml").write_text(f'[confirm]\nbuild = "{build}"\nbench = "bench_x.py"\n')
    (root / ".gitignore").write_text("*.txt\nhistory.db*\n.pairbench/\n")
    commits = []
    for k in range(2):
        (root / "bench_x.py").write_text(bench_source + f"\n\n@pairbench.benchmark\ndef x():\n    return {k}\n")
        subprocess.run([*git, "add", "."], cwd=root, check=True)
        subprocess.run([*git, "commit", "-qm", f"v{k}"], cwd=root, check=True)
        commits.append(subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                      check=True).stdout.strip())
    return commits[0], commits[1]


# what each command may answer on two commits of the same speed: 3, the suite may fail on a loaded
# machine (what ran is what is checked); bisect's 5 inconclusive and 7 no slowdown
ANSWERS = {"confirm": (0, 3), "bisect": (0, 3, 5, 7)}


@pytest.mark.parametrize("command", ["confirm", "bisect"])
@pytest.mark.parametrize("passed", [(), ("--pass-env", "FOO", "--pass-env", "PGHOST")])
def test_confirms_and_bisects_builds_and_workers_get_the_basics_and_what_is_passed(credentials, tmp_path,
                                                                                   monkeypatch, passed, command):
    """The audit's reproducer: `[confirm] build = "env > build_env.txt"` and a benchmark file writing its
    environment at import had PAIRBENCH_STORE and PGPASSWORD."""
    built, measured = tmp_path / "build_env.txt", tmp_path / "worker_env.txt"
    before, after = repository(tmp_path, f"env | cut -d= -f1 >> {built}; echo -- >> {built}",
                               "import pairbench\n" + DUMP.format(path=str(measured)))
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(command, before, after, "--runs", "6", "--warmup", "0", "-q", *passed)
    assert code in ANSWERS[command], err
    for names in seen(built) + seen(measured):
        assert not names & {"PAIRBENCH_STORE", "PGPASSWORD"}
        assert "PATH" in names and "HOME" in names
        assert ("FOO" in names and "PGHOST" in names) == bool(passed)
    assert len(seen(built)) == 2 and seen(measured)


def test_bench_against_a_revision_gives_both_sides_the_same_basics(credentials, tmp_path, monkeypatch):
    measured = tmp_path / "worker_env.txt"
    before, _ = repository(tmp_path, "true", "import pairbench\n" + DUMP.format(path=str(measured)))
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke("bench", "bench_x.py", "--against", before, "--runs", "8", "-q", "--no-store")
    assert code == 0, err
    environments = seen(measured)
    assert len(environments) >= 2
    assert all(names == environments[0] for names in environments)
    assert "FOO" not in environments[0] and not environments[0] & {"PAIRBENCH_STORE", "PGPASSWORD", "PGHOST"}
