"""Where the history store lives: its URL, and a connection to it that fails in words.

URLs take SQLAlchemy's form: ``sqlite:///relative/path.db``,
``sqlite:////absolute/path.db`` (a plain path is a SQLite file too), or
``postgresql://user:password@host:port/database`` (psycopg 3, the
``pairbench[postgresql]`` extra). One code path serves both: SQLAlchemy Core
builds every statement, and only the two dialects' own ``INSERT ... ON
CONFLICT DO NOTHING`` differ by import.

A store opened to write is set to WAL mode (readers never wait for the
writer) with a busy timeout (``?timeout=SECONDS`` in the URL, 30 s by
default), and every write transaction starts with ``BEGIN IMMEDIATE``, so
concurrent writers queue for the lock instead of failing when a reader's
transaction turns into a writer. Its file passes the output guard
(``outputs``): no link another user planted is followed. A store opened to
read (``history``, ``store info``) is opened read-only: it is neither changed
nor locked, a missing file is not created, and a file we may only read can be
read. A SQLite file that holds another program's tables is refused either way,
before anything in it changes.

A password is never shown: messages name the store by ``StoreUrl.shown``, and
whatever a driver says passes through ``StoreUrl.scrubbed``; a URL that cannot
be parsed is not repeated at all.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from pairbench.errors import StoreError
from pairbench.frozen import frozen
from pairbench.outputs import check_target

if TYPE_CHECKING:
    # sqlite3 loads with a store's engine: a measuring command resolves its store before its first
    # sample, and without a store needs none of it
    import sqlite3

DEFAULT_PATH = ".pairbench/history.db"
DEFAULT_BUSY_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10
POSTGRESQL_EXTRA = "pip install 'psycopg[binary]>=3.1' (pairbench's extra postgresql) into pairbench's environment"


@frozen
class StoreUrl:
    """A store's address: ``dialect`` ("sqlite" or "postgresql"), the SQLAlchemy URL (absolute
    path for SQLite), how to show it (without a password), and the ``secrets`` it holds (its
    passwords: never shown, and taken out of whatever a driver says)."""

    dialect: str
    url: str = field(repr=False)
    shown: str
    busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S
    secrets: tuple[str, ...] = field(default=(), repr=False)

    @property
    def sqlite_path(self) -> Path | None:
        return Path(self.url.removeprefix("sqlite:///")) if self.dialect == "sqlite" else None

    def scrubbed(self, text: str) -> str:
        """``text`` with every secret of the URL replaced by ``***``."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


SECRET_PARAMETERS = ("password", "sslpassword")  # libpq's parameters that hold a password
_KEYWORD_STRING = re.compile(r"(^|\s)(host|hostaddr|port|dbname|user|password|passfile|sslmode|service)\s*=")
_URL_FORMS = "give sqlite:///PATH or postgresql://USER@HOST/DATABASE"


