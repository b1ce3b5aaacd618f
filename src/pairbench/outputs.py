"""Where pairbench may write: the one guard every file it writes passes, whatever the command.

A file pairbench writes (a result, a report, an export, a diff, the history
page, a command's ``--output``, a build log, a result kept for the store, a
SQLite store) is never:

* a journal: a name ending in ``.partial`` (the journal of the run whose result
  has the name without it), or the file a live run is journaling into under
  any name (a run holds an ``flock`` on its journal while it writes it);
* one of the command's own inputs, by name, through a symbolic link or as a
  hard link (``diff A B --json A`` would replace A's raw samples);
* reached through a symbolic link that the kernel's protected_symlinks rule
  would not follow (another user's link in a sticky, world-writable directory
  such as /tmp). The kernel applies that rule only to an ``open`` of the link
  itself, which a rename over the target or SQLite's own open never does, and
  which is off where ``fs.protected_symlinks`` is 0: so it is checked here, on
  every link of the path;
* below the project's ``.pairbench`` directory through any symbolic link at
  all, for the files pairbench names there itself (:func:`private_directory`,
  :func:`open_private`): a link committed to a repository could point anywhere.

The checks are made before a command does any work (:func:`check_output`: a
``UsageError`` naming the option), and again at the moment of writing
(:func:`check_target`, :func:`open_stream`: a :class:`RefusedOutput`, an
``OSError`` the writers already say in their own words). A file opened as a
stream is opened with ``O_NOFOLLOW`` when its name was no link, so a link
planted between the check and the open is not followed either.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from pairbench.errors import UsageError

JOURNAL_SUFFIX = ".partial"
"""What a result's journal adds to its name (``store.journal``): no file pairbench writes ends in it."""
MAX_LINKS = 40  # as the kernel's ELOOP limit


class RefusedOutput(PermissionError):
    """A file pairbench will not write; ``strerror`` says why, in one line."""

    def __init__(self, path: str | os.PathLike, why: str):
        super().__init__(errno.EACCES, why, str(path))


class UnsafeLinkError(RefusedOutput):
    """A symbolic link on the way to a file to write, which the kernel's protected_symlinks rule
    would not follow; ``strerror`` says which and why."""


# --------------------------------------------------------------------------- the checks of every write


def check_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` replaces (every link on the way followed), once it passed the
    checks of every write: not a journal's name or a live journal, no link another user planted
    (:class:`RefusedOutput`, an ``OSError``)."""
    path = Path(path)
    _refuse_journal_name(path, path)
    target = writable_target(path)
    _refuse_journal_name(path, target)
    if is_live_journal(target):
        raise RefusedOutput(path, f"{path} is the journal a pairbench run is writing now; writing it would "
                            "lose that run's samples: choose another name")
    return target


def _refuse_journal_name(path: Path, name: Path) -> None:
    if name.name.endswith(JOURNAL_SUFFIX):
        through = "" if name == path else f" (through a link to {name})"
        raise RefusedOutput(path, f"{path} ends in {JOURNAL_SUFFIX}{through}, the name of the journal of a run "
                            f"with --json {str(name).removesuffix(JOURNAL_SUFFIX)}, whose samples it would "
                            "replace: choose another name")


def check_output(option: str, path: str, *, example: str | None = None,
          inputs: Sequence[tuple[str, str | None]] = ()) -> None:
    """Refuse (``UsageError`` naming ``option``), before a command does any work, an output ``path``
    that :func:`check_target` refuses, that is a directory (suggesting ``example`` in it), whose
    directory does not exist or cannot be written, or that is one of ``inputs`` ((what, path))."""
    if Path(path).is_dir():
        hint = f"; give a file path, e.g. {str(Path(path) / example)!r}" if example else "; give a file path"
        raise UsageError(f"{option} {path!r} is a directory{hint}")
    try:
        target = check_target(path)
    except OSError as exc:
        raise UsageError(f"{option} {path!r}: {exc.strerror or exc}") from None
    directory = target.parent
    if not directory.is_dir():
        raise UsageError(f"{option} {path!r}: the directory {str(directory)!r} does not exist")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"{option} {path!r}: the directory {str(directory)!r} is not writable")
    refuse_inputs([(option, path)], inputs)


def refuse_inputs(outputs: Sequence[tuple[str, str | None]], inputs: Sequence[tuple[str, str | None]]) -> None:
    """Refuse (``UsageError``) an output that is one file with another output or with an input, by
    name, through a symbolic link or as a hard link: one would overwrite the other."""
    given = [(what, path) for what, path in outputs if path]
    others = [(what, path) for what, path in inputs if path]
    for i, (what, path) in enumerate(given):
        for other_what, other in [*given[:i], *others]:
            if same_file(path, other):
                raise UsageError(f"{other_what} and {what} name the same file ({path}): one would "
                                 "overwrite the other; give them different paths")


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` are one file: the same path once links are resolved, or hard links."""
    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except (OSError, RuntimeError, ValueError):  # a link loop, a NUL: not a file anything could be written to
        return False


def is_live_journal(path: str | os.PathLike) -> bool:
    """True if a live pairbench run holds the lock of a journal on ``path`` (any name of the file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


# --------------------------------------------------------------------------- streams


def open_stream(path: str | os.PathLike, *, truncate: bool) -> int:
    """A close-on-exec descriptor appending to ``path`` (emptied first if ``truncate``), after the
    checks of every write (:func:`check_target`). A name that was no link is opened with
    ``O_NOFOLLOW``: a link planted there since the check is refused (``ELOOP``), not followed."""
    was_link = os.path.islink(path)
    check_target(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | (os.O_TRUNC if truncate else 0)
    if not was_link:
        flags |= os.O_NOFOLLOW
    try:
        return os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafeLinkError(path, f"{path} became a symbolic link while pairbench opened it; "
                                  "refusing to follow it") from None
        raise


def private_directory(root: str | os.PathLike, relative: str) -> Path:
    """``root/relative``, a directory pairbench names itself in a project (``.pairbench/confirm``),
    made as needed, each component a real directory: a symbolic link below ``root``, even one of the
    user's own (a repository can commit one), is refused (:class:`RefusedOutput`)."""
    current = Path(root)
    for part in Path(relative).parts:
        current = current / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(current)
        info = os.lstat(current)
        if stat.S_ISLNK(info.st_mode):
            raise RefusedOutput(current, f"{current} is a symbolic link; pairbench writes its own files below "
                                f"{root} only into real directories, never through a link (one committed to a "
                                "repository could point anywhere): remove it")
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, f"{current} is not a directory", str(current))
    return current


def check_private_directory(root: str | os.PathLike, relative: str) -> None:
    """Refuse (:class:`RefusedOutput`) what :func:`private_directory` would refuse, making nothing: a
    component of ``root/relative`` that exists as a symbolic link or not as a directory."""
    current = Path(root)
    for part in Path(relative).parts:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(info.st_mode):
            raise RefusedOutput(current, f"{current} is a symbolic link; pairbench writes its own files below "
                                f"{root} only into real directories, never through a link (one committed to a "
                                "repository could point anywhere): remove it")
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, f"{current} is not a directory", str(current))


