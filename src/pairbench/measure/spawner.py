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

The protocol (encoded and checked by ``measure.wire``) is one JSON list per
line, and every request carries an id that its reply echoes. Requests: ``[id, "run", timeout_ns, shell, text, arg...]``
(arguments as their OS bytes, latin-1 decoded, so any bytes survive), ``[id,
"floor"]`` and ``[id, "sync"]``. Replies: ``[id, "ok", <Execution fields>]``,
``[id, "err", class name, message]`` (``CommandNotFound``, ``MeasurementError``,
``UsageError``: re-raised here with the same message), ``[id, "int"]``, ``[id,
"floor", kib]``, ``[id, "sync"]``. A reply that is not JSON, has the wrong shape,
or answers another request is a ``MeasurementError``, and the spawner is stopped:
its channel is no longer trusted. At start the parent sends its environment (as
bytes), the output policy and the grace period; the spawner answers ``[0,
"ready", floor_kib]`` or an error (an unwritable output file is a ``UsageError``,
as in process).

The two pipes are the spawner's alone: it marks them close-on-exec, and the
executor closes every other inherited descriptor in each command
(``PosixExecutor``), so no command sees a descriptor beyond 0-2 and none can
write a reply. The spawner is a child subreaper (Linux): a daemon a command
starts, even one that calls ``setsid`` and so leaves the command's process
group, becomes the spawner's child when its parent exits, and is counted in
``Execution.leftover_processes`` and killed after the sample like any other
leftover. pairbench watches the spawner itself through a pidfd (elsewhere: by
polling it), so a dead spawner is noticed at once, even if some process still
holds one of the pipes; a request is written only as the pipe has room for it.

Ctrl-C: the spawner leads its own process group, so the terminal's SIGINT
reaches only pairbench. When the wait for a reply is interrupted (by
``KeyboardInterrupt`` or any other exception), pairbench, with SIGINT, SIGTERM and
SIGHUP held off,
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
interrupts the run the same way (as does SIGHUP); elsewhere a thread watching the
request pipe for hang-up does. Idle, it exits at end of file on its request pipe;
that is how :meth:`SpawnerExecutor.close` stops it. If the spawner itself is
killed while a command runs, pairbench notices at once but that command is not
cleaned up (the error says so).

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
from pairbench.errors import MeasurementError, PairbenchError, UsageError
from pairbench.measure import wire
from pairbench.measure.executor import Execution, ExecutorInfo, OutputPolicy
from pairbench.measure.leftovers import become_subreaper
from pairbench.measure.posix import PosixExecutor
from pairbench.notes import Note

STARTUP_TIMEOUT_S = 10.0
"""How long the spawner may take to answer ``ready`` before the in-process fallback is used."""
CANCEL_TIMEOUT_S = 5.0
"""How long, beyond the kill grace period, a cancelled run may take to answer ``sync`` before the
spawner is taken for dead and killed."""

_NULL_OUTPUT = OutputPolicy()
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_CACHED_REQUESTS = 256  # encoded requests kept per side, for commands run again and again
_HELD_OFF = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # while a run is being cancelled

