"""Input checks shared by every public statistic: validate once, at the boundary.

Each checker names the parameter and the value or size it received, so a caller
sees ``x must hold at least 6 values for a 95% median interval, got 4``.
"""

from __future__ import annotations

import math

import numpy as np

from pairbench.errors import NotEnoughData, NoVariance, StatisticsError


def as_sample(x, name: str = "x", *, min_n: int = 1, what: str = "") -> np.ndarray:
    """Return ``x`` as a 1-D float64 array of finite values, or raise.

    ``min_n`` is the smallest size the caller can use; ``what`` completes the
    message ("... for a confidence interval").
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StatisticsError(f"{name} must be a sequence of numbers ({exc})") from None
    if arr.ndim != 1:
        raise StatisticsError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise StatisticsError(f"{name} holds {bad} NaN or infinite value(s); remove them first")
    if arr.size < min_n:
        suffix = f" {what}" if what else ""
        noun = "value" if min_n == 1 else "values"
        raise NotEnoughData(f"{name} must hold at least {min_n} {noun}{suffix}, got {arr.size}",
                            needed=min_n, got=int(arr.size), purpose=what.removeprefix("for ").strip())
    return arr


def as_pairs(x, y, names: tuple[str, str] = ("x", "y"), *, min_n: int = 1, what: str = ""):
    """Return two equal-length finite float64 arrays (paired data), or raise."""
    a = as_sample(x, names[0], min_n=min_n, what=what)
    b = as_sample(y, names[1], min_n=min_n, what=what)
    if a.size != b.size:
        raise StatisticsError(
            f"paired data need equal lengths, got {names[0]}: {a.size} and {names[1]}: {b.size}"
        )
    return a, b


def check_number(value, name: str, must: str, valid=math.isfinite) -> float:
    """``value`` as a float for which ``valid`` holds (NaN never does), or a ``StatisticsError``
    "`NAME` must be MUST, got VALUE"."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not valid(number):
        raise StatisticsError(f"`{name}` must be {must}, got {value!r}")
    return number


def check_count(value, name: str, must: str = "a positive integer", minimum: int = 1) -> int:
    """``value`` as an int of at least ``minimum`` (a bool is no count), or a ``StatisticsError``
    "`NAME` must be MUST, got VALUE"."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise StatisticsError(f"`{name}` must be {must}, got {value!r}")
    return int(value)


def check_confidence(confidence: float, name: str = "confidence") -> float:
    """Return ``confidence`` as a float in (0, 1), or raise."""
    try:
        value = float(confidence)
    except (TypeError, ValueError):
        raise StatisticsError(f"`{name}` must be a number in (0, 1), got {confidence!r}") from None
    if not 0.0 < value < 1.0:
        raise StatisticsError(f"`{name}` must be in (0, 1), got {confidence!r}")
    return value


def level_text(confidence: float) -> str:
    """A confidence level for messages: 0.95 -> "95%", 1 - 0.01/3 -> "99.6667%" (never rounded to 100%)."""
    return f"{confidence * 100:.6g}%"


def require_variance(arr: np.ndarray, name: str = "x") -> None:
    """Raise ``NoVariance`` when every value of ``arr`` is identical."""
    if arr.size and np.all(arr == arr[0]):
        raise NoVariance(
            f"no variance: all {arr.size} values of {name} are identical "
            f"({float(arr[0])!r}); is the timer resolution too coarse?",
            n=int(arr.size), value=float(arr[0]),
        )