def parse_url(text: str, *, base: str | os.PathLike | None = None) -> StoreUrl:
    """The store ``text`` names; a relative SQLite path is relative to ``base`` (the project's
    root for a config file, else the working directory). ``UsageError``-like ``StoreError`` for
    anything that is not a SQLite file or a PostgreSQL database, which never repeats what may be a
    password: ``text`` is shown only once it parsed, and then without its passwords."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if not isinstance(text, str) or not text.strip():
        raise StoreError(f"the store URL is empty; {_URL_FORMS}, or a file path")
    text = text.strip()
    if _KEYWORD_STRING.search(text):
        raise StoreError(_KEYWORDS_REFUSED)
    if "\0" in text or "%00" in text:
        raise StoreError(f"the store URL ({_redacted(text)}) holds a NUL (%00), which ends the text a database "
                         "driver reads, so whatever follows it (the port, sslmode, ...) would be dropped without a "
                         "word; remove it")
    if "://" not in text:
        return _sqlite(Path(text), base, {})
    try:
        url = make_url(text)
    except (ArgumentError, ValueError):
        scheme = text.partition("://")[0]
        raise StoreError(f"the store URL ({_shown_scheme(scheme)}://...) cannot be read: its port is not a "
                         "number, or its user or password holds @, :, / or ? unencoded (write them as %40, "
                         f"%3A, %2F, %3F); {_URL_FORMS}") from None
    backend = url.drivername.partition("+")[0]
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise StoreError("a store in memory would be lost when pairbench exits; give a file: "
                             "sqlite:///.pairbench/history.db")
        return _sqlite(Path(url.database), base, dict(url.query))
    if backend in ("postgresql", "postgres"):
        return _postgresql(url)
    raise StoreError(f"pairbench stores results in SQLite or PostgreSQL, not {_shown_scheme(backend)!r} "
                     f"({_redacted(text)})")


_KEYWORDS_REFUSED = ("the store looks like a libpq connection string (host=... password=...), which pairbench "
                     "does not take, since it would show its password; give a URL, postgresql://USER@HOST/"
                     "DATABASE, with the password in PGPASSWORD or ~/.pgpass")


def _postgresql(url) -> StoreUrl:
    """A PostgreSQL store through psycopg 3 (``postgres://`` and other drivers' names included)."""
    url = url.set(drivername="postgresql+psycopg")
    if url.host and (set(url.host) & set("= \t\n")):
        raise StoreError(_KEYWORDS_REFUSED)
    if url.host and "@" in url.host:  # a password holding a raw @: the URL's parser split it there
        raise StoreError("the store URL (postgresql://***@...) holds @ more than once: a user or password "
                         f"holding @ must write it as %40; {_URL_FORMS}")
    secrets = [url.password or ""]
    hidden = {}
    for key, values in url.query.items():
        if key.lower() in SECRET_PARAMETERS:  # PASSWORD= too: libpq refuses it, but it holds a password
            secrets += [values] if isinstance(values, str) else list(values)
            hidden[key] = "***"
    shown = (url.update_query_dict(hidden) if hidden else url).render_as_string(hide_password=True)
    return StoreUrl("postgresql", url.render_as_string(hide_password=False), shown.replace("%2A%2A%2A", "***"),
                    secrets=tuple(sorted({s for s in secrets if s}, key=len, reverse=True)))


def _shown_scheme(text: str) -> str:
    """A URL's scheme as given, shown only if it is a plain word (else ``?``): it is said back in a
    message, and the rest of what was given may be a password."""
    return text if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]{0,30}", text) else "?"


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
    """``text`` with anything between ``://`` and ``@`` hidden, since it may hold a password, and
    with no query (``?password=``)."""
    scheme, sep, rest = text.partition("://")
    rest = rest.partition("?")[0]
    if sep and "@" in rest:
        return f"{scheme}://***@{rest.rsplit('@', 1)[1]}"
    return f"{scheme}{sep}{rest}"


def create_engine(store: StoreUrl, *, read_only: bool = False):
    """A SQLAlchemy engine for ``store``, set up as the module docstring says (no connection yet);
    ``read_only``: one that neither changes nor locks the database (nor creates a SQLite file)."""
    import sqlite3

    import sqlalchemy

    if store.dialect == "postgresql":
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise StoreError(f"{store.shown}: a PostgreSQL store needs psycopg; install it with "
                             f"{POSTGRESQL_EXTRA}") from None
        options = {"options": "-c default_transaction_read_only=on"} if read_only else {}
        return sqlalchemy.create_engine(store.url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S, **options},
                                        pool_pre_ping=False)
    if read_only:
        connect = functools.partial(_connect_read_only, store.sqlite_path, store.busy_timeout_s)
    else:
        connect = functools.partial(sqlite3.connect, _file_uri(_writable_sqlite(store), "mode=rw"), uri=True,
                                    timeout=store.busy_timeout_s)

    # one connection kept for the store's life (closing the last one checkpoints the WAL each time)
    engine = sqlalchemy.create_engine("sqlite://", creator=connect, poolclass=sqlalchemy.pool.SingletonThreadPool)
    sqlalchemy.event.listen(engine, "connect", functools.partial(_sqlite_connected, store=store, read_only=read_only))
    sqlalchemy.event.listen(engine, "begin", _sqlite_begin)
    return engine