# The spawner's entry point. Any failure to import is reported on the reply pipe
# (not on stderr, which belongs to the commands) so the parent can fall back.
_BOOTSTRAP = """\
import os, sys
try:
    sys.path.insert(0, sys.argv[1])
    from pairbench.measure.spawner import serve
except BaseException as exc:
    import json
    os.write(int(sys.argv[3]), json.dumps([0, "fatal", repr(exc)]).encode() + b"\\n")
    raise SystemExit(70)
serve(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
"""


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
        self._pidfd: int | None = None
        self._requests: dict = {}
        self._floor_kib = 0
        self._last_id = wire.HANDSHAKE_ID
        self._line_open = False  # a request is being written: its line may be cut short
        try:
            self._start(_lifeline)
        except wire.SpawnerGone as why:
            self._inner = PosixExecutor(output, kill_grace_s)
            self._floor_kib = self._inner.rss_floor_kib()
            self.notes = (Note("executor-fallback", {"reason": str(why), "floor_kib": self._floor_kib},
                               message=f"the small spawner process could not be started ({why})"),)

    # -- protocol -----------------------------------------------------------------

    def run(self, command: Command, *, timeout_ns: int | None = None) -> Execution:
        """Run ``command`` once in the spawner and return its :class:`Execution`.

        Raises what ``PosixExecutor.run`` raises (``CommandNotFound``,
        ``UsageError``), and ``MeasurementError`` if the spawner has died or
        sent a reply that does not answer this request.
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
            request = self._requests[key] = wire.run_request(command, timeout_ns)
        reply = self._call(request, ("ok", "err", "int"))
        if reply[1] == "ok":
            return Execution(*reply[2:])
        if reply[1] == "int":  # someone else sent the spawner SIGINT or SIGTERM
            raise KeyboardInterrupt
        raise wire.reply_error(reply)

    def rss_floor_kib(self) -> int:
        """The spawner's resident set size now, KiB: the smallest max RSS a command can be reported with.

        As for ``PosixExecutor.rss_floor_kib``, but of the spawner, which is
        what the commands start from (in the fallback: of this process).
        """
        if self._inner is not None:
            return self._inner.rss_floor_kib()
        if not self._closed:
            reply = self._call(b'"floor"]\n', ("floor", "err"))
            if reply[1] == "floor":
                self._floor_kib = reply[2]
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
        self._close_pipes()

    def __enter__(self) -> SpawnerExecutor:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- talking to the spawner ---------------------------------------------------

    def _call(self, tail: bytes, kinds: tuple[str, ...]) -> list:
        """Send one request (``tail``: its JSON list after the id) and return its checked reply;
        on any interruption, cancel it first."""
        self._last_id += 1
        request_id = self._last_id
        try:
            self._line_open = True
            wire.write_all(self._request_fd, b"[%d," % request_id + tail, pidfd=self._pidfd)
            self._line_open = False
            line = self._replies.read()
            if line is None:
                raise wire.SpawnerGone("end of file")
            return wire.checked_reply(line, request_id, kinds)
        except (wire.SpawnerGone, BrokenPipeError):
            raise self._spawner_died() from None
        except wire.BadReply as why:
            raise self._untrusted(why) from None
        except BaseException:
            self._cancel()
            raise

    def _cancel(self) -> None:
        """Interrupt the spawner's current run (if any) and wait until it is idle again.

        SIGINT, SIGTERM and SIGHUP are held off meanwhile, so a second Ctrl-C cannot
        leave the command running or a reply unread; it takes effect afterwards.
        """
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_OFF)
        deadline = time.monotonic() + self.kill_grace_s + CANCEL_TIMEOUT_S
        try:
            self._last_id += 1
            os.kill(self._proc.pid, signal.SIGINT)
            torn = b"\n" if self._line_open else b""  # end a request cut short, so "sync" is read whole
            self._line_open = False
            wire.write_all(self._request_fd, torn + b'[%d,"sync"]\n' % self._last_id, deadline=deadline,
                       pidfd=self._pidfd)
            while True:  # the cancelled run's reply (or an error for a torn line) comes first
                line = self._replies.read(timeout_s=max(0.0, deadline - time.monotonic()))
                if line is None:
                    raise wire.SpawnerGone("no answer")
                with contextlib.suppress(wire.BadReply):
                    wire.checked_reply(line, self._last_id, ("sync",))
                    return
        except (wire.SpawnerGone, OSError):
            with contextlib.suppress(OSError):
                self._proc.kill()  # exited, or hung: either way it is not coming back
            self._spawner_died()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def _spawner_died(self) -> MeasurementError:
        """Mark this executor closed after the spawner's death, and say so."""
        status = self._stop_spawner(timeout_s=1.0)
        self._close_after_failure()
        return MeasurementError(
            f"pairbench's spawner process (pid {self.spawner_pid}) exited unexpectedly "
            f"(status {status}); a command it was running may still be alive"
        )

    def _untrusted(self, why: wire.BadReply) -> MeasurementError:
        """Stop a spawner whose channel carried a reply to no request of ours, and say so."""
        with contextlib.suppress(OSError):
            self._proc.kill()
        self._stop_spawner(timeout_s=1.0)
        self._close_after_failure()
        return MeasurementError(
            f"pairbench's spawner process (pid {self.spawner_pid}) sent {why}, so its replies "
            "cannot be trusted and it was stopped; run pairbench again, and if this repeats, look "
            "for a process that writes to pairbench's pipes"
        )

    def _close_after_failure(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._request_fd)
            self._close_pipes()

    def _close_pipes(self) -> None:
        os.close(self._replies.fd)
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    # -- starting and stopping ----------------------------------------------------

    def _start(self, lifeline: bool) -> None:
        """Start the spawner and wait for it to be ready; ``wire.SpawnerGone`` says why not."""
        import subprocess  # here, not at the top: the spawner process does not need it

        executable = sys.executable
        if not executable or not os.access(executable, os.X_OK):
            raise wire.SpawnerGone(
                f"no Python interpreter to run it with: sys.executable is {executable!r}"
            )
        request_r, self._request_fd = os.pipe()
        os.set_blocking(self._request_fd, False)  # a full pipe is waited for with the pidfd (wire)
        reply_r, reply_w = os.pipe()
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
            raise wire.SpawnerGone(f"cannot start {executable}: {exc.strerror or exc}") from None
        finally:
            os.close(request_r)
            os.close(reply_w)
        self.spawner_pid = self._proc.pid
        self._pidfd = _pidfd_of(self._proc.pid)
        self._replies = wire.LineReader(reply_r, pidfd=self._pidfd, alive=self._alive)
        try:
            self._handshake(lifeline)
        except BaseException:
            self._closed = True
            os.close(self._request_fd)
            self._stop_spawner(timeout_s=1.0)
            self._close_pipes()
            self.spawner_pid = None
            raise

    def _alive(self) -> bool:
        return self._proc.poll() is None

    def _handshake(self, lifeline: bool) -> None:
        """Send the set-up (environment, output, grace) and read ``ready``."""
        environ = os.environb if os.supports_bytes_environ else {}
        hello = {
            "env": [[wire.wire(k), wire.wire(v)] for k, v in environ.items()],
            "output": [self.output.mode, self.output.path],
            "grace": self.kill_grace_s,
            "lifeline": lifeline,
        }
        with contextlib.suppress(BrokenPipeError, wire.SpawnerGone):  # it died at once; the reply pipe says why
            wire.write_all(self._request_fd, json.dumps(hello).encode() + b"\n", pidfd=self._pidfd)
        line = self._replies.read(timeout_s=STARTUP_TIMEOUT_S)
        if line is None:
            raise wire.SpawnerGone(f"it exited, or did not answer within {STARTUP_TIMEOUT_S:g} s")
        try:
            reply = json.loads(line)
            if isinstance(reply, list) and len(reply) == 3 and reply[1] == "fatal":
                raise wire.SpawnerGone(str(reply[2]))
            reply = wire.checked_reply(line, wire.HANDSHAKE_ID, ("ready", "err"))
        except wire.BadReply:
            raise wire.SpawnerGone(f"unexpected answer {line[:200]!r}") from None
        except ValueError:
            raise wire.SpawnerGone(f"unexpected answer {line[:200]!r}") from None
        if reply[1] == "err":
            raise wire.reply_error(reply)
        self._floor_kib = reply[2]

    def _stop_spawner(self, timeout_s: float):
        """Wait up to ``timeout_s`` for the spawner to exit, then SIGKILL it; its exit status."""
        import subprocess

        try:
            return self._proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            return self._proc.wait()


