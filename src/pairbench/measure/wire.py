"""The spawner's wire: one JSON list per line over two pipes, each reply bound to its request.

Used by both ends (``measure.spawner``): the encoding of requests and replies,
the check that a reply answers the request it is read for (its id, kind and the
types of its fields: anything else is a :class:`BadReply`), and the two pipe
primitives, :func:`write_all` and :class:`LineReader`, which never block on a
pipe once the process at its other end has exited, even if another process
holds the pipe open, and the pidfd they watch that process with (:func:`pidfd_of`,
:func:`exit_wait_s`). See ``measure.spawner`` for the protocol itself. Like the
executor, this module imports nothing beyond the standard library and
pairbench's vocabulary.
"""

from __future__ import annotations

import json
import os
import re
import select
import time

from pairbench.command import Command, Execution
from pairbench.errors import CommandNotFound, MeasurementError, PairbenchError, UsageError

LIVENESS_POLL_S = 0.1
"""Without a pidfd: how often a wait for a line checks that the writer is still alive."""
HANDSHAKE_ID = 0  # the id of the hello's reply; requests count from 1
ERRORS = {cls.__name__: cls for cls in (CommandNotFound, MeasurementError, UsageError)}
"""The errors that cross the pipe with their class (any other is a ``MeasurementError``)."""
EXECUTION_FIELDS = ("wall_ns", "start_ns", "status", "user_ns", "sys_ns", "max_rss_kib", "voluntary_cs",
                    "involuntary_cs", "leftover_processes", "escaped_processes")
"""The fields of an ``ok`` reply, in order: the ``Execution`` of a command (the native spawner writes them)."""
REPLY_FIELDS = {"ok": (int,) * len(EXECUTION_FIELDS), "err": (str, str), "int": (), "floor": (int,),
                "sync": (), "ready": (int, str, str, str, str), "noexec": (int,)}
"""The fields of each kind of reply after its id and kind, by type."""
_JSON_INT = rb"-?(?:0|[1-9][0-9]*)"
_COMPACT_OK = re.compile(rb'\[(%s),"ok",((?:%s,){%d}%s)\]' % (_JSON_INT, _JSON_INT, len(EXECUTION_FIELDS) - 1,
                                                           _JSON_INT))
"""An ``ok`` reply as the native spawner writes it, JSON with no spaces: read without ``json`` (a
fifth of its cost between two samples, where every step runs cache-cold); any other line takes
the JSON route, which accepts every line this does."""


class SpawnerGone(Exception):
    """The spawner closed its end of a pipe, exited or was killed."""


class BadReply(Exception):
    """A reply that is not JSON, has the wrong shape, or answers another request."""


def wire(value: str | bytes) -> str:
    """An OS string as its bytes, decoded as latin-1 so JSON carries every byte."""
    return (value if isinstance(value, bytes) else os.fsencode(value)).decode("latin-1")


def unwire(text: str) -> bytes:
    """The OS bytes :func:`wire` carried."""
    return text.encode("latin-1")


def run_request(command: Command, timeout_ns: int | None) -> bytes:
    """A run request after its id: ``"run",timeout,shell,text,args...]`` and the newline."""
    args = [wire(arg) for arg in command.argv]
    return json.dumps(["run", timeout_ns, command.shell, command.text, *args]).encode()[1:] + b"\n"


def encode_reply(request_id: int | None, kind: str, *fields) -> bytes:
    """``[id, kind, field...]`` and the newline."""
    return json.dumps([request_id, kind, *fields]).encode() + b"\n"


def ok_reply(request_id: int, execution: Execution) -> bytes:
    return encode_reply(request_id, "ok", *(getattr(execution, name) for name in EXECUTION_FIELDS))


def execution_of(checked: list) -> Execution:
    """The ``Execution`` a checked ``ok`` reply holds (``EXECUTION_FIELDS`` are its first fields, in
    order: tests/measure/test_wire.py holds them)."""
    return Execution(*checked[2:])


def error_reply(exc: BaseException, request_id: int | None = None) -> bytes:
    """``[id, "err", class, message]`` for an exception raised in the spawner."""
    name = type(exc).__name__
    if name not in ERRORS:
        name = "MeasurementError"
        if not isinstance(exc, PairbenchError):
            exc = f"pairbench's spawner process failed: {type(exc).__name__}: {exc}"
    return encode_reply(request_id, "err", name, str(exc))


def reply_error(checked: list) -> PairbenchError:
    """The exception a checked ``err`` reply stands for (an unknown class: ``MeasurementError``)."""
    return ERRORS.get(checked[2], MeasurementError)(checked[3])


def checked_reply(line: bytes, request_id: int, kinds: tuple[str, ...]) -> list:
    """The reply ``line`` holds, if it answers request ``request_id`` with one of ``kinds`` and the
    fields of its kind; else ``BadReply`` saying what is wrong."""
    compact = _COMPACT_OK.fullmatch(line) if "ok" in kinds else None
    if compact is not None and int(compact[1]) == request_id:
        return [request_id, "ok", *map(int, compact[2].split(b","))]
    return _checked_json(line, request_id, kinds)


