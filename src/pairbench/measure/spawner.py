"""Run commands from a small helper process, so a command's max RSS is its own, not pairbench's.

Linux charges the spawning process's resident set to a child at ``exec``, so a
command started from pairbench (numpy, scipy, rich loaded: ~100 MB) is never
reported below ~100 MB (see ``measure.posix``). A :class:`SpawnerExecutor`
therefore starts, once, a small spawner process and asks it over two dedicated
pipes to run each command. There are two spawners:

* the **native** one, ``pairbench-spawner`` (``spawner.c``, built by the
  install where a C compiler exists, see ``measure.native``): ~1 MiB resident,
  so the floor is below what almost any program needs; it can also measure
  each command's peak memory as its own cgroup's ``memory.peak`` (below);
* the **Python** one (``measure.python_spawner``): a fresh ``python -S -I``
  that imports only ``pairbench.measure.posix`` and the standard library
  (~13 MiB) and runs each command with an ordinary
  :class:`~pairbench.measure.posix.PosixExecutor`.

The native one is used when it was built; ``PAIRBENCH_SPAWNER=python`` (or
``spawner="python"``) asks for the Python one, ``native`` insists on the
native one. ``spawner`` says which one runs the commands, and the executor's
record (``info``) stores it with every result. The timed window is inside the
spawner, so the pipe round trip is not part of any sample; ``start_ns`` is on
CLOCK_MONOTONIC, which is system-wide, so :meth:`SpawnerExecutor.now_ns` in this
process agrees with it.

The protocol (encoded and checked by ``measure.wire``) is one JSON list per
line, and every request carries an id that its reply echoes. Requests: ``[id, "run", timeout_ns, shell, text, arg...]``
(arguments as their OS bytes, latin-1 decoded, so any bytes survive), ``[id,
"floor"]`` and ``[id, "sync"]``. Replies: ``[id, "ok", <Execution fields>]``,
``[id, "err", class name, message]`` (``CommandNotFound``, ``MeasurementError``,
``UsageError``: re-raised here with the same message), ``[id, "noexec", errno]``
(the native spawner's "cannot start it": worded here as in process), ``[id, "int"]``, ``[id,
"floor", kib]``, ``[id, "sync"]``. A reply that is not JSON, has the wrong shape,
or answers another request is a ``MeasurementError``, and the spawner is stopped:
its channel is no longer trusted. At start the parent sends the Python spawner its
environment (as bytes), the output policy and the grace period; the native one
gets the grace period as an option and inherits the environment and, as its
standard streams, the commands' (opened here). Either answers ``[0, "ready",
floor_kib, peak_memory, reason, containment, why]`` or an error (an unwritable output file is a
``UsageError``, as in process). The Python spawner's answer is awaited as it starts; the native
one's at its first use (a run, the floor, ``info`` or an attribute its answer sets), so that it
starts, and moves into its cell (a cgroup migration, 10-15 ms of waiting), while pairbench
prepares its first sample. A native spawner that fails to answer is replaced then, as at the start.

Peak memory: where the machine delegates a cgroup v2 subtree with the memory
controller to pairbench (``environment.cgroup.delegated_memory_cgroup``; or
``PAIRBENCH_CGROUP=DIR`` names one, ``none`` turns this off), the native
spawner runs each command in a fresh child cgroup and reports that cgroup's
``memory.peak`` as its max RSS: every process of the command, no floor at all
(``peak_memory`` is then ``"cgroup"``, and the RSS floor 0). Otherwise, or if
the spawner finds the cgroup unusable (``peak_memory_reason`` says why), max
RSS is ``wait4``'s ``ru_maxrss`` (``"rusage"``).

The two pipes are the spawner's alone: it marks them close-on-exec, and
no command sees a descriptor beyond 0-2, so none can write a reply. The spawner
is a child subreaper (Linux): a daemon a command
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
sends the spawner one SIGINT, which interrupts the run there (it
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
interrupts the run the same way (as does SIGHUP); elsewhere it watches the
request pipe for hang-up. Idle, it exits at end of file on its request pipe;
that is how :meth:`SpawnerExecutor.close` stops it. If the spawner itself is
killed while a command runs, pairbench notices at once but that command is not
cleaned up (the error says so).

If the native spawner was built but cannot be started, the Python one is used
and ``notes`` says why (``spawner-fallback``). If no spawner can be started (no
``sys.executable``, an import failure, no answer within ``STARTUP_TIMEOUT_S``),
the executor falls back to an in-process ``PosixExecutor`` and says so in
``notes``. Commands run in the working directory the executor was created in.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time

from pairbench.command import Command
from pairbench.errors import MeasurementError, UsageError
from pairbench.measure import child_environment, containment, native, wire
from pairbench.measure.executor import Execution, Executor, ExecutorInfo, OutputPolicy
from pairbench.measure.native import package_root
from pairbench.measure.posix import PosixExecutor, not_startable, open_output
from pairbench.notes import Note

STARTUP_TIMEOUT_S = 10.0
"""How long the spawner may take to answer ``ready`` before the in-process fallback is used."""
CANCEL_TIMEOUT_S = 5.0
"""How long, beyond the kill grace period, a cancelled run may take to answer ``sync`` before the
spawner is taken for dead and killed."""
SPAWNER_VARIABLE = "PAIRBENCH_SPAWNER"
"""The environment variable that chooses the spawner: ``native``, ``python`` or ``auto`` (unset)."""
CGROUP_VARIABLE = "PAIRBENCH_CGROUP"
"""The environment variable naming a delegated cgroup v2 directory for ``memory.peak`` (``none``: off)."""
SPAWNERS = ("native", "python")

_NULL_OUTPUT = OutputPolicy()
_CACHED_REQUESTS = 256  # encoded requests kept per side, for commands run again and again
_HELD_OFF = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # while a run is being cancelled

# The Python spawner's entry point. Any failure to import is reported on the reply
# pipe (not on stderr, which belongs to the commands) so the parent can fall back.
_BOOTSTRAP = """\
import os, sys
try:
    sys.path.insert(0, sys.argv[1])
    from pairbench.measure.python_spawner import serve
