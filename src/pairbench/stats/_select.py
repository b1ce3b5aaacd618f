"""Exact order statistics of pairwise differences and Walsh averages, never materialised.

The Hodges-Lehmann shift of two samples is the median of the n*m differences
x_i - y_j; the signed-rank pseudomedian is the median of the n(n+1)/2 Walsh
averages (x_i + x_j)/2, i <= j; their confidence limits are other order
statistics of the same sets (R ``wilcox.test``; Hollander & Wolfe,
*Nonparametric Statistical Methods*, 3rd ed., sections 3.2 and 4.3). At
n = m = 1e6 there are 1e12 differences, so they are selected, not sorted.

Both sets are one structure: the cells a_i + b_j (j >= start_i) of a matrix whose
rows and columns are sorted, a and b ascending:

* two samples: a = sort(x), b = sort(-y), start_i = 0, so a_i + b_j = x_i - y_j;
* one sample:  a = b = sort(x), start_i = i, so the cells are the Walsh sums.

Algorithm: randomised band narrowing, a batched form of
Monahan's HLQEST (ACM TOMS Algorithm 616, 1984) with Floyd & Rivest's
sampled pivots (CACM 18:165, 1975). A band is a per-row index range holding every
candidate cell; each round draws cells uniformly from the band, takes two pivots
from the sorted draw around each target rank, counts the cells <= pivot in every
row with one vectorised ``searchsorted`` (rows and columns are sorted, so each
row's count is a prefix) and keeps the slice between the pivots that holds the
target. A slice of at most ``cap`` cells is materialised and partitioned. Cost:
O((n + m) log(n + m)) expected time, O(n + m + cap) memory; a few rounds at
n = m = 1e6. The answer is exact for every random draw; only the run time varies.

Floating point: cells are compared as computed, fl(a_i + b_j), which equals
fl(x_i - y_j) and R's ``outer(x, y, "-")``; ``searchsorted(b, t - a_i)`` only
approximates that prefix, so every count is fixed up against the computed cell
values (``_fix_counts``). Heavy ties (coarse timers) end a round early: when the
slice holding the target is one tied value, that value is the answer.

Why hand-written: scipy and statsmodels have no Hodges-Lehmann estimator;
pragmastat's ``shift_bounds`` is one rank narrower than R's interval.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from pairbench.errors import StatisticsError
from pairbench.stats._validation import as_sample

# Tuning (run time only, never the result), measured on 2 cores at n = m = 1e3..1e6:
# slices of at most 8(n + m) cells (within CAP_BOUNDS) are materialised; each round
# draws 60 sqrt(n + m) cells (within SAMPLE_BOUNDS) and puts its pivots 3 binomial
# standard deviations either side of each target's expected position in the draw.
_CAP_BOUNDS = (1 << 14, 1 << 20)
_SAMPLE_BOUNDS = (1 << 12, 1 << 17)
_PIVOT_SIGMAS = 3.0


@dataclass
class _Band:
    """The candidate cells: row ``rows[r]`` holds cells lo[r] <= j - start < hi[r].

    ``below`` cells lie outside the band and are <= every band cell; cells above
    it are >= every band cell. ``top`` is a value with every band cell <= top
    and at least one cell equal to it, or None when unknown.
    """

    rows: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    below: int
    top: float | None
    size: int = -1

    def __post_init__(self):
        if self.size < 0:
            self.size = int((self.hi - self.lo).sum(dtype=np.int64))


class PairSums:
    """The multiset {fl(a_i + b_j) : j >= start_i} for sorted a, b, held implicitly.

    ``select(ks)`` returns its k-th smallest elements (1-based), exactly.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray, *, walsh: bool):
        self.a = np.ascontiguousarray(a, dtype=np.float64)
        n, m = self.a.size, np.size(b)
        # b between -inf/+inf sentinels: _ext[p] = b[p - 1] and _ext[p + 1] = b[p] for any p
        self._ext = np.concatenate(([-np.inf], np.asarray(b, dtype=np.float64), [np.inf]))
        self.b = self._ext[1:-1]
        # counts fit int32 below 2^31 columns: halves the memory of bands at n = 1e6
        self.index = np.int32 if max(n, m) < 2**31 - 1 else np.int64
        self.start = np.arange(n, dtype=self.index) if walsh else None  # None: every row from 0
        self.size = n * (n + 1) // 2 if walsh else n * m

    def _start(self, rows):
        """First column of each of ``rows`` (0 for every row of a two-sample matrix)."""
        if self.start is None:
            return 0
        return self.start if rows is None else self.start[rows]

    def _row_lengths(self, rows):
        return self.b.size - self._start(rows) + np.zeros(rows.size, dtype=self.index)

    # -- counting ---------------------------------------------------------------------
    def count(self, t: float, rows: np.ndarray | None = None, *, strict: bool = False):
        """Per-row number of cells <= t (< t when ``strict``) in ``rows`` (all rows if None).

        O(r log m) for r rows: one ``searchsorted`` plus a fix-up of rounding.
        """
        if rows is not None and rows.size == self.a.size:
            rows = None  # every row: no gather
        a = (self.a if rows is None else self.a[rows])[::-1]  # rows reversed: t - a_i ascends,
        keys = np.subtract(t, a)  # and ascending keys search faster
        p = np.searchsorted(self.b, keys, side="left" if strict else "right")
        del keys
        p = _fix_counts(a, self._ext[:-1], self._ext[1:], p, t, strict)[::-1]
        p -= self._start(rows)
        return np.maximum(p, 0, out=p).astype(self.index)

    def nearest(self, t: float) -> float:
        """The cell closest to t (the lower one when both are as close). O(n log m)."""
        start = self._start(None)
        c = self.count(t).astype(np.int64)
        col = start + c  # column of row i's first cell > t; _ext[col] is the cell before it
        below = np.where(c > 0, self.a + self._ext[col], -np.inf).max()
        above = np.where(col < self.b.size, self.a + self._ext[col + 1], np.inf).min()
        return float(below if t - below <= above - t else above)

    # -- selection --------------------------------------------------------------------
    def select(self, ks, *, seed: int = 0, cap: int | None = None, sample: int | None = None):
        """The k-th smallest cells for each 1-based k in ``ks``, as a float64 array.

        ``cap`` and ``sample`` tune run time only (tests shrink them to exercise
        the narrowing rounds on small inputs).
        """
        ks = [int(k) for k in ks]
        if any(k < 1 or k > self.size for k in ks):
            raise StatisticsError(f"ranks must be in [1, {self.size}], got {ks}")
        scale = self.a.size + self.b.size
        cap = cap if cap is not None else int(np.clip(8 * scale, *_CAP_BOUNDS))
        sample = (
            sample if sample is not None else int(np.clip(60 * math.sqrt(scale), *_SAMPLE_BOUNDS))
        )
        rng = np.random.default_rng(seed)
        rows = np.arange(self.a.size, dtype=self.index)
        lengths = self._row_lengths(rows)
        band = _compress(rows, np.zeros(rows.size, self.index), lengths, 0, None)
        found: dict[int, float] = {}
        pending = [(band, sorted(set(ks)))]
        while pending:
            band, targets = pending.pop()
            if band.size <= max(cap, 1):
                found.update(self._partition(band, targets))
            else:
                pending.extend(self._narrow(band, targets, rng, sample, found))
        return np.array([found[k] for k in ks], dtype=np.float64)

    def _sample(self, band: _Band, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` cells drawn uniformly (with replacement) from the band, sorted."""
        width = band.hi - band.lo
        ends = np.cumsum(width, dtype=np.int64)
        u = np.sort(rng.integers(0, int(ends[-1]), size=size))  # sorted keys search faster
        r = np.searchsorted(ends, u, side="right")
        rows = band.rows[r]
        cols = self._start(rows) + band.lo[r] + (u - (ends[r] - width[r]))
        return np.sort(self.a[rows] + self.b[cols])

    def _pivots(self, band: _Band, targets: list[int], sample: np.ndarray) -> list[float]:
        """Pivot values bracketing each target rank with high probability (Floyd-Rivest)."""
        s, size = sample.size, band.size
        windows = []
        for k in targets:
            p = (k - band.below) / size
            h = _PIVOT_SIGMAS * math.sqrt(s * p * (1.0 - p)) + 2.0
            windows.append([math.floor(s * p - h), math.ceil(s * p + h)])
        merged = [windows[0]]
        for w in windows[1:]:  # overlapping windows share their outer pivots
            if w[0] <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], w[1])
            else:
                merged.append(w)
        picks = {i for w in merged for i in w if 0 <= i < s} or {s // 2}  # tiny draws
        return sorted({float(sample[i]) for i in picks})

    def _narrow(self, band, targets, rng, sample_size, found):
        """One round: split the band at sampled pivots; return the slices holding targets.

        Pivots are counted in ascending order and each slice is cut as soon as its
        upper pivot is known, so only two boundaries are alive at a time, and
        pivots above the last target are never counted.
        """
        pivots = self._pivots(band, targets, self._sample(band, rng, sample_size))
        lo, below = band.lo, band.below
        pending, out = list(targets), []
        for t in [*pivots, None]:
            if t is None:  # the band's own upper end
                hi, total, top = band.hi, band.below + band.size, band.top
            else:
                hi, top = self.count(t, band.rows), t
                total = band.below + int((hi - band.lo).sum())
            ks = [k for k in pending if k <= total]  # this slice holds ranks (below, total]
            if ks:
                pending = pending[len(ks) :]
                piece = _compress(band.rows, lo, hi, below, top)
                if 2 * piece.size > band.size and top is not None:
                    piece, ks = self._split_tie(piece, ks, found)
                if ks:
                    out.append((piece, ks))
            if not pending:
                break
            lo, below = hi, total
        return out

    def _split_tie(self, band: _Band, targets: list[int], found: dict) -> tuple[_Band, list]:
        """Resolve targets that fall on the band's top value; drop that value from the band.

        Needed when one tied value fills most of the band (coarse timers): sampled
        pivots then equal it and cannot split the band.
        """
        top = band.top
        c = self.count(top, band.rows, strict=True)
        below_top = band.below + int((c - band.lo).sum())
        rest = []
        for k in targets:
            if k > below_top:
                found[k] = top
            else:
                rest.append(k)
        return _compress(band.rows, band.lo, c, band.below, None), rest

    def _partition(self, band: _Band, targets: list[int]) -> dict[int, float]:
        """Materialise the band (at most ``cap`` cells) and pick the targets by partition."""
        width = band.hi - band.lo
        total = int(width.sum())
        r = np.repeat(np.arange(band.rows.size), width)
        cols = np.arange(total, dtype=np.int64)
        first = np.cumsum(width, dtype=np.int64) - width - band.lo - self._start(band.rows)
        cols -= np.repeat(first, width)
        vals = self.a[band.rows[r]]
        vals += self.b[cols]
        kth = [k - band.below - 1 for k in targets]
        vals.partition(kth)
        return {k: float(vals[i]) for k, i in zip(targets, kth, strict=True)}


def _compress(rows, lo, hi, below, top) -> _Band:
    """A band restricted to its non-empty rows."""
    keep = hi > lo
    return _Band(rows[keep], lo[keep], hi[keep], below, top)


def _fix_counts(a, b_before, b_at, p, t, strict):
    """Correct prefix counts p_i so that exactly p_i cells fl(a_i + b_j) are <= t (< t).

    ``searchsorted(b, t - a_i)`` compares b_j with the rounded t - a_i, while the
    cells are rounded sums; they disagree only next to the boundary. Rows where
    the cell before p_i is outside or the cell at p_i inside are re-searched by
    bisection on the computed cells (cells are monotone in j). ``b_before`` and
    ``b_at`` are b with a -inf/+inf sentinel in front/behind, so that
    b_before[p] = b[p - 1] and b_at[p] = b[p].
    """
    inside = np.less if strict else np.less_equal
    cell = np.take(b_before, p, mode="clip")  # one scratch array: this runs on every row
    cell += a
    wrong = ~inside(cell, t)
    np.take(b_at, p, out=cell, mode="clip")  # (mode="raise" would buffer ``out``)
    cell += a
    up = inside(cell, t)
    del cell
    wrong |= up
    rows = np.flatnonzero(wrong)
    if rows.size == 0:
        return p
    ar, pr, upr = a[rows], p[rows], up[rows]
    lo = np.where(upr, pr + 1, 0)  # the count lies in [lo, hi]
    hi = np.where(upr, b_at.size - 1, pr - 1)
    while np.any(lo < hi):
        mid = (lo + hi) // 2  # cell mid is inside  <=>  count > mid
        ins = inside(ar + b_at[mid], t)
        lo = np.where(ins, mid + 1, lo)
        hi = np.where(ins, hi, mid)
    p[rows] = lo
    return p


def pairwise_differences(x_sorted: np.ndarray, y_sorted: np.ndarray) -> PairSums:
    """The implicit set {x_i - y_j} from ascending-sorted x and y (no validation)."""
    return PairSums(x_sorted, np.negative(y_sorted[::-1]), walsh=False)


def walsh_sums(x_sorted: np.ndarray) -> PairSums:
    """The implicit set {x_i + x_j : i <= j} from ascending-sorted x; halve for averages."""
    return PairSums(x_sorted, x_sorted, walsh=True)


def _check_rank(k, total: int, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise StatisticsError(f"`{name}` must be an integer rank, got {k!r}")
    if not 1 <= int(k) <= total:
        raise StatisticsError(f"`{name}` must be in [1, {total}], got {k!r}")
    return int(k)


def kth_pairwise_difference(x, y, k: int) -> float:
    """The k-th smallest (1-based) of the n*m differences x_i - y_j, exactly.

    Equals ``np.sort(np.subtract.outer(x, y), axis=None)[k - 1]`` without building
    it: O((n + m) log(n + m)) expected time, O(n + m) memory.
    """
    xs = np.sort(as_sample(x, "x"))
    ys = np.sort(as_sample(y, "y"))
    k = _check_rank(k, xs.size * ys.size)
    return float(pairwise_differences(xs, ys).select([k])[0])


def kth_walsh_average(x, k: int) -> float:
    """The k-th smallest (1-based) of the n(n+1)/2 Walsh averages (x_i + x_j)/2, i <= j.

    Exact (each average is computed as fl(x_i + x_j)/2, like R's
    ``outer(x, x, "+")/2``); O(n log n) expected time, O(n) memory.
    """
    xs = np.sort(as_sample(x, "x"))
    k = _check_rank(k, xs.size * (xs.size + 1) // 2)
    return float(walsh_sums(xs).select([k])[0]) / 2.0
