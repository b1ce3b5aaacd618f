"""``python -m pairbench`` runs the command-line interface; :func:`entry_point` is the console script.

Loading the CLI imports click (a few tens of milliseconds; a command's own
modules, numpy among them, load later, inside ``main``, which handles Ctrl-C
itself), a time in which a Ctrl-C would otherwise end in a
``KeyboardInterrupt`` traceback. So the console script starts here, in a module
that imports only the standard library, and holds Ctrl-C, SIGTERM and SIGHUP
from its first line (``pairbench.held_signals``): a measuring command receives
them once it can end as an interrupted run does (its journal written, its
--cleanup run), any other command when it starts. A second one while the first
is held, while the CLI loads, is one line and exit 130.
"""

# Only what the interpreter has loaded before any script runs: a Ctrl-C while this module loads
# would be a traceback. Everything else is imported inside entry_point, which catches it.
import os
import sys

EXIT_INTERRUPTED = 130  # as pairbench.errors.EXIT_INTERRUPTED, without importing anything first
EXIT_INTERNAL = 70  # as pairbench.errors.EXIT_INTERNAL


def entry_point() -> None:
    """Load the CLI and run it; Ctrl-C while loading exits 130, a failure to load exits 70, each
    with one line."""
    try:
        _hold_collector()
        _hold_signals()
        _give_closed_standard_streams_devnull()
        run = _load_cli()
    except KeyboardInterrupt:
        _ignore_interrupts()  # a second Ctrl-C must not traceback at exit
        _say("pairbench: interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # a broken installation (a missing dependency): one line, never exit 1
        what = " ".join(str(exc).split())[:300]
        _say(f"pairbench: cannot start: {type(exc).__name__}: {what} (reinstall pairbench and its "
             "dependencies into its environment)\n")
        sys.exit(EXIT_INTERNAL)
    try:
        run()
    except SystemExit as done:  # the CLI's last word: everything is written and closed
        _exit_now(done.code)


def _exit_now(code) -> None:
    """Exit with ``code`` as ``sys.exit`` would, without tearing down every module loaded (about
    0.1 s once numpy and scipy are, spent after the result is written): the atexit handlers run
    (temporary directories' finalizers among them) and the standard streams are flushed, then
    ``os._exit``. While another thread runs (not a daemon thread, which an exit ends), or for a code
    that is not a number, Python's own exit."""
    import atexit
    import contextlib
    import threading

    others = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    if others or not isinstance(code, int | None) or not hasattr(atexit, "_run_exitfuncs"):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):  # closed, or None (``>&-``)
            stream.flush()
    os._exit(code or 0)


def _hold_collector() -> None:
    from pairbench import collector

    collector.hold()


def _hold_signals() -> None:
    from pairbench import held_signals

    held_signals.hold()


def _load_cli():
    from pairbench.cli import entry_point

    return entry_point


def _give_closed_standard_streams_devnull() -> None:
    """Open /dev/null on 0, 1 or 2 if closed (``pairbench >&-``), so that no file pairbench opens
    later (a journal, a pipe to the spawner) lands on a standard stream's number and receives what
    is written there. Python has already set ``sys.stdout``/``sys.stderr`` to None for a closed one;
    the CLI treats those as closed."""
    for fd in (0, 1, 2):  # in order, so the lowest free number, which open() takes, is fd
        try:
            os.fstat(fd)
        except OSError:
            try:  # noqa: SIM105 (contextlib is not loaded yet: see the imports)
                os.open(os.devnull, os.O_RDWR)
            except OSError:
                pass


def _ignore_interrupts() -> None:
    import signal

    held = sys.modules.get("pairbench.held_signals")
    if held is not None:
        held.restore()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _say(text: str) -> None:
    try:  # noqa: SIM105 (as above)
        os.write(2, text.encode())
    except OSError:  # standard error closed: nothing to say it on
        pass


if __name__ == "__main__":
    entry_point()