except BaseException as exc:
    import json
    os.write(int(sys.argv[3]), json.dumps([0, "fatal", repr(exc)]).encode() + b"\\n")
    raise SystemExit(70)
serve(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
"""


def _once_ready(name: str, doc: str) -> property:
    """An attribute the spawner's ``ready`` sets: reading it waits for that answer."""

    def get(self):
        if self._unanswered is not None:
            self._answered()
        return getattr(self, name)

    return property(get, doc=doc)


def chosen_spawner(asked: str | None = None) -> str:
    """``"native"``, ``"python"`` or ``"auto"``: ``asked``, else ``$PAIRBENCH_SPAWNER``, else auto."""
    value = asked if asked is not None else os.environ.get(SPAWNER_VARIABLE, "")
    value = value.strip().lower() or "auto"
    if value not in ("auto", *SPAWNERS):
        raise UsageError(f"{SPAWNER_VARIABLE} must be 'native', 'python' or 'auto', got {value!r}")
    return value


class SpawnerExecutor:
    """Runs commands one at a time from a small helper process and measures what each one cost.

    The same protocol as :class:`~pairbench.measure.posix.PosixExecutor` (and
    the same ``output`` and ``kill_grace_s``), but a command's max RSS is not
    raised to pairbench's own size; see the module docstring. ``spawner``
    (``"native"``, ``"python"`` or None: ``$PAIRBENCH_SPAWNER``, else native
    where it was built) chooses the spawner; the attribute ``spawner`` then
    says which one runs the commands (None in the in-process fallback), and
    ``peak_memory`` how max RSS is measured (``"rusage"`` or ``"cgroup"``,
    with ``peak_memory_reason`` when a cgroup was found but not used).
    ``notes`` says, for the user, if a fallback is in use; ``spawner_pid`` is
    the helper's pid (``None`` in process). Use as a context manager or call
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
        spawner: str | None = None,
        _lifeline: bool = False,
    ):
        if not kill_grace_s >= 0:
            raise UsageError(f"`kill_grace_s` must be >= 0 seconds, got {kill_grace_s!r}")
        wanted = chosen_spawner(spawner)
        self.output = output
        self.kill_grace_s = float(kill_grace_s)
        self._notes: tuple[Note, ...] = ()
        self._spawner: str | None = None
        self._peak_memory = "rusage"
        self._peak_memory_reason = ""
        self._containment = "group"
        self._containment_reason = ""
        self._unanswered: tuple[str, bool] | None = None  # the native spawner's (wanted, lifeline)
        self._contained = containment.containment()
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
            self._start(wanted, _lifeline)
        except wire.SpawnerGone as why:
            self._run_in_process(why)

    spawner = _once_ready("_spawner", "Which spawner runs the commands: native, python, or None in process.")
    notes = _once_ready("_notes", "For the user: the fallback in use, if any.")
    peak_memory = _once_ready("_peak_memory", "How max RSS is measured: rusage or cgroup.")
    peak_memory_reason = _once_ready("_peak_memory_reason", "Why not the cgroup, where one was found.")
    containment = _once_ready("_containment", "How what a command leaves is ended: cgroup, scan or group.")
    containment_reason = _once_ready("_containment_reason", "Why not a cgroup.")

    # -- protocol -----------------------------------------------------------------

    def run(self, command: Command, *, timeout_ns: int | None = None) -> Execution:
        """Run ``command`` once in the spawner and return its :class:`Execution`.

        Raises what ``PosixExecutor.run`` raises (``CommandNotFound``,
        ``UsageError``), and ``MeasurementError`` if the spawner has died or
        sent a reply that does not answer this request.
        """
        if self._unanswered is not None:
            self._answered()
        if self._inner is not None:
            return self._inner.run(command, timeout_ns=timeout_ns)
        if self._closed:
            raise MeasurementError("this executor is closed; create a new SpawnerExecutor")
        if timeout_ns is not None and timeout_ns <= 0:
            raise UsageError(f"`timeout_ns` must be > 0, got {timeout_ns!r}")
        key = (command, timeout_ns)
        request = self._requests.get(key)
        if request is None:
            if len(self._requests) >= _CACHED_REQUESTS:
                self._requests.clear()
            request = self._requests[key] = wire.run_request(command, timeout_ns)
        reply = self._call(request, ("ok", "err", "int", "noexec"))
        if reply[1] == "ok":
            return wire.execution_of(reply)
        if reply[1] == "int":  # someone else sent the spawner SIGINT or SIGTERM
            raise KeyboardInterrupt
        if reply[1] == "noexec":
            raise not_startable(command, OSError(reply[2], os.strerror(reply[2])))
        raise wire.reply_error(reply)

    def rss_floor_kib(self) -> int:
        """The spawner's resident set size now, KiB: the smallest max RSS a command can be reported with.

        As for ``PosixExecutor.rss_floor_kib``, but of the spawner, which is
        what the commands start from (in the fallback: of this process).
        """
        if self._unanswered is not None:
            self._answered()
        if self._inner is not None:
            return self._inner.rss_floor_kib()
        if not self._closed:
            reply = self._call(b'"floor"]\n', ("floor", "err"))
            if reply[1] == "floor":
                self._floor_kib = reply[2]
        return self._floor_kib

    def info(self) -> ExecutorInfo:
        """The spawner's size is the RSS floor (pairbench's own in the fallback, said in ``notes``;
        none with the cgroup's ``memory.peak``); which spawner, and how peak memory was measured."""
        if self._unanswered is not None:
            self._answered()
        if self._inner is not None:
            inner = self._inner.info()
            self._containment, self._containment_reason = inner.containment, inner.containment_reason
        return ExecutorInfo(type(self).__name__, self.rss_floor_kib() or None, self.notes,
                            spawner=self.spawner, peak_memory=self.peak_memory,
                            peak_memory_reason=self.peak_memory_reason, containment=self.containment,
                            containment_reason=self.containment_reason)

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
        self._closed, self._unanswered = True, None  # unanswered: it reads the end of file once ready
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

    def _start(self, wanted: str, lifeline: bool) -> None:
        """Start the spawner ``wanted`` asks for (auto: native where built, else Python); the Python
        one is waited for, the native one answers at first use (``_answered``). ``wire.SpawnerGone``
        says why none started."""
        if wanted != "python":
            program = native.program_path()
            if not os.access(program, os.X_OK):
                if wanted == "native":
                    raise UsageError(
                        f"{SPAWNER_VARIABLE}=native, but the native spawner was not built ({program} is "
                        f"missing): install pairbench again where a C compiler is installed (cc), or set "
                        f"{SPAWNER_VARIABLE}=python")
            else:
                try:
                    self._launch("native", lifeline)
                    self._unanswered = (wanted, lifeline)
                    return None
                except wire.SpawnerGone as why:
                    if wanted == "native":
                        raise
                    return self._fall_back_from_native(str(why), lifeline)
        self._launch("python", lifeline)
        return None

    def _answered(self) -> None:
        """Wait for the native spawner's ``ready``. Its start left that to the first use: the
        spawner moves into its cell meanwhile (a cgroup migration, 10-15 ms of waiting), while
        pairbench prepares its first sample. One that fails is replaced as at the start."""
        (wanted, lifeline), self._unanswered = self._unanswered, None
        try:
            self._await_ready()
            self._spawner = "native"
            return
        except wire.SpawnerGone as why:
            self._stop_after_failed_start()
            failure = why
        except BaseException:  # an interrupted wait (Ctrl-C): the spawner still starts, and the next use waits
            self._unanswered = (wanted, lifeline)
            raise
        try:
            if wanted == "native":
                raise failure
            self._fall_back_from_native(str(failure), lifeline)
        except wire.SpawnerGone as why:
            self._run_in_process(why)

    def _fall_back_from_native(self, native_failure: str, lifeline: bool) -> None:
        """Start the Python spawner instead of the native one, and say why in ``notes``."""
        floor = self._launch("python", lifeline)
        self._notes = (Note("spawner-fallback", {"reason": native_failure, "floor_kib": floor},
                            message=f"the native spawner could not be started ({native_failure})"),)

    def _run_in_process(self, why: wire.SpawnerGone) -> None:
        """Run the commands in this process (``PosixExecutor``), and say why in ``notes``."""
        self._inner = PosixExecutor(self.output, self.kill_grace_s)
        self._floor_kib = self._inner.rss_floor_kib()
        self._notes = (Note("executor-fallback", {"reason": str(why), "floor_kib": self._floor_kib},
                            message=f"the small spawner process could not be started ({why})"),)

    def _launch(self, kind: str, lifeline: bool) -> int:
        """Start the ``kind`` spawner, and wait for the Python one's ``ready``; its RSS floor (KiB)."""
        import subprocess  # here, not at the top: the spawner process does not need it

        if kind == "python":
            # its own environment without pairbench's credentials too: a command could read it in /proc
            argv, opened = self._python_command(), []
            streams = {"stdin": subprocess.DEVNULL, "env": child_environment.for_children_bytes()}
            if sys.version_info >= (3, 11):
                streams["process_group"] = 0
        else:
            argv, streams, opened = [native.program_path()], {}, []
        request_r, self._request_fd = os.pipe()
        os.set_blocking(self._request_fd, False)  # a full pipe is waited for with the pidfd (wire)
        reply_r, reply_w = os.pipe()
        try:
            if kind == "native":
                argv, streams, opened = self._native_command(lifeline)
            self._proc = subprocess.Popen(
                [*argv, str(request_r), str(reply_w), str(os.getpid())],
                pass_fds=(request_r, reply_w), **streams)
        except BaseException as exc:
            os.close(self._request_fd)
            os.close(reply_r)
            if isinstance(exc, OSError):
                raise wire.SpawnerGone(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
            raise
        finally:
            for fd in (request_r, reply_w, *opened):
                os.close(fd)
        self.spawner_pid = self._proc.pid
        self._pidfd = wire.pidfd_of(self._proc.pid)
        self._replies = wire.LineReader(reply_r, pidfd=self._pidfd, alive=self._alive)
        if kind == "python":
            try:
                self._send_hello(lifeline)
                self._await_ready()
            except BaseException:
                self._stop_after_failed_start()
                raise
            self._spawner = kind
        return self._floor_kib

    def _python_command(self) -> list[str]:
        executable = sys.executable
        if not executable or not os.access(executable, os.X_OK):
            raise wire.SpawnerGone(
                f"no Python interpreter to run it with: sys.executable is {executable!r}"
            )
        return [executable, "-S", "-I", "-c", _BOOTSTRAP, package_root()]

    def _native_command(self, lifeline: bool) -> tuple[list[str], dict, list[int]]:
        """The native spawner's command line, and its standard streams: the commands' (it passes
        them on), opened here as the output policy says; the descriptors to close once it started."""
        opened = [os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)]
        try:
            out = open_output(self.output)
        except BaseException:
            os.close(opened[0])
            raise
        if out is not None:
            opened.append(out)
        argv = [native.program_path(), "--grace-ns", str(round(self.kill_grace_s * 1e9))]
        if lifeline:
            argv.append("--lifeline")
        cgroup = self._delegated_cgroup()
        if cgroup:
            argv += ["--cgroup", cgroup]
        argv += self._contained.option()
        environ = child_environment.for_children_bytes()  # the commands' environment
        return argv, {"stdin": opened[0], "stdout": out, "stderr": out, "env": environ}, opened

    def _delegated_cgroup(self) -> str | None:
        """The cgroup v2 directory to run commands under for ``memory.peak``, if the machine (or
        ``$PAIRBENCH_CGROUP``) delegates one; else None, with the reason kept."""
        from pathlib import Path

        from pairbench.environment.cgroup import delegated_memory_cgroup

        directory, self._peak_memory_reason = delegated_memory_cgroup(Path("/"), os.environ.get(CGROUP_VARIABLE))
        return directory

    def _stop_after_failed_start(self) -> None:
        self._closed = True
        os.close(self._request_fd)
        self._stop_spawner(timeout_s=1.0)
        self._close_pipes()
        self.spawner_pid = None
        self._closed = False  # the next spawner (a fallback) starts afresh

    def _alive(self) -> bool:
        return self._proc.poll() is None

    def _send_hello(self, lifeline: bool) -> None:
        """Send the Python spawner its set-up: environment, output, grace, lifeline."""
        environ = child_environment.for_children_bytes()  # the commands' environment
        hello = {
            "env": [[wire.wire(k), wire.wire(v)] for k, v in environ.items()],
            "output": [self.output.mode, self.output.path],
            "grace": self.kill_grace_s,
            "lifeline": lifeline,
            "contain": self._contained.directory,
        }
        with contextlib.suppress(BrokenPipeError, wire.SpawnerGone):  # it died at once; the reply pipe says why
            wire.write_all(self._request_fd, json.dumps(hello).encode() + b"\n", pidfd=self._pidfd)

    def _await_ready(self) -> None:
        """Read ``ready``: the RSS floor, and how peak memory is measured."""
        line = self._replies.read(timeout_s=STARTUP_TIMEOUT_S)
        if line is None:
            raise wire.SpawnerGone(f"it exited, or did not answer within {STARTUP_TIMEOUT_S:g} s")
        try:
            reply = json.loads(line)
            if isinstance(reply, list) and len(reply) == 3 and reply[1] == "fatal":
                raise wire.SpawnerGone(str(reply[2]))
            reply = wire.checked_reply(line, wire.HANDSHAKE_ID, ("ready", "err"))
        except (wire.BadReply, ValueError):
            raise wire.SpawnerGone(f"unexpected answer {line[:200]!r}") from None
        if reply[1] == "err":
            raise wire.reply_error(reply)
        self._floor_kib, self._peak_memory = reply[2], reply[3]
        if reply[4]:
            self._peak_memory_reason = reply[4]
        self._containment = reply[5]
        self._containment_reason = reply[6] or self._contained.reason

    def _stop_spawner(self, timeout_s: float):
        """Wait up to ``timeout_s`` for the spawner to exit, then SIGKILL it; its exit status."""
        import subprocess

        try:
            status = self._proc.wait(timeout=wire.exit_wait_s(self._pidfd, timeout_s))
        except subprocess.TimeoutExpired:
            self._proc.kill()
            status = self._proc.wait()
        if self._contained.directory:  # its cell (and, had it been killed mid-command, what it held)
            containment.end_cells_of(self._contained.directory, self._proc.pid)
        return status


def default_executor(output: OutputPolicy) -> Executor:
    """Commands run from a small spawner process, so their max RSS is their own."""
    return SpawnerExecutor(output=output)
