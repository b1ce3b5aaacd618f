"""The ``pairbench`` command group, where output goes, and ``main``."""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence

import click

from pairbench import __version__, collector, held_signals
from pairbench.blas_threads import numpy_loads_without_thread_pool
from pairbench.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RESULT_FILE,
    EXIT_USAGE,
    EXIT_VERDICT,
    PairbenchError,
    Terminated,
    interruption_exit_code,
    interruption_name,
)
from pairbench.frozen import frozen
from pairbench.measure.executor import Executor, OutputPolicy
from pairbench.report.safe import visible

EXIT_CODES_HELP = """\b
Exit codes:
  0    success
  1    a verdict matched --fail-on (compare, bench, merge, diff)
  2    usage error
  3    a command failed or could not be run
  4    a result file or the history store could not be read or written
  70   internal error (a bug in pairbench; please report it)
  129  hung up (SIGHUP), handled like Ctrl-C
  130  interrupted (Ctrl-C); finished samples are saved
  141  standard output was closed before everything was printed
  143  terminated (SIGTERM), handled like Ctrl-C
"""
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
TRACEBACK_VARIABLE = "PAIRBENCH_TRACEBACK"  # set: an internal error prints its traceback too


class GuardedStream:
    """A text stream whose first write error (a closed pipe, a full disk) is kept in ``error``
    instead of raised; later writes are dropped. So an unwritable standard output cannot cut a
    measurement short or hide how it ended: ``main`` turns the error into the exit code.

    ``stream`` None is a stream that was closed before pairbench started (``>&-``: Python
    then has no ``sys.stdout``): every write is dropped, and ``error`` says so from the start."""

    def __init__(self, stream):
        self.stream = stream if stream is not None else _ClosedStream()
        self.error: OSError | None = None if stream is not None else _ClosedStream.error()

    def write(self, text: str) -> int:
        self._guarded(self.stream.write, text)
        return len(text)

    def flush(self) -> None:
        self._guarded(self.stream.flush)

    def _guarded(self, method, *args) -> None:
        if self.error is not None:
            return
        try:
            method(*args)
        except OSError as exc:
            self.error = exc

    def __getattr__(self, name):  # isatty, encoding, fileno...: the wrapped stream's
        return getattr(self.stream, name)


class _ClosedStream:
    """What a closed standard stream reads as: not a terminal, and unwritable."""

    encoding = "utf-8"

    @staticmethod
    def error() -> OSError:
        return OSError(9, "it was closed before pairbench started")

    def write(self, text: str) -> int:
        raise self.error()

    def flush(self) -> None:
        raise self.error()

    def isatty(self) -> bool:
        return False


class Io:
    """Where output goes (``sys.stdout`` and ``sys.stderr`` unless given); swapped in tests. A
    standard stream closed before pairbench started is None there (see :class:`GuardedStream`)."""

    def __init__(self, stdout=None, stderr=None, color: bool | None = None):
        self.stdout = GuardedStream(stdout if stdout is not None else sys.stdout)
        self.stderr = GuardedStream(stderr if stderr is not None else sys.stderr)
        self.color = _want_color(self.stdout) if color is None else color

    def out(self, text: str) -> None:
        self.stdout.write(text if text.endswith("\n") else text + "\n")
        self.stdout.flush()

    def err(self, text: str) -> None:
        self.stderr.write(text if text.endswith("\n") else text + "\n")
        self.stderr.flush()


def _want_color(stream) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def default_executor(output: OutputPolicy) -> Executor:
    """``measure.spawner.default_executor``, imported when a command first measures."""
    from pairbench.measure.spawner import default_executor as spawner

    return spawner(output)


def default_environment(root: str = "/", **options) -> dict:
    """This machine's metadata, read now (``environment.collect_environment``)."""
    from pairbench.environment import collect_environment

    return collect_environment(root, **options)


@frozen
class App:
    """What every command works with: where output goes, and the seams a test replaces.

    ``executor_factory(output)`` makes the executor commands are measured with;
    ``workers(spec, side)`` starts a ``bench`` worker (None: the real one, ``sessions.lanes.WorkerStart``);
    ``environment(root, **options)`` reads the machine's metadata;
    ``clock()`` paces the progress display (seconds).
    """

    io: Io
    executor_factory: Callable[[OutputPolicy], Executor] = default_executor
    environment: Callable[..., Mapping] = default_environment
    clock: Callable[[], float] = time.monotonic
    workers: object | None = None


