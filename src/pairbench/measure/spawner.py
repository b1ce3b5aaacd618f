"""Run commands from a small helper process, so a command's max RSS is its own, not pairbench's.

Linux charges the spawning process's resident set to a child at ``exec``, so a
command started from pairbench (numpy, scipy, rich loaded: ~100 MB) is never
reported below ~100 MB (see ``measure.posix``). A :class:`SpawnerExecutor`
therefore starts, once, a fresh ``python -S -I`` that imports only
``pairbench.measure.posix`` and the standard library (~13 MB), and asks it over
two dedicated pipes to run each command with an ordinary
:class:`~pairbench.measure.posix.PosixExecutor`. The timed window is inside the
spawner, so the pipe round trip is not part of any sample; ``start_ns`` is on
CLOCK_MONOTONIC, which is system-wide, so :meth:`SpawnerExecutor.now_ns` in this
process agrees with it.

The protocol is one JSON list per line. Requests: ``["run", timeout_ns, shell,
text, arg...]`` (arguments as their OS bytes, latin-1 decoded, so any bytes
survive), ``["floor"]`` and ``["sync", n]``. Replies: ``["ok", <Execution
fields>]``, ``["err", class name, message]`` (``CommandNotFound``,
``MeasurementError``, ``UsageError``: re-raised here with the same message),
``["int"]``, ``["floor", kib]``, ``["sync", n]``. At start the parent sends its
environment (as bytes), the output policy and the grace period; the spawner
answers ``["ready", floor_kib]`` or an error (an unwritable output file is a
``UsageError``, as in process).

Ctrl-C: the spawner leads its own process group, so the terminal's SIGINT
reaches only pairbench. When the wait for a reply is interrupted (by
``KeyboardInterrupt`` or any other exception), pairbench, with SIGINT held off,
sends the spawner one SIGINT, which interrupts ``PosixExecutor.run`` there (it
kills and reaps the command's process group), then a ``sync`` request (after a
newline, if the interruption cut the request's own line short: the spawner
answers that torn line with an error), and reads replies up to the matching
``sync``; then the exception propagates. The spawner stays usable: a SIGINT it
receives while idle only marks the next run as cancelled, and ``sync`` clears
that mark. A spawner that does not answer ``sync`` within the kill grace period
plus ``CANCEL_TIMEOUT_S`` is taken for dead and killed.

If pairbench dies, the spawner dies with it and kills a running command's group:
``PR_SET_PDEATHSIG`` (Linux; it fires when the *thread* that created the
executor exits, so create it from the main thread) sends it SIGTERM, which
interrupts the run the same way; elsewhere a thread watching the request pipe
for hang-up does. Idle, it exits at end of file on its request pipe; that is how
:meth:`SpawnerExecutor.close` stops it. If the spawner itself is killed while a
command runs, that command is not cleaned up.

If the spawner cannot be started (no ``sys.executable``, an import failure, no
answer within ``STARTUP_TIMEOUT_S``), the executor falls back to an in-process
``PosixExecutor`` and says so in ``notes``. Commands run in the working
directory the executor was created in.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import threading
import time

from pairbench.command import Command
from pairbench.errors import CommandNotFound, MeasurementError, PairbenchError, UsageError
from pairbench.measure.executor import Execution, ExecutorInfo, OutputPolicy
from pairbench.measure.posix import PosixExecutor
from pairbench.notes import Note

STARTUP_TIMEOUT_S = 10.0
"""How long the spawner may take to answer ``ready`` before the in-process fallback is used."""
CANCEL_TIMEOUT_S = 5.0
"""How long, beyond the kill grace period, a cancelled run may take to answer ``sync`` before the
spawner is taken for dead and killed."""

_NULL_OUTPUT = OutputPolicy()
_ERRORS = {cls.__name__: cls for cls in (CommandNotFound, MeasurementError, UsageError)}
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_INTERRUPTED = b'["int"]\n'
_CACHED_REQUESTS = 256  # encoded requests kept per side, for commands run again and again

# The spawner's entry point. Any failure to import is reported on the reply pipe
# (not on stderr, which belongs to the commands) so the parent can fall back.
_BOOTSTRAP = """\
import os, sys
try:
    sys.path.insert(0, sys.argv[1])
    from pairbench.measure.spawner import serve