def _checked_json(line: bytes, request_id: int, kinds: tuple[str, ...]) -> list:
    """``checked_reply`` of any line, through ``json``."""
    try:
        reply = json.loads(line)
    except (ValueError, RecursionError):
        raise BadReply(f"a malformed reply {line[:80]!r}") from None
    if not (isinstance(reply, list) and len(reply) >= 2 and reply[1] in REPLY_FIELDS):
        raise BadReply(f"a malformed reply {line[:80]!r}")
    if type(reply[0]) is not int or reply[0] != request_id:
        raise BadReply(f"a reply to another request ({reply[0]!r}, expected {request_id}): {line[:80]!r}")
    kind, fields = reply[1], reply[2:]
    types = REPLY_FIELDS[kind]
    if kind not in kinds or len(fields) != len(types) or not all(
            type(value) is wanted for value, wanted in zip(fields, types, strict=True)):
        raise BadReply(f"a malformed reply to request {request_id}: {line[:80]!r}")
    return reply


def write_all(fd: int, data: bytes, *, deadline: float | None = None, pidfd: int | None = None) -> None:
    """Write all of ``data`` to the pipe ``fd``.

    On a non-blocking ``fd`` (the parent's request pipe) a full pipe is waited
    for, never blocked on: ``SpawnerGone`` if the process ``pidfd`` watches exits
    first (even while another process holds the pipe open, so the write would
    never fail), or, with a ``time.monotonic()`` ``deadline``, if the reader does
    not read until then. The usual case is one ``write``.
    """
    view = memoryview(data)
    poller = None
    while view:
        try:
            view = view[os.write(fd, view) :]
            continue
        except BlockingIOError:
            pass
        if poller is None:
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
            if pidfd is not None:
                poller.register(pidfd, select.POLLIN)
        left_ms = None if deadline is None else max(0, round((deadline - time.monotonic()) * 1000))
        events = dict(poller.poll(left_ms))
        if not events:
            raise SpawnerGone("it stopped reading its requests")
        if fd not in events:
            raise SpawnerGone("it exited")
        if events[fd] & select.POLLERR:
            raise BrokenPipeError


class LineReader:
    """Reads newline-terminated lines from a pipe, keeping what follows a line for the next call.

    With ``pidfd`` (or ``alive``, polled every ``LIVENESS_POLL_S``) a wait for a
    line ends when the writing process exits, even if another process holds
    the pipe open.
    """

    def __init__(self, fd: int, *, pidfd: int | None = None, alive=None):
        self.fd = fd
        self._buffer = b""
        self._poller = select.poll()
        self._poller.register(fd, select.POLLIN)
        self._pidfd = pidfd
        self._alive = None if pidfd is not None else alive
        if pidfd is not None:
            self._poller.register(pidfd, select.POLLIN)

    def read(self, timeout_s: float | None = None) -> bytes | None:
        """The next line without its newline; ``None`` at end of file, when the writer exited, or
        after ``timeout_s``."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 1 :]
                return line
            if not self._wait(deadline):
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk

    def _wait(self, deadline: float | None) -> bool:
        """Wait until the pipe can be read; False after ``deadline`` or once the writer is dead and
        nothing is left to read."""
        if deadline is None and self._alive is None:
            if self._pidfd is None:
                return True  # nothing to watch: the read itself waits (the spawner's side)
            if any(fd == self.fd for fd, _ in self._poller.poll()):  # the usual wait for a reply
                return True
            return bool(select.select([self.fd], [], [], 0)[0])  # exited: what it wrote is left
        while True:
            left_s = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self._alive is not None and (left_s is None or left_s > LIVENESS_POLL_S):
                left_s = LIVENESS_POLL_S
            events = dict(self._poller.poll(None if left_s is None else round(left_s * 1000)))
            if self.fd in events:
                return True
            if self._pidfd in events or (self._alive is not None and not self._alive()):
                # exited: whatever it wrote before exiting is still readable
                return bool(select.select([self.fd], [], [], 0)[0])
            if deadline is not None and time.monotonic() >= deadline:
                return False


def exit_wait_s(pidfd: int | None, timeout_s: float) -> float:
    """Wait on ``pidfd`` until its process exits, at most ``timeout_s``; how long ``Popen.wait``
    should then wait: 0 once it has exited, or ``timeout_s`` without a pidfd. ``Popen.wait`` alone
    looks every 0.5 to 50 ms (doubling), so it would see an exit several ms after a compare's last
    sample; a pidfd is readable the moment it happens."""
    if pidfd is None:
        return timeout_s
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.poll(round(timeout_s * 1000))
    return 0.0


def pidfd_of(pid: int) -> int | None:
    """A pidfd of ``pid`` (readable once it exits), or None where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def split_request(line: bytes) -> tuple[int | None, bytes]:
    """``b'[12,"run",...]'`` -> ``(12, b'"run",...]')``; ``(None, line)`` if it has no id."""
    comma = line.find(b",", 0, 24)
    if line.startswith(b"[") and comma > 1 and line[1:comma].isdigit():
        return int(line[1:comma]), line[comma + 1 :]
    return None, line


def parse_run(request: list) -> tuple[Command, int | None]:
    """The command and timeout of a decoded ``["run", timeout_ns, shell, text, arg...]``."""
    _, timeout_ns, shell, text, *args = request
    argv = tuple(os.fsdecode(unwire(arg)) for arg in args)
    return Command(text, argv, shell), timeout_ns