COMMANDS = {
    "bench": ("pairbench.cli.bench",
              "Compare every benchmark two builds of a suite share, interleaved, benchmark by benchmark."),
    "bisect": ("pairbench.cli.bisect", "Find the commit between GOOD and BAD that made a benchmark slower."),
    "compare": ("pairbench.cli.measuring", "Is CANDIDATE faster or slower than BASELINE, by how much, how sure?"),
    "convert": ("pairbench.cli.suite", "Read a result another tool saved and write it as a pairbench result."),
    "confirm": ("pairbench.cli.confirm",
                "Measure two commits again, side by side, to confirm or reject a step between them."),
    "diff": ("pairbench.cli.suite", "Compare two saved results per benchmark, without pairs (two-sample statistics)."),
    "doctor": ("pairbench.cli.doctor", "Check the machine, or validate COMMAND as a benchmark."),
    "history": ("pairbench.cli.history", "Show benchmarks over commits on one machine, with their change points."),
    "include-dir": ("pairbench.cli.bench", "Print the directory of pairbench.h, the C/C++ worker header."),
    "merge": ("pairbench.cli.suite", "Join the results of a suite's shards (bench --shard K/N) into one suite result."),
    "record": ("pairbench.cli.record",
               "Record commit REV (default HEAD) in a paired history: measured against its predecessor."),
    "report": ("pairbench.cli.report", "Render a saved result (or a journal) as HTML, Markdown, CSV or JSON."),
    "run": ("pairbench.cli.measuring", "Measure each COMMAND and print an honest summary."),
    "show": ("pairbench.cli.show",
             "Analyse and print a saved result, or the journal of a run that did not finish."),
    "store": ("pairbench.cli.store", "Load result files into the history store, and list what it holds."),
}
"""Every command, as ``name -> (module that registers it, first paragraph of its help)``: the
group imports a command's module only when the command runs or shows its own help, and lists
them all in ``pairbench --help`` from these summaries (a test checks them against the modules)."""

RENAMED = {"import": ("convert", "pairbench.cli.suite")}
"""Old spellings of renamed commands, as ``old -> (new, module)``: they still run the command,
hidden from the help, after a line that gives the new name (``deprecated_alias``)."""

SESSIONS_TAKE_HELD_SIGNALS = frozenset({"run", "compare", "bench"})
"""The commands whose session delivers the signals held while pairbench started, right after its
journal exists (``sessions.commands.Session``, ``sessions.bench.BenchSession``), so that an
interruption during start-up leaves a result and runs --cleanup as one while sampling does."""

_NO_SUCH_COMMAND = getattr(click.exceptions, "NoSuchCommand", ())  # click >= 8.4 suggests names


HELP_SECTIONS = {
    "Sampling": ("warmup", "runs", "min_runs", "max_runs", "max_time", "timeout", "seed", "ignore_failure"),
    "Around each sample": ("prepare", "setup", "cleanup", "shell", "input", "output", "pass_env"),
    "Verdicts": ("alpha", "threshold", "fail_on", "fail_on_metric", "metric", "self_check"),
    "Results": ("json_path", "export_markdown", "export_csv", "export_html", "names", "quiet", "store", "no_store"),
    "As hyperfine takes them": ("no_shell", "conclude", "parameter_scan", "parameter_step_size",
                                "parameter_list", "export_json", "time_unit", "sort", "version"),
}
"""How the --help of a command that takes the sampling options (``cli.options``: declared once, for
run, compare, bench, confirm, bisect and record) groups the options it shares with the others, by
parameter name; its own options come first, under "Options", and those kept for hyperfine's users
are listed together."""

_SECTION_OF = {name: title for title, names in HELP_SECTIONS.items() for name in names}


class SectionedCommand(click.Command):
    """A command whose --help lists its options under ``HELP_SECTIONS``' headings when it takes the
    sampling options, and as click does otherwise. Only the help changes."""

    def format_options(self, ctx, formatter) -> None:
        records = [(param, param.get_help_record(ctx)) for param in self.get_params(ctx)
                   if isinstance(param, click.Option)]
        records = [(param, record) for param, record in records if record is not None]
        if not any(_SECTION_OF.get(param.name) == "Sampling" for param, _ in records):
            super().format_options(ctx, formatter)
            return
        sections: dict[str, list] = {"Options": []}
        for param, record in records:
            sections.setdefault(_SECTION_OF.get(param.name, "Options"), []).append(record)
        for title in ("Options", *HELP_SECTIONS):
            if sections.get(title):
                with formatter.section(title):
                    formatter.write_dl(sections[title])


