"""Reading /proc and /sys below a root: every reader gives None (or []) instead of raising."""

from __future__ import annotations

import math
import os
from pathlib import Path

READ_CHUNK = 65_536  # bytes read at a time; a /proc or /sys file is read whole, as the kernel gives it
MAX_CPUS = 65_536  # a CPU list wider than this is malformed (Linux supports up to 8192)


def read_text(root: Path, relative: str) -> str | None:
    """The stripped content of ``root/relative`` (UTF-8, newlines read as ``Path.read_text`` reads
    them), or None when it cannot be read. Through ``os.read``, not a text file object: a compare
    reads some 250 files of /proc before its first sample, each a third as costly this way."""
    try:
        fd = os.open(os.path.join(root, relative.lstrip("/")), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    chunks = []
    try:
        while chunk := os.read(fd, READ_CHUNK):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = b"".join(chunks).decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def read_int(root: Path, relative: str) -> int | None:
    """The integer in ``root/relative``, or None when it cannot be read or parsed."""
    return int_or_none(read_text(root, relative))


def path_exists(path: Path) -> bool:
    """Whether ``path`` exists; False when it cannot be told (an untraversable directory on the way)."""
    try:
        return path.exists()
    except OSError:
        return False


def glob_sorted(directory: Path, pattern: str) -> list[Path]:
    """The paths below ``directory`` matching ``pattern``, sorted; [] when it cannot be listed."""
    try:
        return sorted(directory.glob(pattern))
    except OSError:
        return []


def finite_float(text: str) -> float | None:
    """``text`` as a finite float, or None ("1.2.3", "nan" and "inf" are not readings)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_cpu_list(text: str | None) -> list[int] | None:
    """The CPUs of a kernel CPU list ("0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11]); [] for ""."""
    if text is None or text.strip() in ("(null)",):
        return [] if text is not None else None
    cpus: list[int] = []
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            low, _, high = part.partition("-")
            first, last = int(low), int(high or low)
            if last - first > MAX_CPUS:
                return None
            cpus.extend(range(first, last + 1))
    except ValueError:
        return None
    return sorted(set(cpus))


def key_values(text: str | None, sep: str = ":") -> dict[str, str]:
    """``key: value`` lines as a dict (first occurrence wins)."""
    result: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, found, value = line.partition(sep)
        if found and key.strip() not in result:
            result[key.strip()] = value.strip()
    return result


def int_or_none(text: str | None) -> int | None:
    """``text`` as an integer; None when it is None or not an integer."""
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
