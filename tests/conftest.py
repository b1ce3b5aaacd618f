"""Fixtures every test directory shares: a scripted executor for the CLI, a quick activity snapshot."""

from __future__ import annotations

import pytest
from cli_runner import Seams
from fakes import FakeExecutor

pytest_plugins = ["pytester", "timeline"]  # pytester: the pytest plugin's tests run pytest in-process; timeline: benchmarks/test_suite.py


@pytest.fixture
def use_executor(monkeypatch):
    """Install an executor (usually a FakeExecutor) for every ``invoke`` of the test; returns it."""

    def install(executor=None, **kwargs):
        executor = executor if executor is not None else FakeExecutor(**kwargs)
        monkeypatch.setattr(Seams, "executor", executor)
        return executor

    return install


@pytest.fixture(autouse=True)
def real_programs_only_in_e2e_tests(request, monkeypatch):
    """Outside a test marked ``e2e``, ``invoke`` refuses pairbench's real executor and workers: a
    test that runs real programs says so (``tests/core/test_test_marks.py`` reads the rest of the
    ways a test starts processes from its source)."""
    monkeypatch.setattr(Seams, "real_programs", request.node.get_closest_marker("e2e") is not None)


@pytest.fixture(autouse=True)
def instant_activity_snapshot(monkeypatch):
    """Skip the 0.1 s window between the two /proc snapshots of "what runs right now" wherever the
    real machine is read. A zero window is supported (the busiest-process reading is then empty);
    the doctor's own tests of that reading keep the default window."""
    import pairbench.environment

    monkeypatch.setattr(pairbench.environment, "ACTIVITY_WINDOW_S", 0.0)


@pytest.fixture(autouse=True)
def test_process_stays_dumpable(monkeypatch):
    """``pairbench`` run in-process (``invoke``) with a store or a credential would make the test process
    non-dumpable for the rest of the session (``child_environment.keep_to_ourselves``); here it only
    records that it was asked. ``tests/measure/test_child_environment.py`` checks the real one in a
    process of its own."""
    from pairbench.measure import child_environment

    asked = []
    monkeypatch.setattr(child_environment, "keep_to_ourselves", lambda: asked.append(True) or True)
    return asked


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server for this test session (each xdist worker its own), stopped and
    removed at the end (``tests/support/postgres.py``)."""
    from postgres import PostgresServer

    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """The URL of a fresh, empty database on the session's PostgreSQL server."""
    return postgres_server.database()


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> dict[str, str]:
    """The environment under which pip installs pairbench's dependencies offline, from a local
    wheelhouse of the versions this checkout's environment resolved (``tests/support/installs.py``)."""
    from installs import fill_wheelhouse, runtime_closure
    from tools import test_cache

    folder = test_cache() / "wheelhouse"
    pinned = runtime_closure()
    fill_wheelhouse(folder, pinned)
    constraints = tmp_path_factory.mktemp("wheelhouse") / "constraints.txt"
    constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(pinned.items())))
    # PIP_NO_COMPILE=0 is --no-compile: pip reads an option's variable as the option's own value, and
    # --no-compile stores False. Not byte-compiling the ~5,600 modules of numpy, scipy and plotly saves
    # about 10 s of CPU an install (the Action's); the few hundred imported are compiled when imported.
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(folder), "PIP_CONSTRAINT": str(constraints),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_COMPILE": "0"}


@pytest.fixture
def worker_programs(tmp_path, monkeypatch):
    """Two worker programs, ``./bench-old`` and ``./bench-new``, in the working directory (they must
    exist; ``fakes.FakeWorkers`` runs them)."""
    monkeypatch.chdir(tmp_path)
    for name in ("bench-old", "bench-new"):
        (tmp_path / name).write_text("#!/bin/sh\nexit 1\n")
        (tmp_path / name).chmod(0o755)
    return tmp_path


@pytest.fixture(scope="session")
def other_user():
    """How a test runs something as an unprivileged user (``tests/support/other_user.py``): the
    command prefix (empty when the tests run unprivileged already), that user's ids, and a Python with
    pairbench it can run, set up once for the session. Where no such user can be become, the test
    fails saying why: it never skips."""
    from other_user import CannotDrop, drop_command, shared_environment, user_ids

    try:
        drop = drop_command()
    except CannotDrop as why:
        pytest.fail(str(why))
    shared = shared_environment(drop)
    try:
        yield {"drop": drop, "ids": user_ids(), "shared": shared}
    finally:
        shared.cleanup()