class LazyGroup(click.Group):
    """A click group whose commands are imported on first use, so that ``--version`` and
    ``--help`` load neither numpy nor scipy nor the renderers (each command module registers its
    command with ``@cli.command`` when imported). ``lazy`` is a table like :data:`COMMANDS`. Its
    commands group their options in --help (:class:`SectionedCommand`)."""

    command_class = SectionedCommand

    def __init__(self, *args, lazy: Mapping[str, tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx, cmd_name: str):
        if cmd_name not in self.commands and cmd_name in self.lazy:
            importlib.import_module(self.lazy[cmd_name][0])
        elif cmd_name not in self.commands and cmd_name in RENAMED:
            importlib.import_module(RENAMED[cmd_name][1])
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx, args):
        """The command ``args`` name; signals held while pairbench started (``held_signals``) are
        delivered now unless the command measures, whose session takes them once it can end
        cleanly."""
        try:
            name, command, rest = super().resolve_command(ctx, args)
        except _NO_SUCH_COMMAND as exc:  # suggest from every command, not only those loaded
            raise _NO_SUCH_COMMAND(exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None
        if name not in SESSIONS_TAKE_HELD_SIGNALS:
            held_signals.release()
            collector.release()  # a session's sampler releases it before its first measured round
        return name, command, rest

    def format_commands(self, ctx, formatter) -> None:
        """The commands and their short help, as click writes them, from the table's summaries for
        those not loaded yet."""
        listed = {name: self.commands.get(name) or click.Command(name, help=self.lazy[name][1])
                  for name in self.list_commands(ctx)}
        listed = {name: command for name, command in listed.items() if not command.hidden}
        if not listed:
            return
        limit = formatter.width - 6 - max(map(len, listed))
        with formatter.section("Commands"):
            formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in listed.items()])


