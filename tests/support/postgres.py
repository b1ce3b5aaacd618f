"""A real PostgreSQL server for the tests: an unprivileged cluster in a temporary directory.

``PostgresServer.start()`` runs Debian's ``initdb`` into a new directory under
``/tmp``, then ``postgres`` on a free loopback port (its unix socket in the
same directory), trusting local connections as the user ``pairbench``. As
root (CI), both run as ``nobody``, since PostgreSQL refuses to run as root.
``database()`` makes a fresh database for a test; ``stop()`` stops the server
and removes the directory. The server package is installed by
``scripts/install-test-deps.sh``; without it, starting fails and says so.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

USER = "pairbench"
UNPRIVILEGED = "nobody"


def binaries() -> str:
    """The directory of ``initdb`` and ``postgres``: Debian's newest, else the PATH's."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    if initdb is None:
        raise RuntimeError("the PostgreSQL server is not installed (no initdb): run scripts/install-test-deps.sh, "
                           "which installs Debian's postgresql package")
    return os.path.dirname(os.path.realpath(initdb))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    def __init__(self, *, durable: bool = False):
        """``durable``: fsync as a production server does (for timing studies); else off, for speed."""
        self.durable = durable
        self.bin = binaries()
        self.dir = tempfile.mkdtemp(prefix="pairbench-pg-", dir="/tmp")
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def _as_server_user(self, argv: list[str]) -> list[str]:
        if os.geteuid() != 0:
            return argv
        return ["setpriv", f"--reuid={UNPRIVILEGED}", f"--regid={pwd.getpwnam(UNPRIVILEGED).pw_gid}",
                "--clear-groups", *argv]

    def start(self) -> PostgresServer:
        if os.geteuid() == 0:
            entry = pwd.getpwnam(UNPRIVILEGED)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        os.chmod(self.dir, 0o700)
        subprocess.run(self._as_server_user([f"{self.bin}/initdb", "-D", self.data, "-U", USER, "--auth=trust",
                                             "--no-sync", "-E", "UTF8", "--locale=C"]),
                       check=True, capture_output=True, cwd=self.dir)
        with open(os.path.join(self.dir, "server.log"), "wb") as log:  # the server keeps its own copy
            self.process = subprocess.Popen(self._as_server_user([
                f"{self.bin}/postgres", "-D", self.data, "-p", str(self.port), "-k", self.dir,
                "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=60",
                *(() if self.durable else ("-c", "fsync=off", "-c", "full_page_writes=off"))]),
                stdout=log, stderr=subprocess.STDOUT, cwd=self.dir)
        self._wait_ready()
        return self

    def _wait_ready(self, timeout_s: float = 30.0) -> None:
        import psycopg

        deadline = time.monotonic() + timeout_s
        while True:
            try:
                psycopg.connect(self.admin_dsn(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    log = Path(self.dir, "server.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"the test PostgreSQL server did not start:\n{log}") from None
                time.sleep(0.1)

    def admin_dsn(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def database(self) -> str:
        """A new, empty database; its SQLAlchemy URL (the form users give pairbench)."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.admin_dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.admin_dsn(name)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: "smart" shutdown; SIGINT would be fast
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
