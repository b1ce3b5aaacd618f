"""What the programs pairbench runs get of its environment (``measure.child_environment``): never its
own credentials unless named, only the basics for code of another commit, and never pairbench's
environment through /proc (the red-team audit's G4: the store's URL and PGPASSWORD reached every
command, worker, harness run and build)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pairbench.measure import child_environment as env
from pairbench.measure import children

SECRETS = {"PAIRBENCH_STORE": "postgresql://bench:PW@db/bench", "PGPASSWORD": "PW", "PGSERVICEFILE": "/x",
           "PGHOST": "db"}


def test_the_credentials_never_reach_a_child_and_the_rest_does():
    given = {**SECRETS, "PATH": "/bin", "FOO": "1", "PG": "x", "PGO_PROFILE": "y", "MYPGPASSWORD": "z"}
    assert env.for_children(given) == {"PATH": "/bin", "FOO": "1", "MYPGPASSWORD": "z"}


def test_code_of_another_commit_gets_only_the_basics_and_what_is_passed():
    given = {**SECRETS, "PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "TZ": "UTC", "CC": "clang", "FOO": "1"}
    with env.policy(env.Policy(isolated=True, passed=("CC", "PGHOST"))):
        assert env.for_children(given) == {"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "TZ": "UTC",
                                           "CC": "clang", "PGHOST": "db"}
    assert "FOO" in env.for_children(given)  # the policy ends with the block


def test_the_bytes_environment_follows_the_same_policy(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("FOO", "1")
    with env.policy(env.Policy(passed=("PGHOST",))):
        chosen = env.for_children_bytes()
    assert b"FOO" in chosen and chosen[b"PGHOST"] == b"db"
    assert b"PGPASSWORD" not in chosen and b"PAIRBENCH_STORE" not in chosen


@pytest.mark.parametrize(("values", "problem"), [
    (["PAIRBENCH_STORE"], "never reaches a program"), (["A=B"], "name of an environment variable"),
    ([""], "name of an environment variable"), (["1X"], "name of an environment variable"),
])
def test_a_bad_pass_env_is_refused_naming_it(values, problem):
    with pytest.raises(ValueError, match=problem):
        env.passed_names(values)


def test_names_given_twice_are_passed_once():
    assert env.passed_names(["A", "B", "A"]) == ("A", "B")


READ_PARENT = "import os; print(open('/proc/%d/environ' % os.getppid(), 'rb').read().count(b'PGPASSWORD'))"
HOLDER = """import subprocess, sys
sys.path.insert(0, sys.argv[1])
from pairbench.measure import child_environment
if sys.argv[2] == "hidden":
    assert child_environment.keep_to_ourselves()
done = subprocess.run([sys.executable, "-c", sys.argv[3]], capture_output=True, text=True,
                      env=child_environment.for_children())
print(done.stdout.strip() or done.stderr.strip().splitlines()[-1])
"""


@pytest.mark.e2e
@pytest.mark.parametrize(("how", "said"), [("hidden", "Permission denied"), ("shown", "1")])
def test_a_child_cannot_read_pairbenchs_environment_in_proc_while_it_holds_a_credential(how, said, other_user):
    """Run as an unprivileged user (root reads every /proc file), from a place that user can read
    wherever this checkout lives (``other_user``: a clone in a 0700 directory included): the keeper's
    parent, pairbench's own module. Shown, the child reads PGPASSWORD there (the test can fail);
    hidden, it cannot."""
    shared = other_user["shared"]
    src = str(shared.checkout / "src")
    done = subprocess.run([*other_user["drop"], str(shared.python), "-c", HOLDER, src, how, READ_PARENT],
                          capture_output=True, text=True, timeout=60, cwd="/",
                          env={"PATH": os.environ["PATH"], "PGPASSWORD": "PW", **shared.env}, check=False)
    assert done.returncode == 0, done.stderr
    assert said in done.stdout, done.stdout


def test_a_worker_gets_the_environment_the_policy_gives(monkeypatch, tmp_path):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("FOO", "1")
    dump = tmp_path / "env"
    code = f"import os; open({str(dump)!r}, 'w').write('\\n'.join(sorted(os.environ)))"
    with env.policy(env.Policy(isolated=True, passed=("PGHOST",))):
        assert children.run([sys.executable, "-c", code], timeout_s=60) == 0
    names = set(dump.read_text().split("\n"))
    assert "PGHOST" in names and "PATH" in names
    assert not names & {"PGPASSWORD", "PAIRBENCH_STORE", "FOO", "PGSERVICEFILE"}
