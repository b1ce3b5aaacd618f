"""The exceptions pairbench raises, and the exit code each one maps to.

Every message says what went wrong and, where there is one, what to do next.
Only ``cli`` turns these into exit codes; everything below it raises. Three
kinds of code are no ``PairbenchError``'s: 128 + the signal for an interruption
(130 Ctrl-C, 143 SIGTERM, 129 SIGHUP: :class:`Terminated`), 141 (standard output
was closed early) and 70 (an unexpected exception: a bug, never exit 1, which
means a --fail-on match).

Exception tree::

    PairbenchError                      base class; exit code 70 (internal) unless a subclass says otherwise
    +-- UsageError                      bad options or arguments (exit 2)
    |   +-- ProgramNotFound             a command's program is not on PATH, not in the current
    |                                   directory, or not executable (found before anything runs)
    +-- StatisticsError (ValueError)    input a statistic cannot use (exit 2: a parameter such as
    |   |                               --alpha out of range; ``show`` and ``report`` turn one
    |   |                               about a stored file into a ResultFileError naming it)
    |   +-- NotEnoughData               n too small for the requested quantity
    |   +-- NoVariance                  every value identical: no spread to reason about
    +-- MeasurementError                a benchmark could not be measured (exit 3)
    |   +-- CommandNotFound             argv[0] could not be started when it was run
    |   +-- CommandFailed               non-zero exit, signal or timeout of a timed command
    |   +-- HelperCommandFailed         --prepare / --setup / --cleanup failed
    +-- ResultFileError                 a result file or journal cannot be read or written (exit 4)
    +-- StoreError                      the history store cannot be reached, read or written (exit 4)
"""

from __future__ import annotations

import signal

EXIT_OK = 0
EXIT_VERDICT = 1  # a verdict matched --fail-on
EXIT_USAGE = 2
EXIT_MEASUREMENT = 3
EXIT_RESULT_FILE = 4
EXIT_BISECT_INCONCLUSIVE = 5  # bisect named no commit: the range that remains is printed
EXIT_BISECT_SPREAD = 6  # bisect: no single commit explains the slowdown
EXIT_BISECT_NO_SLOWDOWN = 7  # bisect: BAD is not slower than GOOD by the threshold
EXIT_INTERNAL = 70  # an unexpected exception: a bug in pairbench (EX_SOFTWARE, sysexits.h)
EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # standard output closed early (128 + SIGPIPE, as a shell reports a piped tool)


def interruption_exit_code(interruption: BaseException) -> int:
    """128 + the signal that interrupted: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    return 128 + getattr(interruption, "signum", signal.SIGINT)


def interruption_name(interruption: BaseException) -> str:
    """How to name what interrupted, for users: "Ctrl-C", "SIGTERM", "SIGHUP"."""
    signum = getattr(interruption, "signum", signal.SIGINT)
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: handled exactly like Ctrl-C, so it is a ``KeyboardInterrupt``.

    Every path that keeps Ctrl-C from losing samples (the sampler, --cleanup, the
    spawner's cancel, the result written at the end) keeps it too; the exit code
    is 128 + ``signum`` (:func:`interruption_exit_code`).
    """

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = int(signum)


class PairbenchError(Exception):
    """Base class of every error pairbench raises on purpose (a bare one is a bug: exit 70)."""

    exit_code = EXIT_INTERNAL


class UsageError(PairbenchError):
    """The options or arguments given cannot work together."""

    exit_code = EXIT_USAGE


class ProgramNotFound(UsageError):
    """The program a command names is not on PATH, not a file in the current directory, or not
    executable: found while reading the command line, before anything runs."""


class NothingToMeasure(UsageError):
    """The sides of a ``bench`` share no benchmark that -k keeps (``bisect`` skips a middle commit
    that says so, as ``git bisect skip``)."""


class StatisticsError(PairbenchError, ValueError):
    """A statistic was given input it cannot use (empty, NaN, wrong shape...).

    ``code`` and ``data`` describe a refusal the analysis turns into a note
    (``pairbench.notes``): the code names it, the data holds its figures
    (``{"needed": 6, "got": 4, "purpose": "median-interval"}``). Input that is
    simply wrong (NaN, a bad parameter) has no code.
    """

    exit_code = EXIT_USAGE
    default_code = ""

    def __init__(self, message: str, *, code: str = "", **data):
        super().__init__(message)
        self.code = code or self.default_code
        self.data = data


class NotEnoughData(StatisticsError):
    """Too few values for the requested quantity; ``data`` says how many are needed and got."""

    default_code = "not-enough-data"


class NoVariance(StatisticsError):
    """All values are identical, so no interval or test is meaningful."""

    default_code = "no-variance"


class MeasurementError(PairbenchError):
    """A command could not be measured."""

    exit_code = EXIT_MEASUREMENT


class CommandNotFound(MeasurementError):
    """The program could not be started when it was run (removed or made unexecutable since the
    command line was read, or refused by the system)."""


class CommandFailed(MeasurementError):
    """A timed command exited non-zero, was killed by a signal, or timed out."""


class HelperCommandFailed(MeasurementError):
    """A --prepare, --setup, --conclude or --cleanup command failed; ``rows`` holds what a target
    measured before its helper failed (a --conclude follows a complete sample)."""

    rows: tuple = ()


class ResultFileError(PairbenchError):
    """A result document or journal is malformed, truncated, hostile or unwritable."""

    exit_code = EXIT_RESULT_FILE


class StoreError(PairbenchError):
    """The history store cannot be reached, is of a newer schema, is locked, or refused a write;
    the message names the store (its URL without a password) and what to do next."""

    exit_code = EXIT_RESULT_FILE