def _file_uri(path: Path, query: str) -> str:
    return f"file:{quote(str(path), errors='surrogateescape')}?{query}"


def _connect_read_only(path: Path, timeout_s: float) -> sqlite3.Connection:
    """A connection that can only read ``path``. A WAL database needs its ``-shm`` file to be read;
    where that is missing and cannot be made (a store another user owns, in a directory we cannot
    write), no writer can be at work on it (a writer keeps both files), and the file is read as
    immutable: SQLite then takes no lock at all."""
    import sqlite3

    connection = sqlite3.connect(_file_uri(path, "mode=ro"), uri=True, timeout=timeout_s)
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return connection
    except sqlite3.OperationalError as exc:
        connection.close()
        if "readonly" not in str(exc) or os.path.exists(f"{path}-shm") or os.access(path.parent, os.W_OK):
            raise
    return sqlite3.connect(_file_uri(path, "mode=ro&immutable=1"), uri=True, timeout=timeout_s)


SQLITE_FILES = ("", "-wal", "-shm", "-journal")  # the database and what SQLite writes beside it


def _writable_sqlite(store: StoreUrl) -> Path:
    """The SQLite file to write ``store`` in: its path with links followed, once it and the files
    SQLite writes beside it passed ``outputs.check_target`` (no link another user planted, no
    journal), its directory made, and the file created here if new, through no link (``O_NOFOLLOW``,
    ``O_EXCL``): then SQLite opens a regular file that no one else may swap in a sticky directory."""
    try:
        path = check_target(store.sqlite_path)
        for suffix in SQLITE_FILES[1:]:
            check_target(f"{path}{suffix}")
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))
    except OSError as exc:
        raise StoreError(f"{store.shown}: cannot write it ({exc.strerror or exc})") from None
    return path


def _sqlite_connected(dbapi_connection, _record, *, store: StoreUrl, read_only: bool) -> None:
    """A pairbench store or a new file (never another program's database, which is left as it is);
    for writing, WAL (kept by the file once set), foreign keys, and transactions begun by us (see
    ``begin``); for reading, queries only."""
    dbapi_connection.isolation_level = None  # the driver begins nothing by itself
    cursor = dbapi_connection.cursor()
    try:
        tables = sorted(row[0] for row in cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        if tables and "schema_version" not in tables:
            listed = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            raise StoreError(f"{store.shown} is another program's database (its tables: {listed}), not a "
                             "pairbench store; nothing was changed. Give --store a file of its own")
        if read_only:
            cursor.execute("PRAGMA query_only=ON")
        else:
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
        raise StoreError(f"{store.shown}: {doing} was refused by the database ({_first_line(error, store)}); "
                         "nothing of it was kept") from None
    except sa.DBAPIError as error:
        raise StoreError(f"{store.shown}: {doing} failed ({_first_line(error, store)}); nothing of it was "
                         "kept") from None
    except UnicodeEncodeError:  # text the driver cannot send (history.storable escapes what pairbench stores)
        raise StoreError(f"{store.shown}: {doing} failed: text that is not UTF-8, which the database cannot "
                         "take; nothing of it was kept") from None


def _operational(store: StoreUrl, doing: str, error) -> str:
    said = _first_line(error, store)
    if store.dialect == "sqlite" and "locked" in said:
        return (f"{store.shown} is locked by another process (waited {store.busy_timeout_s:g} s) while "
                f"{doing}; nothing of it was kept. Try again when the other writer is done, or give the "
                "URL a longer ?timeout=SECONDS")
    if store.dialect == "sqlite":
        return f"{store.shown}: cannot use the SQLite file while {doing} ({said})"
    return (f"cannot reach the store {store.shown} while {doing} ({said}); check that the server runs "
            "and the URL's host, port, database, user and password")


def _first_line(error, store: StoreUrl) -> str:
    """What the driver said, on one line, without the store's secrets."""
    original = getattr(error, "orig", None) or error
    return store.scrubbed(" ".join(str(original).split()))[:300] or type(original).__name__