def _package_root() -> str:
    """The directory holding the ``pairbench`` package, for the spawner's ``sys.path``."""
    import pairbench

    return os.path.dirname(os.path.dirname(os.path.abspath(pairbench.__file__)))


def _pidfd_of(pid: int) -> int | None:
    """A pidfd of ``pid`` (readable once it exits), or None where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


# -- the spawner side -------------------------------------------------------------


class _State:
    """What the spawner's signal handler needs to know (module level: one per process)."""

    running = False  # inside PosixExecutor.run: a signal interrupts it
    cancelled = False  # SIGINT arrived while idle: the next run is cancelled (until "sync")
    exiting = False  # SIGTERM or SIGHUP arrived: finish the current request, then exit


def _on_signal(signum, frame) -> None:
    """SIGINT cancels the current (or next) run; SIGTERM and SIGHUP also make the spawner exit."""
    if signum != signal.SIGINT:
        _State.exiting = True
    if _State.running:
        raise KeyboardInterrupt  # PosixExecutor.run kills and reaps the command's group
    if _State.exiting:
        raise SystemExit(0)
    _State.cancelled = True


def serve(request_fd: int, reply_fd: int, parent_pid: int) -> None:
    """The spawner's main loop: set up from the parent's hello, then answer requests until EOF."""
    for fd in (request_fd, reply_fd):  # the pipes are ours: no command may inherit them
        os.set_inheritable(fd, False)
    with contextlib.suppress(
        OSError
    ):  # out of pairbench's group: the terminal's Ctrl-C is the parent's
        os.setpgid(0, 0)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _on_signal)  # caught, so commands get SIG_DFL back at exec
    requests = wire.LineReader(request_fd)
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
        os.environb.update((wire.unwire(k), wire.unwire(v)) for k, v in hello["env"])
    try:
        executor = PosixExecutor(OutputPolicy(*hello["output"]), hello["grace"],
                                 adopts_orphans=become_subreaper())
    except PairbenchError as exc:
        wire.write_all(reply_fd, wire.error_reply(exc, wire.HANDSHAKE_ID))
        return
    with executor:
        try:
            wire.write_all(reply_fd, wire.encode_reply(wire.HANDSHAKE_ID, "ready", executor.rss_floor_kib()))
            _answer_requests(executor, requests, reply_fd)
        except BrokenPipeError:
            pass  # the parent is gone; nothing is running any more, so just exit


