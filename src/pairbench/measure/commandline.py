"""Turning the command string a user typed into a :class:`~pairbench.model.Command`.

Without ``--shell`` a command is split into words the way a POSIX shell splits
them (:func:`shlex.split`: quotes and backslashes, no variables, globs, pipes
or redirections) and run directly, with ``argv[0]`` resolved on ``PATH`` once,
here, so that a typo fails before any measuring starts and every sample runs
the same program. With ``--shell`` the string is handed to ``/bin/sh -c``, whose
own start-up cost :func:`measure_shell_startup` measures so it can be reported.
"""

from __future__ import annotations

import os
import shlex
import shutil
import statistics
from dataclasses import dataclass

from pairbench.command import Command
from pairbench.errors import CommandNotFound, MeasurementError, UsageError
from pairbench.notes import Note

SHELL = "/bin/sh"

# Words that mean something to a shell but are plain arguments without one.
_SHELL_OPERATORS = frozenset(
    {"|", "||", "&&", "&", ";", ">", ">>", "<", "<<", "2>", "2>&1", "&>", "|&", "(", ")"}
)


def parse_command(text: str, *, shell: bool = False) -> Command:
    """Return the :class:`Command` for ``text``, split into argv or wrapped in ``sh -c``.

    Raises ``UsageError`` for an empty command, a NUL byte or unbalanced
    quotes, and ``CommandNotFound`` when the program is not on ``PATH`` or not
    executable.

    >>> parse_command("sleep 0.25").argv[1:]
    ('0.25',)
    >>> parse_command("echo $HOME | wc -c", shell=True).argv
    ('/bin/sh', '-c', 'echo $HOME | wc -c')
    """
    if not isinstance(text, str):
        raise UsageError(f"a command must be a string, got {type(text).__name__}: {text!r}")
    if "\0" in text:
        raise UsageError(f"command {text!r} contains a NUL byte, which no program can receive")
    if not text.strip():
        raise UsageError(f"empty command {text!r}: give a program to run")
    if shell:
        return Command(text, (SHELL, "-c", text), shell=True)
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(
            f"cannot split command {text!r} into words: {exc}; balance the quotes, "
            "or use --shell to pass it to sh as it is"
        ) from None
    if not words or not words[0]:  # e.g. "''": quotes around nothing
        raise UsageError(f"empty program name in command {text!r}: give a program to run")
    return Command(text, (resolve_program(words[0]), *words[1:]), shell=False)


def resolve_program(name: str) -> str:
    """Return the absolute path of the program ``name``, searched on ``PATH`` unless it has a slash.

    Raises ``CommandNotFound`` saying whether it is missing or not executable.
    """
    if "/" in name:
        return _check_executable(name, name)
    found = shutil.which(name)
    if found is not None:
        return os.path.abspath(found)
    unusable = _find_on_path_unexecutable(name)
    if unusable:
        raise CommandNotFound(
            f"cannot execute {name!r}: found {unusable!r} on PATH but it is not executable "
            "(chmod +x it?)"
        )
    raise CommandNotFound(
        f"command not found: {name!r} (not on PATH); use --shell if it is a shell builtin or pipeline"
    )


def _check_executable(name: str, path: str) -> str:
    if not os.path.exists(path):
        raise CommandNotFound(f"command not found: {name!r} (no such file)")
    if os.path.isdir(path):
        raise CommandNotFound(f"cannot execute {name!r}: it is a directory")
    if not os.access(path, os.X_OK):
        raise CommandNotFound(f"cannot execute {name!r}: not executable (chmod +x it?)")
    return os.path.abspath(path)


def _find_on_path_unexecutable(name: str) -> str:
    """The first file called ``name`` on PATH that exists but cannot be executed, or ''."""
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and not os.access(candidate, os.X_OK):
            return candidate
    return ""


def shell_syntax_note(command: Command) -> Note | None:
    """A note when a command run without a shell has words only a shell would act on, else None.

    ``pairbench run "make | tee log"`` runs ``make`` with the arguments ``|``,
    ``tee`` and ``log``; the user almost certainly meant ``--shell``.
    """
    if command.shell:
        return None
    operators = [w for w in command.argv[1:] if w in _SHELL_OPERATORS]
    if not operators:
        return None
    return Note("shell-syntax", {"command": command.text, "operators": list(dict.fromkeys(operators))})


@dataclass(frozen=True)
class ShellStartup:
    """How long the shell takes to start and exit doing nothing (``sh -c ''``), in ns.

    ``values_ns`` are the raw timings in execution order; ``median_ns`` is what
    a ``--shell`` sample's wall time includes beyond the command itself.
    """

    shell: str
    n: int
    median_ns: float
    min_ns: int
    values_ns: tuple[int, ...]

    def to_dict(self) -> dict:
        return {
            "shell": self.shell,
            "n": self.n,
            "median_ns": self.median_ns,
            "min_ns": self.min_ns,
            "values_ns": list(self.values_ns),
        }


def measure_shell_startup(executor, runs: int = 50, *, warmup: int = 3) -> ShellStartup:
    """Time ``/bin/sh -c ''`` ``runs`` times with ``executor``, after ``warmup`` untimed runs.

    Raises ``MeasurementError`` if the shell does not exit 0.
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise UsageError(f"`runs` must be an integer >= 1, got {runs!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise UsageError(f"`warmup` must be an integer >= 0, got {warmup!r}")
    command = Command("", (SHELL, "-c", ""), shell=True)
    values = []
    for i in range(warmup + runs):
        execution = executor.run(command)
        if execution.status != 0:
            raise MeasurementError(
                f"the shell {SHELL} failed to run an empty command (status {execution.status}); "
                "check it works, or run without --shell"
            )
        if i >= warmup:
            values.append(execution.wall_ns)
    return ShellStartup(
        shell=SHELL,
        n=len(values),
        median_ns=float(statistics.median(values)),
        min_ns=min(values),
        values_ns=tuple(values),
    )
