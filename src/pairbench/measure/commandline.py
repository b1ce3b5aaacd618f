"""Turning the command string a user typed into a :class:`~pairbench.model.Command`.

Without a shell (the default, ``-N``) a command is split into words the way a
POSIX shell splits them (:func:`shlex.split`: quotes and backslashes) and run
directly, with ``argv[0]`` resolved once, here (on ``PATH``, else a file of that
name in the current directory: :func:`resolve_program`), so that a typo fails
before any measuring starts, as a usage error, and every sample runs the same
program. Shell
syntax that only a shell would act on (pipes, ``&&``, ``;``, redirections,
``$VAR``, command substitution, a leading ``NAME=value``) is refused rather
than handed to the program as plain words (:func:`shell_syntax`): hyperfine runs
commands through a shell, and its users write such lines. Globs and ``~`` are
not refused: many programs take ``*.c`` as a pattern of their own.

With ``-S/--shell SHELL`` the string is handed to ``SHELL -c`` (:class:`Shell`),
whose own start-up cost :func:`measure_shell_startup` measures so it can be
reported. Helper commands (``--prepare``, ``--conclude``, ``--setup``,
``--cleanup``) always run through a shell, as hyperfine's do: ``/bin/sh``
unless ``--shell`` names another. Parameters (``-P``/``-L``) are substituted
into the text first (:func:`substitute`).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import statistics
from collections.abc import Iterable

from pairbench.command import Command
from pairbench.errors import MeasurementError, ProgramNotFound, UsageError
from pairbench.frozen import frozen

SHELL = "/bin/sh"


@frozen
class Shell:
    """A shell that runs command strings: ``argv`` comes before ``-c TEXT`` (``/bin/bash --norc``);
    ``name`` is how the user gave it (``bash --norc``)."""

    name: str
    argv: tuple[str, ...]

    def command(self, text: str) -> Command:
        return Command(text, (*self.argv, "-c", text), shell=True)


DEFAULT_SHELL = Shell("sh", (SHELL,))


def resolve_shell(name: str | None) -> Shell | None:
    """The :class:`Shell` of a validated ``--shell`` value (``parsers.parse_shell``), its program
    found on PATH (``ProgramNotFound`` if not); None for ``none``. ``sh`` is ``/bin/sh``."""
    if name is None or name == "none":
        return None
    if name == "sh":
        return DEFAULT_SHELL
    words = shlex.split(name)
    return Shell(name, (resolve_program(words[0]), *words[1:]))


def substitute(text: str, combination: Iterable[tuple[str, str]]) -> str:
    """``text`` with each ``{NAME}`` of the parameter combination replaced by its value (as
    hyperfine does; other braces are left alone)."""
    for name, value in combination:
        text = text.replace("{" + name + "}", value)
    return text


def parse_command(text: str, *, shell: bool | Shell | None = False) -> Command:
    """Return the :class:`Command` for ``text``, split into argv or wrapped in ``SHELL -c``.

    ``shell`` is a :class:`Shell`, True for ``/bin/sh``, or False/None for none. Raises
    ``UsageError`` for an empty command, a NUL byte, unbalanced quotes or (without a shell)
    shell syntax, and ``ProgramNotFound`` (:func:`resolve_program`) when the program is not found or
    not executable.

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
        return (DEFAULT_SHELL if shell is True else shell).command(text)
    words = split_words(text)
    found = shell_syntax(text)
    if found:
        shown = ", ".join(repr(s) for s in found)
        raise UsageError(
            f"command {text!r} uses shell syntax ({shown}) that only a shell acts on, but commands run "
            "without one unless asked (its start-up would be timed too): add --shell sh (or -S bash) "
            "to run the commands through that shell, or quote the characters to pass them to the "
            "program as they are")
    return Command(text, (resolve_program(words[0]), *words[1:]), shell=False)


def split_words(text: str) -> list[str]:
    """``text`` split into words like a shell (``UsageError`` for unbalanced quotes or no program)."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(
            f"cannot split command {text!r} into words: {exc}; balance the quotes, "
            "or use --shell sh to pass it to sh as it is"
        ) from None
    if not words or not words[0]:  # e.g. "''": quotes around nothing
        raise UsageError(f"empty program name in command {text!r}: give a program to run")
    return words


def with_input(command: Command, path: str) -> Command:
    """``command`` reading ``path`` as its standard input (``--input``): a shell opens the file and
    then execs the command, so the shell's start-up is in every sample (measured and reported)."""
    if command.shell:
        *shell, flag, text = command.argv
        return Command(command.text, (*shell, flag, f"exec < {shlex.quote(path)}\n{text}"), shell=True)
    return Command(command.text, (SHELL, "-c", f'exec "$@" < {shlex.quote(path)}', "sh", *command.argv),
                   shell=True)