except BaseException as exc:
    import json
    os.write(int(sys.argv[3]), json.dumps(["fatal", repr(exc)]).encode() + b"\\n")
    raise SystemExit(70)
serve(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
"""


class _SpawnerGone(Exception):
    """The spawner closed its end of a pipe: it exited or was killed."""


class SpawnerExecutor:
    """Runs commands one at a time from a small helper process and measures what each one cost.

    The same protocol as :class:`~pairbench.measure.posix.PosixExecutor` (and
    the same ``output`` and ``kill_grace_s``), but a command's max RSS is not
    raised to pairbench's own size; see the module docstring. ``notes`` says,
    for the user, if the in-process fallback is in use; ``spawner_pid`` is the
    helper's pid (``None`` in the fallback). Use as a context manager or call
    :meth:`close`.

    >>> from pairbench.measure.commandline import parse_command
    >>> with SpawnerExecutor() as ex:
    ...     ex.run(parse_command("true")).status
    0
    """

    def __init__(
        self,
        output: OutputPolicy = _NULL_OUTPUT,
        kill_grace_s: float = 0.5,
        *,
        _lifeline: bool = False,
    ):
        if not kill_grace_s >= 0:
            raise UsageError(f"`kill_grace_s` must be >= 0 seconds, got {kill_grace_s!r}")
        self.output = output
        self.kill_grace_s = float(kill_grace_s)
        self.notes: tuple[Note, ...] = ()
        self.spawner_pid: int | None = None
        self._inner: PosixExecutor | None = None
        self._closed = False
        self._proc = None
        self._requests: dict = {}
        self._floor_kib = 0
        self._syncs = 0
        self._line_open = False  # a request is being written: its line may be cut short
        try:
            self._start(_lifeline)
        except _SpawnerGone as why:
            self._inner = PosixExecutor(output, kill_grace_s)
            self._floor_kib = self._inner.rss_floor_kib()
            self.notes = (Note("executor-fallback", {"reason": str(why), "floor_kib": self._floor_kib},
                               message=f"the small spawner process could not be started ({why})"),)

    # -- protocol -----------------------------------------------------------------

    def run(self, command: Command, *, timeout_ns: int | None = None) -> Execution:
        """Run ``command`` once in the spawner and return its :class:`Execution`.

        Raises what ``PosixExecutor.run`` raises (``CommandNotFound``,
        ``UsageError``), and ``MeasurementError`` if the spawner has died.
        """
        if self._inner is not None:
            return self._inner.run(command, timeout_ns=timeout_ns)
        if self._closed:
            raise MeasurementError("this executor is closed; create a new SpawnerExecutor")
        key = (command, timeout_ns)
        request = self._requests.get(key)
        if request is None:
            if len(self._requests) >= _CACHED_REQUESTS:
                self._requests.clear()
            request = self._requests[key] = _run_request(command, timeout_ns)
        reply = self._call(request)
        if reply[0] == "ok":
            return Execution(*reply[1:])
        if reply[0] == "int":  # someone else sent the spawner SIGINT or SIGTERM
            raise KeyboardInterrupt
        raise _reply_error(reply)

    def rss_floor_kib(self) -> int:
        """The spawner's resident set size now, KiB: the smallest max RSS a command can be reported with.

        As for ``PosixExecutor.rss_floor_kib``, but of the spawner, which is
        what the commands start from (in the fallback: of this process).
        """
        if self._inner is not None:
            return self._inner.rss_floor_kib()
        if not self._closed:
            reply = self._call(b'["floor"]\n')
            if reply[0] == "floor":
                self._floor_kib = reply[1]
        return self._floor_kib

    def info(self) -> ExecutorInfo:
        """The spawner's size is the RSS floor (pairbench's own in the fallback, said in ``notes``)."""
        return ExecutorInfo(type(self).__name__, self.rss_floor_kib() or None, self.notes)

    def now_ns(self) -> int:
        """The monotonic clock the samples are timed with (CLOCK_MONOTONIC, shared with the spawner)."""
        return time.monotonic_ns()

    def close(self) -> None:
        """Stop the spawner (end of file on its request pipe, then SIGKILL if it lingers); idempotent."""
        if self._inner is not None:
            self._inner.close()
            return
        if self._closed:
            return
        self._closed = True
        os.close(self._request_fd)
        self._stop_spawner(timeout_s=self.kill_grace_s + 2.0)
        os.close(self._replies.fd)

    def __enter__(self) -> SpawnerExecutor:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- talking to the spawner ---------------------------------------------------

    def _call(self, request: bytes) -> list:
        """Send one request and return its reply; on any interruption, cancel it first."""
        try:
            self._line_open = True
            _write_all(self._request_fd, request)
            self._line_open = False
            line = self._replies.read()
            if line is None:
                raise _SpawnerGone("end of file")
            return json.loads(line)
        except (_SpawnerGone, BrokenPipeError):
            raise self._spawner_died() from None
        except BaseException:
            self._cancel()
            raise

    def _cancel(self) -> None:
        """Interrupt the spawner's current run (if any) and wait until it is idle again.

        SIGINT is held off meanwhile, so a second Ctrl-C cannot leave the
        command running or a reply unread; it takes effect afterwards.
        """
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        deadline = time.monotonic() + self.kill_grace_s + CANCEL_TIMEOUT_S
        try:
            self._syncs += 1
            expected = ["sync", self._syncs]
            os.kill(self._proc.pid, signal.SIGINT)
            torn = b"\n" if self._line_open else b""  # end a request cut short, so "sync" is read whole
            self._line_open = False
            _write_all(self._request_fd, torn + json.dumps(expected).encode() + b"\n", deadline=deadline)
            while True:
                line = self._replies.read(timeout_s=max(0.0, deadline - time.monotonic()))
                if line is None:
                    raise _SpawnerGone("no answer")
                if line.startswith(b'["sync"') and json.loads(line) == expected:
                    return
        except (_SpawnerGone, OSError):
            with contextlib.suppress(OSError):
                self._proc.kill()  # exited, or hung: either way it is not coming back
            self._spawner_died()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def _spawner_died(self) -> MeasurementError:
        """Mark this executor closed after the spawner's death, and say so."""
        status = self._stop_spawner(timeout_s=1.0)
        if not self._closed:
            self._closed = True
            os.close(self._request_fd)
            os.close(self._replies.fd)
        return MeasurementError(
            f"pairbench's spawner process (pid {self.spawner_pid}) exited unexpectedly "
            f"(status {status}); a command it was running may still be alive"
        )

    # -- starting and stopping ----------------------------------------------------

    def _start(self, lifeline: bool) -> None:
        """Start the spawner and wait for it to be ready; ``_SpawnerGone`` says why not."""
        import subprocess  # here, not at the top: the spawner process does not need it

        executable = sys.executable
        if not executable or not os.access(executable, os.X_OK):
            raise _SpawnerGone(
                f"no Python interpreter to run it with: sys.executable is {executable!r}"
            )
        request_r, self._request_fd = os.pipe()
        reply_r, reply_w = os.pipe()
        self._replies = _LineReader(reply_r)
        group = {"process_group": 0} if sys.version_info >= (3, 11) else {}
        argv = [executable, "-S", "-I", "-c", _BOOTSTRAP, _package_root()]
        try:
            self._proc = subprocess.Popen(
                [*argv, str(request_r), str(reply_w), str(os.getpid())],
                stdin=subprocess.DEVNULL,
                pass_fds=(request_r, reply_w),
                **group,
            )
        except OSError as exc:
            os.close(self._request_fd)
            os.close(reply_r)
            raise _SpawnerGone(f"cannot start {executable}: {exc.strerror or exc}") from None
        finally:
            os.close(request_r)
            os.close(reply_w)
        self.spawner_pid = self._proc.pid
        try:
            self._handshake(lifeline)
        except BaseException:
            self._closed = True
            os.close(self._request_fd)
            self._stop_spawner(timeout_s=1.0)
            os.close(reply_r)
            self.spawner_pid = None
            raise

    def _handshake(self, lifeline: bool) -> None:
        """Send the set-up (environment, output, grace) and read ``ready``."""
        environ = os.environb if os.supports_bytes_environ else {}
        hello = {
            "env": [[_wire(k), _wire(v)] for k, v in environ.items()],
            "output": [self.output.mode, self.output.path],
            "grace": self.kill_grace_s,
            "lifeline": lifeline,
        }
        with contextlib.suppress(BrokenPipeError):  # it died at once; the reply pipe says why
            _write_all(self._request_fd, json.dumps(hello).encode() + b"\n")
        line = self._replies.read(timeout_s=STARTUP_TIMEOUT_S)
        if line is None:
            raise _SpawnerGone(f"it exited, or did not answer within {STARTUP_TIMEOUT_S:g} s")
        try:
            reply = json.loads(line)
        except ValueError:
            raise _SpawnerGone(f"unexpected answer {line[:200]!r}") from None
        if reply[0] == "ready":
            self._floor_kib = reply[1]
        elif reply[0] == "err":
            raise _reply_error(reply)
        else:
            raise _SpawnerGone(str(reply[-1]))

    def _stop_spawner(self, timeout_s: float):
        """Wait up to ``timeout_s`` for the spawner to exit, then SIGKILL it; its exit status."""
        import subprocess

        try:
            return self._proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            return self._proc.wait()