def _answer_requests(executor: PosixExecutor, requests: wire.LineReader, reply_fd: int) -> None:
    commands: dict[bytes, tuple[Command, int | None]] = {}  # request after its id -> parsed
    while not _State.exiting:
        line = requests.read()
        if line is None:
            return
        request_id, tail = wire.split_request(line)
        try:
            parsed = commands.get(tail)
            if parsed is None:
                request = json.loads(b"[" + tail)
                if request[0] != "run":
                    wire.write_all(reply_fd, _answer_other(executor, request_id, request))
                    continue
                if len(commands) >= _CACHED_REQUESTS:
                    commands.clear()
                parsed = commands[tail] = wire.parse_run(request)
            reply = _run(executor, request_id, *parsed)
        except Exception as exc:  # a bad request or a bug: say so, and stay up
            reply = wire.error_reply(exc, request_id)
        wire.write_all(reply_fd, reply)


def _answer_other(executor: PosixExecutor, request_id: int | None, request: list) -> bytes:
    if request == ["sync"]:
        _State.cancelled = False
        return wire.encode_reply(request_id, "sync")
    if request == ["floor"]:
        return wire.encode_reply(request_id, "floor", executor.rss_floor_kib())
    raise ValueError(f"unknown request {request!r}")


def _run(executor: PosixExecutor, request_id: int | None, command: Command, timeout_ns: int | None) -> bytes:
    """Run one command; an interruption (SIGINT, SIGTERM, SIGHUP) becomes the ``int`` reply."""
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
        return wire.encode_reply(request_id, "int")
    except PairbenchError as exc:
        return wire.error_reply(exc, request_id)
    return wire.encode_reply(request_id, "ok", *vars(execution).values())


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

    The thread holds SIGINT, SIGTERM and SIGHUP blocked, so they reach the main
    thread, which may be waiting in ``wait4``.
    """
    main = threading.main_thread().ident

    def watch():
        poller = select.poll()
        poller.register(request_fd, 0)  # POLLHUP and POLLERR are reported without asking
        while not poller.poll():
            pass
        signal.pthread_kill(main, signal.SIGTERM)

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_OFF)
    try:
        threading.Thread(target=watch, name="pairbench-lifeline", daemon=True).start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
