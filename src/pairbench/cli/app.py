"""The ``pairbench`` command group, where output goes, and ``main``."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence

import click

from pairbench import __version__
from pairbench.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, PairbenchError
from pairbench.measure.executor import Executor, OutputPolicy

EXIT_CODES_HELP = """\b
Exit codes:
  0    success
  1    a verdict matched --fail-on (compare)
  2    usage error
  3    a command failed or could not be run
  4    a result file could not be read or written
  130  interrupted (Ctrl-C); finished samples are saved
"""


class Io:
    """Where output goes; swapped in tests."""

    def __init__(self, stdout=None, stderr=None, color: bool | None = None):
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
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


# The executor factory is a seam: tests install a FakeExecutor here.
def _default_executor(output: OutputPolicy) -> Executor:
    """Commands run from a small spawner process, so their max RSS is their own (measure.spawner)."""
    from pairbench.measure.spawner import SpawnerExecutor

    return SpawnerExecutor(output=output)


EXECUTOR_FACTORY = _default_executor


def make_executor(output: OutputPolicy) -> Executor:
    """The executor commands measure with (``EXECUTOR_FACTORY`` is the seam tests replace)."""
    return EXECUTOR_FACTORY(output)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="pairbench")
def cli():
    """Benchmark commands with interleaved, randomized pairs and verdicts you can trust.

    \b
    Examples:
      pairbench run 'sleep 0.01'
      pairbench compare './old input.txt' './new input.txt'
      pairbench show result.json
    """


# --------------------------------------------------------------------------- entry points


def main(argv: Sequence[str] | None = None, *, stdout=None, stderr=None, color: bool | None = None) -> int:
    """Run the CLI with ``argv`` and return the exit code (never calls sys.exit)."""
    io = Io(stdout, stderr, color)
    try:
        # click writes --help, --version and its own errors to sys.stdout/sys.stderr
        with contextlib.redirect_stdout(io.stdout), contextlib.redirect_stderr(io.stderr):
            result = cli.main(args=list(argv) if argv is not None else None, prog_name="pairbench",
                              standalone_mode=False, obj=io)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:  # bare `pairbench`: the help, not an error
        io.err(exc.format_message())
        return EXIT_USAGE
    except click.ClickException as exc:
        io.err(f"error: {exc.format_message()}")
        return EXIT_USAGE if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Abort:
        return EXIT_INTERRUPTED
    except PairbenchError as exc:
        io.err(f"error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        io.err("interrupted")
        return EXIT_INTERRUPTED
    return result if isinstance(result, int) else EXIT_OK


def entry_point() -> None:
    sys.exit(main())