def open_private(directory: Path, name: str) -> int:
    """A close-on-exec descriptor writing the file ``name`` afresh in ``directory`` (from
    :func:`private_directory`); a link of that name is refused, never followed."""
    path = directory / name
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RefusedOutput(path, f"{path} is a symbolic link; pairbench writes its own files only "
                                "through real names, never through a link (one committed to a repository "
                                "could point anywhere): remove it") from None
        raise


# --------------------------------------------------------------------------- links


def writable_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` replaces: ``path`` with every symbolic link on the way followed.

    Each link is checked against the kernel's protected_symlinks rule (:func:`may_follow`),
    which the kernel cannot apply for us: a write that renames a temporary file over
    the target opens no link. So ``--json /tmp/x.json``, run as root where another
    user planted ``x.json -> /etc/passwd``, raises ``UnsafeLinkError`` instead of
    replacing ``/etc/passwd``. Components are resolved as the kernel resolves them
    (``link/..`` is the parent of the link's target); a missing one is kept as named.
    """
    parts = list(Path(path).parts)
    current = Path(parts.pop(0)) if parts and Path(parts[0]).is_absolute() else Path(os.getcwd())
    links = 0
    while parts:
        part = parts.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            current = current.parent
            continue
        candidate = current / part
        try:
            info = os.lstat(candidate)
        except FileNotFoundError:
            current = candidate
            continue
        if not stat.S_ISLNK(info.st_mode):
            current = candidate
            continue
        links += 1
        if links > MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
        _check_link(candidate, info, os.stat(current))
        target = Path(os.readlink(candidate))
        if target.is_absolute():
            current = Path(target.parts[0])
        parts[:0] = [p for p in target.parts if not Path(p).is_absolute()]
    return current


def may_follow(link: os.stat_result, directory: os.stat_result, euid: int) -> bool:
    """The kernel's protected_symlinks rule (``may_follow_link`` in fs/namei.c;
    Documentation/admin-guide/sysctl/fs.rst): a link is followed when its owner is the follower,
    or it does not lie in a sticky, world-writable directory, or its owner owns that directory."""
    shared = stat.S_ISVTX | stat.S_IWOTH
    return (link.st_uid == euid or (directory.st_mode & shared) != shared
            or directory.st_uid == link.st_uid)


def _check_link(link: Path, info: os.stat_result, directory: os.stat_result) -> None:
    if may_follow(info, directory, os.geteuid()):
        return
    raise UnsafeLinkError(
        link,
        f"refusing to follow the symbolic link {link}: it lies in the sticky, world-writable directory "
        f"{link.parent} and belongs to uid {info.st_uid}, neither you nor the directory's owner (the "
        "kernel's protected_symlinks rule); remove it or write elsewhere")