# -- both sides: encoding ---------------------------------------------------------


def _wire(value: str | bytes) -> str:
    """An OS string as its bytes, decoded as latin-1 so JSON carries every byte."""
    return (value if isinstance(value, bytes) else os.fsencode(value)).decode("latin-1")


def _unwire(text: str) -> bytes:
    return text.encode("latin-1")


def _run_request(command: Command, timeout_ns: int | None) -> bytes:
    args = [_wire(arg) for arg in command.argv]
    return json.dumps(["run", timeout_ns, command.shell, command.text, *args]).encode() + b"\n"


def _error_reply(exc: BaseException) -> bytes:
    """``["err", class, message]`` for an exception raised in the spawner."""
    name = type(exc).__name__
    if name not in _ERRORS:
        name = "MeasurementError"
        if not isinstance(exc, PairbenchError):
            exc = f"pairbench's spawner process failed: {type(exc).__name__}: {exc}"
    return json.dumps(["err", name, str(exc)]).encode() + b"\n"


def _reply_error(reply: list) -> PairbenchError:
    """The exception an ``err`` reply stands for (anything unexpected: ``MeasurementError``)."""
    if reply[0] == "err" and len(reply) == 3:
        return _ERRORS.get(reply[1], MeasurementError)(reply[2])
    return MeasurementError(f"pairbench's spawner process sent an unexpected reply: {reply!r}")


