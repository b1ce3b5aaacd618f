"""Where the history store lives: its URL, and a connection to it that fails in words.

URLs take SQLAlchemy's form: ``sqlite:///relative/path.db``,
``sqlite:////absolute/path.db`` (a plain path is a SQLite file too), or
``postgresql://user:password@host:port/database`` (psycopg 3, the
``pairbench[postgresql]`` extra). One code path serves both: SQLAlchemy Core
builds every statement, and only the two dialects' own ``INSERT ... ON
CONFLICT DO NOTHING`` differ by import.

SQLite is opened in WAL mode (readers never wait for the writer) with a busy
timeout (``?timeout=SECONDS`` in the URL, 30 s by default), and every write
transaction starts with ``BEGIN IMMEDIATE``, so concurrent writers queue for
the lock instead of failing when a reader's transaction turns into a writer.
A password is never shown: messages name the store by :func:`shown`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pairbench.errors import StoreError

DEFAULT_PATH = ".pairbench/history.db"
DEFAULT_BUSY_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10
POSTGRESQL_EXTRA = "pip install 'psycopg[binary]>=3.1' (pairbench's extra postgresql) into pairbench's environment"


@dataclass(frozen=True)
class StoreUrl:
    """A store's address: ``dialect`` ("sqlite" or "postgresql"), the SQLAlchemy URL (absolute
    path for SQLite), and how to show it (without a password)."""

    dialect: str
    url: str
    shown: str
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S

    @property
    def sqlite_path(self) -> Path | None:
        return Path(self.url.removeprefix("sqlite:///")) if self.dialect == "sqlite" else None


def parse_url(text: str, *, base: str | os.PathLike | None = None) -> StoreUrl:
    """The store ``text`` names; a relative SQLite path is relative to ``base`` (the project's
    root for a config file, else the working directory). ``UsageError``-like ``StoreError`` for
    anything that is not a SQLite file or a PostgreSQL database."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if not isinstance(text, str) or not text.strip():
        raise StoreError("the store URL is empty; give sqlite:///PATH, postgresql://... or a file path")
    text = text.strip()
    if "://" not in text:
        return _sqlite(Path(text), base, {})
    try:
        url = make_url(text)
    except ArgumentError:
        raise StoreError(f"{_redacted(text)} is not a store URL; give sqlite:///PATH or "
                         "postgresql://USER@HOST/DATABASE") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise StoreError("a store in memory would be lost when pairbench exits; give a file: "
                             "sqlite:///.pairbench/history.db")
        return _sqlite(Path(url.database), base, dict(url.query))
    if backend in ("postgresql", "postgres"):
        if url.get_driver_name() not in ("psycopg", "psycopg2") or "+" not in url.drivername:
            url = url.set(drivername="postgresql+psycopg")
        return StoreUrl("postgresql", url.render_as_string(hide_password=False),
                        url.render_as_string(hide_password=True))
    raise StoreError(f"pairbench stores results in SQLite or PostgreSQL, not {backend!r} "
                     f"({_redacted(text)})")


def _sqlite(path: Path, base, query: dict) -> StoreUrl:
    if not path.is_absolute():
        path = Path(base or os.getcwd()) / path
    timeout = DEFAULT_BUSY_TIMEOUT_S
    if "timeout" in query:
        try:
            timeout = float(query["timeout"])
        except (TypeError, ValueError):
            timeout = -1.0
        if not 0 <= timeout <= 3600:
            raise StoreError(f"the store's ?timeout= must be 0 to 3600 seconds, got {query['timeout']!r}")
    path = Path(os.path.normpath(path))
    return StoreUrl("sqlite", f"sqlite:///{path}", f"sqlite:///{path}", timeout)


def _redacted(text: str) -> str:
    """``text`` with anything between ``://`` and ``@`` hidden, since it may hold a password."""
    scheme, sep, rest = text.partition("://")
    if sep and "@" in rest:
        return f"{scheme}://***@{rest.rsplit('@', 1)[1]}"
    return text


def create_engine(store: StoreUrl):
    """A SQLAlchemy engine for ``store``, set up as the module docstring says (no connection yet)."""
    import sqlalchemy

    if store.dialect == "postgresql":
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise StoreError(f"{store.shown}: a PostgreSQL store needs psycopg; install it with "
                             f"{POSTGRESQL_EXTRA}") from None
        return sqlalchemy.create_engine(store.url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
                                        pool_pre_ping=False)
    path = store.sqlite_path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"{store.shown}: cannot create its directory ({exc.strerror or exc})") from None
    # one connection kept for the store's life (closing the last one checkpoints the WAL each time)
    engine = sqlalchemy.create_engine(store.url, connect_args={"timeout": store.busy_timeout_s},
                                      poolclass=sqlalchemy.pool.SingletonThreadPool)
    sqlalchemy.event.listen(engine, "connect", _sqlite_connected)
    sqlalchemy.event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connected(dbapi_connection, _record) -> None:
    """WAL (kept by the file once set), foreign keys, and transactions begun by us (see ``begin``)."""
    dbapi_connection.isolation_level = None  # the driver begins nothing by itself
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _sqlite_begin(conn) -> None:
    """A write transaction takes the write lock at once (queueing behind another writer for up to
    the busy timeout); a read transaction is deferred, so readers never wait."""
    mode = "IMMEDIATE" if conn.get_execution_options().get("pairbench_write") else "DEFERRED"
    conn.exec_driver_sql(f"BEGIN {mode}")


@contextlib.contextmanager
def translated_errors(store: StoreUrl, doing: str) -> Iterator[None]:
    """Database errors as ``StoreError``s naming the store, what was being done and what to do."""
    from sqlalchemy import exc as sa

    try:
        yield
    except sa.OperationalError as error:
        raise StoreError(_operational(store, doing, error)) from None
    except sa.IntegrityError as error:
        raise StoreError(f"{store.shown}: {doing} was refused by the database ({_first_line(error)}); "
                         "nothing of it was kept") from None
    except sa.DBAPIError as error:
        raise StoreError(f"{store.shown}: {doing} failed ({_first_line(error)}); nothing of it was "
                         "kept") from None


def _operational(store: StoreUrl, doing: str, error) -> str:
    said = _first_line(error)
    if store.dialect == "sqlite" and "locked" in said:
        return (f"{store.shown} is locked by another process (waited {store.busy_timeout_s:g} s) while "
                f"{doing}; nothing of it was kept. Try again when the other writer is done, or give the "
                "URL a longer ?timeout=SECONDS")
    if store.dialect == "sqlite":
        return f"{store.shown}: cannot use the SQLite file while {doing} ({said})"
    return (f"cannot reach the store {store.shown} while {doing} ({said}); check that the server runs "
            "and the URL's host, port, database, user and password")


def _first_line(error) -> str:
    original = getattr(error, "orig", None) or error
    return " ".join(str(original).split())[:300] or type(original).__name__
