"""Files, written atomically and read defensively: the I/O every stored document goes through.

Writing: the text goes to a temporary file beside the target, is fsynced and
renamed over it, and the directory is fsynced, so a reader sees the old file
or the new one, never half. Reading: a size limit, UTF-8, JSON without NaN or
Infinity and without nesting deep enough to exhaust the stack, each failure a
``ResultFileError`` naming the file and the problem.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from pairbench.errors import ResultFileError

MAX_FILE_BYTES = 2 * 1024**3  # refuse to parse anything larger


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that readers see the old or the new file, never half.

    A symbolic link is written through: its target is replaced (the temporary
    file lies beside the target, so the rename never crosses file systems) and
    the link stays a link.
    """
    target = Path(path).resolve()
    directory = target.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~_current_umask())  # mkstemp makes 0600; give the usual mode
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the rename is still atomic
    finally:
        os.close(fd)


def read_text_file(path: Path) -> str:
    """The text of a result or metadata file; ResultFileError naming the file and the problem."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ResultFileError(f"{path}: {size} bytes is larger than the {MAX_FILE_BYTES}-byte limit")
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise ResultFileError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ResultFileError(f"{path}: not a pairbench result (not UTF-8 text)") from None
    except IsADirectoryError:
        raise ResultFileError(f"{path}: is a directory, not a result file") from None
    except OSError as exc:
        raise ResultFileError(f"{path}: cannot read ({exc.strerror})") from None


def parse_json_text(path: Path, text: str) -> object:
    """The JSON value of ``text`` read from ``path``, no NaN or Infinity; ResultFileError otherwise."""
    if not text.strip():
        raise ResultFileError(f"{path}: the file is empty")
    try:
        return json.loads(text, parse_constant=reject_constant)
    except RecursionError:
        raise ResultFileError(f"{path}: nested too deeply to be a pairbench result") from None
    except json.JSONDecodeError as exc:
        hint = " (truncated?)" if exc.pos >= len(text.rstrip()) - 1 else ""
        raise ResultFileError(
            f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except ValueError as exc:
        raise ResultFileError(f"{path}: {exc}") from None


def reject_constant(name: str):
    """``json.loads``' ``parse_constant``: NaN and Infinity are not JSON a result may hold."""
    raise ValueError(f"{name} is not allowed in a result file (non-finite number)")


def dumps(document: object) -> str:
    """Compact JSON with no NaN or Infinity (a ValueError if ``document`` holds one)."""
    return json.dumps(document, allow_nan=False, separators=(",", ":"))