def _package_root() -> str:
    """The directory holding the ``pairbench`` package, for the spawner's ``sys.path``."""
    import pairbench

    return os.path.dirname(os.path.dirname(os.path.abspath(pairbench.__file__)))


def _write_all(fd: int, data: bytes, *, deadline: float | None = None) -> None:
    """Write all of ``data``; by the ``time.monotonic()`` ``deadline``, if one is given, or raise
    ``_SpawnerGone`` (the reader stopped reading)."""
    view = memoryview(data)
    while view:
        if deadline is not None:
            left_s = max(0.0, deadline - time.monotonic())
            if not select.select([], [fd], [], left_s)[1]:
                raise _SpawnerGone("it stopped reading its requests")
        view = view[os.write(fd, view) :]


class _LineReader:
    """Reads newline-terminated lines from a pipe, keeping what follows a line for the next call."""

    def __init__(self, fd: int):
        self.fd = fd
        self._buffer = b""

    def read(self, timeout_s: float | None = None) -> bytes | None:
        """The next line without its newline; ``None`` at end of file or after ``timeout_s``."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 1 :]
                return line
            if deadline is not None:
                left_s = max(0.0, deadline - time.monotonic())
                if not select.select([self.fd], [], [], left_s)[0]:
                    return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk


# -- the spawner side -------------------------------------------------------------


class _State:
    """What the spawner's signal handler needs to know (module level: one per process)."""

    running = False  # inside PosixExecutor.run: a signal interrupts it
    cancelled = False  # SIGINT arrived while idle: the next run is cancelled (until "sync")
    exiting = False  # SIGTERM arrived: finish the current request, then exit


def _on_signal(signum, frame) -> None:
    """SIGINT cancels the current (or next) run; SIGTERM also makes the spawner exit."""
    if signum != signal.SIGINT:
        _State.exiting = True
    if _State.running:
        raise KeyboardInterrupt  # PosixExecutor.run kills and reaps the command's group
    if _State.exiting:
        raise SystemExit(0)
    _State.cancelled = True


