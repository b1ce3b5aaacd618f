"""Files, written atomically and read defensively: the I/O every stored document goes through.

Writing: the text goes to a temporary file beside the target, is fsynced and
renamed over it, and the directory is fsynced, so a reader sees the old file
or the new one, never half; the target passes ``outputs.check_target`` (a
symbolic link on the way is followed only as the kernel's protected_symlinks
rule allows; never a journal), and a replaced file keeps its mode.
Reading: regular files only, a size limit, UTF-8, JSON without NaN, Infinity,
overflowing numbers or repeated keys, with no more lists, objects and strings
than a real result holds (so memory stays a small multiple of the size) and
without nesting deep enough to exhaust the stack, each failure a
``ResultFileError`` naming the file and the problem.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import math
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from pairbench.errors import ResultFileError
from pairbench.outputs import check_target

# The largest result read: two sides of a million samples each take 137 MB (benchmarks/RESULTS.md);
# parsing costs about 4 bytes of memory per byte of such a result, and at most ~10 for any text that
# passes check_shape (floats: 1e9, = 4 bytes, become 32-byte objects).
MAX_FILE_BYTES = 256 * 2**20
MAX_FILE_SAMPLES = "3.9 million"  # at the 68 bytes a sample takes in a result document
MAX_CONTAINERS = 1_000_000  # lists and objects: ~40 a series, so 25,000 series (1,000 sides x 25 benchmarks)
MAX_STRINGS = 2_000_000  # a series has ~20 keys and names


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (see :func:`atomic_write_chunks`)."""
    atomic_write_chunks(path, (text,))


def atomic_write_chunks(path: Path, chunks: Iterable[str], *, readable: bool = False) -> None:
    """Replace ``path`` with the text of ``chunks`` (each written as it comes, so a large document
    never needs to be held whole) so that readers see the old or the new file, never half.

    A symbolic link is written through: its target is replaced (the temporary
    file lies beside the target, so the rename never crosses file systems) and
    the link stays a link; but only a link the kernel would follow, and never
    over a journal (``outputs.check_target``: else ``RefusedOutput``). A file replaced keeps
    its permission bits; a new one gets 0666 less the umask. A path that is a
    device, a pipe or a socket is never replaced (``OSError``).

    ``readable``: the text must stay within what :func:`read_text_file` and
    :func:`check_shape` accept (its size, lists, objects and strings, counted as
    they count them); beyond, the write stops with a ``ResultFileError`` and
    nothing is replaced, so pairbench never writes a result it cannot read back.
    """
    target = check_target(path)
    directory = target.parent
    mode = _mode_for(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, mode)  # mkstemp makes 0600
        limits = _ReadableText(Path(path)) if readable else None
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for chunk in chunks:
                if limits is not None:
                    limits.add(chunk)
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


class _ReadableText:
    """Counts text as it is written, as the readers count it (:func:`read_text_file`'s size, then
    :func:`check_shape`), and refuses it the moment it grows beyond what they accept."""

    def __init__(self, path: Path):
        self.path, self.size, self.containers, self.quotes = path, 0, 0, 0

    def add(self, chunk: str) -> None:
        self.size += len(chunk) if chunk.isascii() else len(chunk.encode("utf-8", "surrogatepass"))
        self.containers += chunk.count("[") + chunk.count("{")
        self.quotes += chunk.count('"')
        if self.size > MAX_FILE_BYTES:
            raise ResultFileError(f"{self.path}: the result would be larger than the {MAX_FILE_BYTES // 2**20} MiB "
                                  f"a result file may be (about {MAX_FILE_SAMPLES} samples), so pairbench could not "
                                  "read it back; nothing was written")
        if self.containers > MAX_CONTAINERS or self.quotes // 2 > MAX_STRINGS:
            raise ResultFileError(f"{self.path}: the result would hold more lists, objects or strings than a "
                                  f"result file may ({MAX_CONTAINERS:,} and {MAX_STRINGS:,}), so pairbench could "
                                  "not read it back; nothing was written")