@click.group(cls=LazyGroup, lazy=COMMANDS, epilog=EXIT_CODES_HELP,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", "-V", prog_name="pairbench")
def cli():
    """Benchmark commands with interleaved, randomized pairs and verdicts you can trust.

    \b
    Examples:
      pairbench run 'sleep 0.01'
      pairbench compare './old input.txt' './new input.txt'
      pairbench show result.json
    """


def deprecated_alias(command: click.Command, old: str) -> None:
    """Register ``command`` under its old name ``old`` too (``RENAMED``): hidden from the help, it runs
    the command after saying the new name on standard error."""
    alias = copy.copy(command)
    alias.name, alias.hidden = old, True
    alias.help = f"The old name of `pairbench {command.name}`, which it runs.\n\n{command.help}"
    run = command.callback

    @functools.wraps(run)
    def warned(*args, **kwargs):
        app = click.get_current_context().find_object(App)
        app.io.err(f"note: `pairbench {old}` is now `pairbench {command.name}`; the old name will go in a "
                   "later version")
        return run(*args, **kwargs)

    alias.callback = warned
    cli.add_command(alias, old)


# --------------------------------------------------------------------------- entry points


def main(argv: Sequence[str] | None = None, *, stdout=None, stderr=None, color: bool | None = None,
         executor_factory: Callable[[OutputPolicy], Executor] | None = None,
         environment: Callable[..., Mapping] | None = None, clock: Callable[[], float] | None = None,
         workers=None) -> int:
    """Run the CLI with ``argv`` and return the exit code (never calls sys.exit).

    ``executor_factory``, ``workers``, ``environment`` and ``clock`` replace the real
    executor, ``bench``'s workers, the machine's metadata and the progress clock (see :class:`App`).
    """
    io = Io(stdout, stderr, color)
    seams = {"executor_factory": executor_factory, "environment": environment, "clock": clock, "workers": workers}
    app = App(io, **{name: seam for name, seam in seams.items() if seam is not None})
    with numpy_loads_without_thread_pool():
        return _with_output_failure(io, _invoke(app, argv))


def _invoke(app: App, argv: Sequence[str] | None) -> int:
    """Run the command line and return its exit code; every error pairbench expects becomes one.
    A signal the console script held and no session took (a usage error, ``run --help``)
    interrupts at the end."""
    code = _run_command(app, argv)
    try:
        held_signals.release()
    except KeyboardInterrupt as exc:
        return _interrupted(app.io, exc)
    return code


def _run_command(app: App, argv: Sequence[str] | None) -> int:
    io = app.io
    try:
        # click writes --help, --version and its own errors to sys.stdout/sys.stderr
        with contextlib.redirect_stdout(io.stdout), contextlib.redirect_stderr(io.stderr):
            result = cli.main(args=list(argv) if argv is not None else None, prog_name="pairbench",
                              standalone_mode=False, obj=app)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:  # bare `pairbench`: the help, not an error
        io.err(exc.format_message())
        return EXIT_USAGE
    except click.ClickException as exc:
        io.err(f"error: {visible(exc.format_message())}")
        return EXIT_USAGE if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Abort as exc:  # click's word for an interruption outside a measurement
        if isinstance(exc.__cause__, KeyboardInterrupt):  # loading a command, reading the machine...
            return _interrupted(io, exc.__cause__)
        return EXIT_INTERRUPTED
    except PairbenchError as exc:
        io.err(f"error: {visible(exc)}")  # messages quote file names, commands, values from files
        return exc.exit_code
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP (Terminated)
        return _interrupted(io, exc)
    except BrokenPipeError:  # written past our streams (click's own output): a reader went away
        return EXIT_BROKEN_PIPE
    except MemoryError:  # a file too large to hold, past the readers' own limits
        io.err("error: out of memory reading or analysing the input; it is larger than this "
               "machine can hold (see the size limits in docs/result-files.md)")
        return EXIT_RESULT_FILE
    except Exception as exc:  # a bug: one line and its own code, never 1 (a --fail-on match)
        return _internal_error(io, exc)
    return result if isinstance(result, int) else EXIT_OK


def _interrupted(io: Io, exc: KeyboardInterrupt) -> int:
    """Say that pairbench was interrupted (naming SIGTERM or SIGHUP) and return its exit code."""
    io.err("interrupted" if not isinstance(exc, Terminated) else f"interrupted ({interruption_name(exc)})")
    return interruption_exit_code(exc)


def _internal_error(io: Io, exc: Exception) -> int:
    """Say that pairbench failed (not the benchmark), in one line, and return ``EXIT_INTERNAL``."""
    if os.environ.get(TRACEBACK_VARIABLE):
        io.err("".join(traceback.format_exception(exc)).rstrip("\n"))
    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    at = f" at {os.path.basename(where[0].filename)}:{where[0].lineno}" if where else ""
    what = visible(" ".join(str(exc).split())[:300])
    io.err(f"internal error: {type(exc).__name__}{at}{': ' + what if what else ''} "
           f"(a bug in pairbench {__version__}, not in your benchmark; set {TRACEBACK_VARIABLE}=1 "
           "for the traceback and please report it)")
    return EXIT_INTERNAL


def _with_output_failure(io: Io, code: int) -> int:
    """``code``, unless standard output could not be written and the code would claim success or a
    --fail-on match: then 141 for a closed pipe (128 + SIGPIPE, what a shell reports for a tool the
    pipe killed; said nowhere, the reader is gone) or 4 for another error (said on standard error).
    A failed command (3), Ctrl-C (130), a usage (2) or result file error (4) keeps its code."""
    error = io.stdout.error
    if error is None:
        return code
    if not isinstance(error, BrokenPipeError):
        io.err(f"error: cannot write to standard output ({error.strerror or error})")
    if code not in (EXIT_OK, EXIT_VERDICT):
        return code
    return EXIT_BROKEN_PIPE if isinstance(error, BrokenPipeError) else EXIT_RESULT_FILE


def entry_point() -> None:
    """The console script (through ``pairbench.__main__``): ``main`` with SIGTERM and SIGHUP handled
    like Ctrl-C, and no traceback whenever an interruption lands."""
    try:
        with terminating_signals_interrupt():
            code = main()
        held_signals.restore()
    except KeyboardInterrupt as exc:  # outside main's own handling: before or after the command
        code = interruption_exit_code(exc)
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stderr.write("interrupted\n")
    except Exception as exc:  # a bug outside main's own handling: still one line, never exit 1
        code = _internal_error(Io(), exc)
    for signum in (signal.SIGINT, *TERMINATING_SIGNALS):  # nothing left to save: exit quietly
        signal.signal(signum, signal.SIG_IGN)
    _silence_exit_flush()
    sys.exit(code)


@contextlib.contextmanager
def terminating_signals_interrupt():
    """In the block, SIGTERM and SIGHUP raise :class:`~pairbench.errors.Terminated`, which every
    part of pairbench handles like Ctrl-C (main thread only). A signal that was ignored when
    pairbench started (``nohup``) stays ignored. While the console script holds them
    (``held_signals``), releasing them installs these handlers instead."""

    def terminate(signum, frame):
        raise Terminated(signum)

    previous = {}
    for signum in () if held_signals.holding() else TERMINATING_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, terminate)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _silence_exit_flush() -> None:
    """Python flushes standard output and error at exit; after a closed pipe or a full disk that
    flush would fail again and print "Exception ignored ...". Point such a stream at /dev/null."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # closed before pairbench started
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, stream.fileno())
                os.close(devnull)