_OPERATOR_CHARS = frozenset("|&;<>()")
_PARAMETER_START = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]|\{|\()")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def shell_syntax(text: str) -> list[str]:
    """What in ``text`` a POSIX shell would act on that a program run without one receives as
    plain characters: unquoted operators and redirections (``|``, ``&&``, ``;``, ``>>``, ``(``),
    ``$`` expansions and command substitution (unquoted or in double quotes, as the shell expands
    them there), a backquote, an unquoted newline, a ``#`` comment, and a leading ``NAME=value``.
    Quoted (``'|'``, ``"a;b"``) or backslash-escaped characters are the program's. In order of
    appearance, each once.
    """
    found: list[str] = []
    i, n, quote, word_start = 0, len(text), "", True
    first_word = text.split(maxsplit=1)[0] if text.strip() else ""
    if _ASSIGNMENT.match(first_word):
        found.append(first_word)
    while i < n:
        c = text[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 1  # the next character is the program's
        elif c == "$" and (expansion := _PARAMETER_START.match(text, i)):
            found.append(expansion.group(0))
            i = expansion.end() - 1
        elif c == "`":
            found.append("`")
        elif quote == '"':
            quote = "" if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif c in _OPERATOR_CHARS:
            j = i
            while j < n and text[j] in _OPERATOR_CHARS:
                j += 1
            found.append(text[i:j])
            i = j - 1
        elif c == "\n":
            found.append("\n")
        elif c == "#" and word_start:
            found.append("#")
        word_start = c in " \t\n" and not quote
        i += 1
    return list(dict.fromkeys(found))


# Commands a POSIX shell or bash runs itself: no program of the name is on PATH, so only --shell helps.
SHELL_BUILTINS = frozenset({
    ".", ":", "alias", "bg", "bind", "break", "builtin", "cd", "command", "continue", "declare", "dirs",
    "disown", "eval", "exec", "exit", "export", "fc", "fg", "getopts", "hash", "history", "jobs", "let",
    "local", "logout", "popd", "pushd", "read", "readonly", "return", "set", "shift", "shopt", "source",
    "suspend", "times", "trap", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait"})


def resolve_program(name: str) -> str:
    """Return the absolute path of the program ``name``.

    A name with a slash is a path. A bare name is searched on ``PATH`` first, as a shell does, so
    a name that is also a program on PATH keeps that meaning; a bare name that is not on PATH but
    names an executable file in the current directory is that file (``pairbench bench old.test
    new.test`` runs ``./old.test``, as hyperfine's users write it). Raises ``ProgramNotFound`` (a
    usage error: nothing has run) saying whether it is missing, not executable, or a shell builtin.
    """
    if "/" in name:
        return _check_executable(name, name)
    found = shutil.which(name)
    if found is not None:
        return os.path.abspath(found)
    if os.path.lexists(name):
        return _check_executable(name, os.path.join(os.curdir, name))
    unusable = _find_on_path_unexecutable(name)
    if unusable:
        raise ProgramNotFound(
            f"cannot execute {name!r}: found {unusable!r} on PATH but it is not executable "
            "(chmod +x it?)"
        )
    if name in SHELL_BUILTINS:
        raise ProgramNotFound(
            f"{name!r} is a shell builtin, not a program: run the commands through a shell with --shell sh"
        )
    raise ProgramNotFound(
        f"command not found: {name!r} is neither on PATH nor a file in the current directory; "
        "give the program's path (./DIR/PROGRAM) or add its directory to PATH"
    )


def _check_executable(name: str, path: str) -> str:
    if not os.path.exists(path):
        raise ProgramNotFound(f"command not found: {name!r} (no such file)")
    if os.path.isdir(path):
        raise ProgramNotFound(f"cannot execute {name!r}: it is a directory")
    if not os.access(path, os.X_OK):
        raise ProgramNotFound(f"cannot execute {path!r}: not executable (chmod +x it?)")
    return os.path.abspath(path)


def _find_on_path_unexecutable(name: str) -> str:
    """The first file called ``name`` on PATH that exists but cannot be executed, or ''."""
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and not os.access(candidate, os.X_OK):
            return candidate
    return ""


@frozen
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


def measure_shell_startup(executor, runs: int = 50, *, warmup: int = 3, shell: Shell = DEFAULT_SHELL,
                          ) -> ShellStartup:
    """Time ``SHELL -c ''`` ``runs`` times with ``executor``, after ``warmup`` untimed runs.

    Raises ``MeasurementError`` if the shell does not exit 0.
    """
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise UsageError(f"`runs` must be an integer >= 1, got {runs!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise UsageError(f"`warmup` must be an integer >= 0, got {warmup!r}")
    command = shell.command("")
    values = []
    for i in range(warmup + runs):
        execution = executor.run(command)
        if execution.status != 0:
            raise MeasurementError(
                f"the shell {' '.join(shell.argv)} failed to run an empty command (status {execution.status}); "
                "check it works, or run without --shell"
            )
        if i >= warmup:
            values.append(execution.wall_ns)
    return ShellStartup(
        shell=shell.name if shell is not DEFAULT_SHELL else SHELL,
        n=len(values),
        median_ns=float(statistics.median(values)),
        min_ns=min(values),
        values_ns=tuple(values),
    )