def serve(request_fd: int, reply_fd: int, parent_pid: int) -> None:
    """The spawner's main loop: set up from the parent's hello, then answer requests until EOF."""
    with contextlib.suppress(
        OSError
    ):  # out of pairbench's group: the terminal's Ctrl-C is the parent's
        os.setpgid(0, 0)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)  # caught, so commands get SIG_DFL back at exec
    requests = _LineReader(request_fd)
    line = requests.read()
    if line is None:
        return
    hello = json.loads(line)
    if hello["lifeline"] or not _die_with_parent():
        _watch_request_pipe(request_fd)
    if os.getppid() != parent_pid:
        return  # the parent died before we were watching it
    if os.supports_bytes_environ:
        os.environb.clear()  # exactly the parent's, without Python's locale coercion here
        os.environb.update((_unwire(k), _unwire(v)) for k, v in hello["env"])
    try:
        executor = PosixExecutor(OutputPolicy(*hello["output"]), hello["grace"])
    except PairbenchError as exc:
        _write_all(reply_fd, _error_reply(exc))
        return
    with executor:
        try:
            _write_all(reply_fd, json.dumps(["ready", executor.rss_floor_kib()]).encode() + b"\n")
            _answer_requests(executor, requests, reply_fd)
        except BrokenPipeError:
            pass  # the parent is gone; nothing is running any more, so just exit


def _answer_requests(executor: PosixExecutor, requests: _LineReader, reply_fd: int) -> None:
    commands: dict[bytes, tuple[Command, int | None]] = {}  # request line -> parsed, for repeats
    while not _State.exiting:
        line = requests.read()
        if line is None:
            return
        try:
            parsed = commands.get(line)
            if parsed is None:
                request = json.loads(line)
                if request[0] != "run":
                    _write_all(reply_fd, _answer_other(executor, request))
                    continue
                if len(commands) >= _CACHED_REQUESTS:
                    commands.clear()
                parsed = commands[line] = _parse_run(request)
            reply = _run(executor, *parsed)
        except Exception as exc:  # a bad request or a bug: say so, and stay up
            reply = _error_reply(exc)
        _write_all(reply_fd, reply)


def _parse_run(request: list) -> tuple[Command, int | None]:
    _, timeout_ns, shell, text, *args = request
    argv = tuple(os.fsdecode(_unwire(arg)) for arg in args)
    return Command(text, argv, shell), timeout_ns


def _answer_other(executor: PosixExecutor, request: list) -> bytes:
    if request[0] == "sync":
        _State.cancelled = False
        return json.dumps(request).encode() + b"\n"
    if request[0] == "floor":
        return json.dumps(["floor", executor.rss_floor_kib()]).encode() + b"\n"
    raise ValueError(f"unknown request {request!r}")


def _run(executor: PosixExecutor, command: Command, timeout_ns: int | None) -> bytes:
    """Run one command; an interruption (SIGINT or SIGTERM) becomes the ``int`` reply."""
    try:
        _State.running = True
        try:
            if _State.cancelled:
                _State.cancelled = False
                raise KeyboardInterrupt
            execution = executor.run(command, timeout_ns=timeout_ns)
        finally:
            _State.running = False
    except KeyboardInterrupt:
        _State.running = False
        return _INTERRUPTED
    except PairbenchError as exc:
        return _error_reply(exc)
    return json.dumps(["ok", *vars(execution).values()]).encode() + b"\n"


def _die_with_parent() -> bool:
    """Ask Linux for SIGTERM when our parent dies (``PR_SET_PDEATHSIG``); False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False


def _watch_request_pipe(request_fd: int) -> None:
    """Without PDEATHSIG: a thread sends us SIGTERM when every writer of the request pipe is gone.

    The thread holds SIGINT and SIGTERM blocked, so they reach the main thread,
    which may be waiting in ``wait4``.
    """
    main = threading.main_thread().ident

    def watch():
        poller = select.poll()
        poller.register(request_fd, 0)  # POLLHUP and POLLERR are reported without asking
        while not poller.poll():
            pass
        signal.pthread_kill(main, signal.SIGTERM)

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        threading.Thread(target=watch, name="pairbench-lifeline", daemon=True).start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