def _mode_for(target: Path) -> int:
    """The permission bits of the file ``target`` replaces, or 0666 less the umask for a new file;
    OSError when ``target`` is not a regular file (renaming over a device or a pipe replaces it)."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return 0o666 & ~_current_umask()
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, f"{target} is not a regular file (a device, a pipe or a socket); give "
                      "the path of a file to write", str(target))
    return stat.S_IMODE(info.st_mode) & 0o777


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


def read_text_file(path: Path, what: str = "a pairbench result") -> str:
    """The text of a result or metadata file; ResultFileError naming the file and the problem (and
    saying the file is not ``what`` when it is not UTF-8 text).

    Only a regular file is read (a device such as /dev/zero, a named pipe or a
    socket is refused without reading it, and opening one never waits for a
    writer), and at most ``MAX_FILE_BYTES`` of it.
    """
    fd = _open_to_read(path)
    try:
        data = _read_regular(path, fd)
    except OSError as exc:
        raise ResultFileError(f"{path}: cannot read ({exc.strerror})") from None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ResultFileError(f"{path}: not {what} (not UTF-8 text)") from None
    except MemoryError:
        raise ResultFileError(f"{path}: not enough memory to read its {len(data):,} bytes") from None


MAX_LINE_BYTES = 1 << 20
"""The longest line :func:`read_lines` reads (a line of a tool's text output is a few hundred bytes)."""


def read_lines(path: Path) -> Iterator[str]:
    """The lines of a text file, one at a time (without their newline), for a format read a line at a
    time: as :func:`read_text_file` reads (a regular file, at most ``MAX_FILE_BYTES``, UTF-8; else a
    ``ResultFileError`` naming the file and the line), but holding one line in memory, not the file."""
    fd = _open_to_read(path)
    with os.fdopen(fd, "rb") as handle:
        _check_regular(path, os.fstat(fd))
        total = 0
        for number, raw in enumerate(_bounded_lines(path, handle), start=1):
            total += len(raw)
            if total > MAX_FILE_BYTES:
                raise ResultFileError(f"{path}: larger than the limit of {MAX_FILE_BYTES:,} bytes "
                                      f"({MAX_FILE_BYTES // 2**20} MiB)")
            try:
                yield raw.rstrip(b"\n").decode("utf-8")
            except UnicodeDecodeError:
                raise ResultFileError(f"{path}, line {number}: not UTF-8 text") from None


def _open_to_read(path: Path) -> int:
    """A descriptor reading ``path``: opening a named pipe never waits for a writer, nor a terminal
    becomes ours; a ``ResultFileError`` naming the file otherwise."""
    try:
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ResultFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise ResultFileError(f"{path}: cannot read ({exc.strerror})") from None


def _bounded_lines(path: Path, handle) -> Iterator[bytes]:
    try:
        while raw := handle.readline(MAX_LINE_BYTES + 1):
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise ResultFileError(f"{path}: a line longer than {MAX_LINE_BYTES:,} bytes; is it a text file?")
            yield raw
    except OSError as exc:
        raise ResultFileError(f"{path}: cannot read ({exc.strerror})") from None


def _check_regular(path: Path, info: os.stat_result) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise ResultFileError(f"{path}: is a directory, not a result file")
    if not stat.S_ISREG(info.st_mode):
        raise ResultFileError(f"{path}: is not a regular file (a device, a pipe or a socket); "
                              "results are read from files")


def _read_regular(path: Path, fd: int) -> bytes:
    """The bytes of the open file ``fd``: a regular file of at most ``MAX_FILE_BYTES``."""
    _check_regular(path, os.fstat(fd))
    chunks, total = [], 0
    while total <= MAX_FILE_BYTES:  # st_size may be 0 (/proc) or grow while we read: count what comes
        chunk = os.read(fd, min(1 << 22, MAX_FILE_BYTES + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
    raise ResultFileError(f"{path}: larger than the limit of {MAX_FILE_BYTES:,} bytes "
                          f"({MAX_FILE_BYTES // 2**20} MiB, about {MAX_FILE_SAMPLES} samples)")


def parse_json_text(path: Path, text: str) -> object:
    """The JSON value of ``text`` read from ``path``; ResultFileError otherwise.

    Refused: NaN and Infinity, a number too large for a float (``1e400``), an
    integer longer than Python converts (``sys.get_int_max_str_digits``), a key
    twice in one object, nesting too deep for the stack, and more lists, objects
    or strings than a result of the largest size holds (:func:`check_shape`,
    before parsing: a Python object costs ~50 bytes per two-byte ``[]``).
    """
    if not text or text.isspace():
        raise ResultFileError(f"{path}: the file is empty")
    check_shape(path, text)
    try:
        return json.loads(text, parse_constant=reject_constant, parse_float=finite_float,
                          object_pairs_hook=unique_keys)
    except RecursionError:
        raise ResultFileError(f"{path}: nested too deeply to be a pairbench result") from None
    except MemoryError:
        raise ResultFileError(f"{path}: not enough memory to parse its {len(text):,} characters") from None
    except json.JSONDecodeError as exc:
        ended = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated string")  # at EOF
        hint = " (truncated?)" if ended else ""
        raise ResultFileError(
            f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}"
        ) from None
    except ValueError as exc:
        if "int_max_str_digits" in str(exc):  # Python's own advice names an interpreter setting
            raise ResultFileError(f"{path}: holds an integer of more than {sys.get_int_max_str_digits()} "
                                  "digits; no value in a pairbench result is that long") from None
        raise ResultFileError(f"{path}: {exc}") from None


def check_shape(path: Path, text: str) -> None:
    """Refuse text with more lists and objects than ``MAX_CONTAINERS`` or more strings than
    ``MAX_STRINGS`` (counted from its brackets and quotes: an upper bound, O(n) at memchr speed)."""
    containers = text.count("[") + text.count("{")
    if containers > MAX_CONTAINERS:
        raise ResultFileError(f"{path}: holds {containers:,} lists and objects, more than a pairbench "
                              f"result does ({MAX_CONTAINERS:,} at most)")
    strings = text.count('"') // 2
    if strings > MAX_STRINGS:
        raise ResultFileError(f"{path}: holds {strings:,} strings, more than a pairbench result does "
                              f"({MAX_STRINGS:,} at most)")


def finite_float(text: str) -> float:
    """``json.loads``' ``parse_float``: a JSON number that a float holds (``1e400`` overflows to inf)."""
    value = float(text)
    if math.isinf(value):
        shown = text if len(text) <= 24 else text[:21] + "..."
        raise ValueError(f"the number {shown} is too large (beyond ±1.8e308, the largest float)")
    return value


def unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads``' ``object_pairs_hook``: an object with each key once (JSON parsers disagree on
    which of two values counts, so a result that holds both is refused)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {key!r} appears twice in one object")
            seen.add(key)
    return obj


def reject_constant(name: str):
    """``json.loads``' ``parse_constant``: NaN and Infinity are not JSON a result may hold."""
    raise ValueError(f"{name} is not allowed in a result file (non-finite number)")


def dumps(document: object) -> str:
    """Compact JSON with no NaN or Infinity (a ValueError if ``document`` holds one)."""
    return json.dumps(document, allow_nan=False, separators=(",", ":"))


def leftover_writes(path: str | os.PathLike) -> list[Path]:
    """Temporary files that interrupted :func:`atomic_write_text` calls for ``path`` left beside it
    (hidden: ``.NAME.XXXXXXXX.tmp``), newest first. A kill between the fsync and the rename leaves
    one that holds the complete text; anything else is cleaned up by the write itself."""
    found: dict[Path, float] = {}
    for target in {Path(path), Path(path).resolve()}:
        pattern = f".{glob.escape(target.name)}.*.tmp"
        with contextlib.suppress(OSError):
            for candidate in target.parent.glob(pattern):
                with contextlib.suppress(OSError):
                    info = candidate.lstat()
                    if stat.S_ISREG(info.st_mode):
                        found[candidate] = info.st_mtime
    return sorted(found, key=found.__getitem__, reverse=True)
