"""The Python spawner: the helper process's side of ``measure.spawner``'s protocol.

Where the native spawner (``spawner.c``) was not built, or
``PAIRBENCH_SPAWNER=python`` asks for this one, :class:`~pairbench.measure.spawner.SpawnerExecutor`
starts ``python -S -I`` running :func:`serve`: it reads the parent's hello
(environment, output policy, grace period), then answers requests with an
ordinary :class:`~pairbench.measure.posix.PosixExecutor`. Its resident set
(~13 MiB) is the smallest max RSS a command can be reported with. Like the
executor, it imports nothing beyond the standard library and pairbench's
vocabulary.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import threading

from pairbench.command import Command
from pairbench.errors import PairbenchError
from pairbench.measure import wire
from pairbench.measure.executor import OutputPolicy
from pairbench.measure.leftovers import become_subreaper
from pairbench.measure.posix import PosixExecutor

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_CACHED_REQUESTS = 256  # parsed requests kept, for commands run again and again
_HELD_OFF = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # blocked in the lifeline thread


class _State:
    """What the spawner's signal handler needs to know (module level: one per process)."""

    running = False  # inside PosixExecutor.run: a signal interrupts it
    cancelled = False  # SIGINT arrived while idle: the next run is cancelled (until "sync")
    exiting = False  # SIGTERM or SIGHUP arrived: finish the current request, then exit
    interrupted = False  # an interruption was raised and is being handled: none other until it is


def _on_signal(signum, frame) -> None:
    """SIGINT cancels the current (or next) run; SIGTERM and SIGHUP also make the spawner exit. A
    signal arriving while an interruption is handled (the command's group being killed, the cell
    being renewed or left) is only noted: raised there, it would cut that short (a cell made but never
    recorded outlives the spawner)."""
    if signum != signal.SIGINT:
        _State.exiting = True
    if _State.interrupted:
        return
    if _State.running:
        _State.interrupted = True
        raise KeyboardInterrupt  # PosixExecutor.run kills and reaps the command's group
    if _State.exiting:
        _State.interrupted = True
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
        os.environb.update(_environ(hello["env"]))
    try:
        executor = PosixExecutor(OutputPolicy(*hello["output"]), hello["grace"],
                                 adopts_orphans=become_subreaper(), environ=_environ(hello["env"]),
                                 cells=hello.get("contain"))
    except PairbenchError as exc:
        wire.write_all(reply_fd, wire.error_reply(exc, wire.HANDSHAKE_ID))
        return
    with executor:
        try:
            contained = "cgroup" if executor.cell else "scan" if executor.adopts_orphans else "group"
            ready = wire.encode_reply(wire.HANDSHAKE_ID, "ready", executor.rss_floor_kib(), "rusage", "",
                                      contained, executor.containment_reason)
            wire.write_all(reply_fd, ready)
            _answer_requests(executor, requests, reply_fd)
        except BrokenPipeError:
            pass  # the parent is gone; nothing is running any more, so just exit


def _environ(pairs) -> dict[bytes, bytes]:
    """The commands' environment the parent chose (``measure.child_environment``), as bytes."""
    return {wire.unwire(k): wire.unwire(v) for k, v in pairs}


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
    _State.interrupted = False
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
        _State.interrupted = False  # handled: the next signal interrupts again
        return wire.encode_reply(request_id, "int")
    except PairbenchError as exc:
        return wire.error_reply(exc, request_id)
    return wire.ok_reply(request_id, execution)


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
