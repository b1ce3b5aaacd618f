"""Lowland multimodality detection: how many modes a sample has, and where.

A port of perfolizer's ``LowlandModalityDetector`` (Andrey Akinshin, MIT;
``src/Perfolizer/Perfolizer/Mathematics/Multimodality/LowlandModalityDetector.cs``;
method: aakinshin.net/posts/lowland-multimodality-detection/) over its
quantile-respectful density histogram (``Histograms/
QuantileRespectfulDensityHistogramBuilder.cs``, aakinshin.net/posts/qrde-hd/)
built from Harrell-Davis quantiles (Harrell & Davis 1982, Biometrika 69:635;
``QuantileEstimators/HarrellDavisQuantileEstimator.cs``). No Python library
has it; scipy has the quantiles (``mstats.hdquantiles``) but computes every
Beta weight, which costs 0.1 s at n = 5000.

The method, with K = round(1 / precision) = 100 bins:

1. q_j = the Harrell-Davis quantile at p = j / K, j = 0..K;
2. bin j spans [q_j, q_{j+1}] and has height (1/K) / (q_{j+1} - q_j); bins of
   (nearly) zero width are dropped;
3. peaks are bins higher than the left neighbour and not lower than the right;
4. between two consecutive peaks, the water level is the lower peak; the
   lowland is the run of bins between them not above that level; if the
   bins' area there is below ``sensitivity`` (0.5) times the area of the
   water rectangle over the lowland, the sample is split there: the peaks on
   the left form one mode, located at the middle of its highest peak bin
   (the C#'s ``previousPeaks.First()``), and the cut point is the middle of
   the lowest bin between the two peaks.

Where this port departs from perfolizer, and why:

* **Ties are spread** before estimating the density. A large group of tied
  values (a coarse timer, integer nanoseconds on a fast command) makes the
  quantile bins zero-wide, so the density becomes a comb of spikes, each a
  "mode" (Akinshin, "Lowland multimodality detection and jittering", 2024:
  normal data rounded to 0.1 gives five modes). As in his deterministic
  jittering (aakinshin.net/posts/discrete-sample-jittering/), only tied
  values move, by a fixed pattern, inside the discretisation step: the k
  copies of v become v + step * ((i + 1/2) / k - 1/2), i = 0..k-1, with
  step the smallest gap between distinct values. The sorted order is kept.
* **Widths are relative.** perfolizer drops bins narrower than 1e-9 and
  refuses samples with max - min < 1e-9, absolute numbers chosen for
  nanoseconds; here both are 1e-9 times the range, and values are taken
  relative to the minimum so that a large offset (1e9 ns + jitter) loses no
  precision. All-equal data give one mode at that value instead of an error.
* **Large samples are thinned.** Above n = 5000 the density is built from
  5000 evenly spaced order statistics x_(round(i (n-1) / 4999)), a
  deterministic subsample whose empirical quantile function is the full
  sample's to within 1/5000 in probability, far finer than the 1/K = 0.01
  bins. Harrell-Davis weights are summed only where the Beta CDF lies in
  (1e-15, 1 - 1e-15), which moves no quantile by more than about 2e-15 of
  the range (checked against R's full sum). Its speed is measured in
  ``benchmarks/RESULTS.md`` ("Modality label").
"""

from __future__ import annotations

import functools

import numpy as np

from pairbench.frozen import frozen
from pairbench.stats import _special
from pairbench.stats._validation import as_sample, check_number

SENSITIVITY = 0.5  # perfolizer's default
PRECISION = 0.01  # perfolizer's default: K = 100 bins
DENSITY_MAX_N = 5000  # thin larger samples to this many order statistics
_WEIGHT_EPS = 1e-15  # Harrell-Davis weights below this are skipped
_WHOLE_GRID = 20_000  # up to this many weights in all, every one is computed (no support needed)
_WIDENINGS = 20  # of the support's search, 4 standard deviations at a time
_SMOOTH = 20.0  # from these Beta shapes on, weights are cell masses by quadrature
_ZERO_WIDTH = 1e-9  # relative to the range: perfolizer's 1e-9, made unit-free


@frozen
class LowlandModes:
    """The modes the lowland detector found in one sample.

    ``locations`` are the modes' centres (the middle of each mode's highest
    density bin), ascending; ``cut_points`` the len(locations) - 1 boundaries
    between neighbouring modes. ``density_n`` is how many values built the
    density (n, or 5000 for larger samples); ``ties_spread`` says whether
    tied values were spread over their discretisation step first.
    """

    count: int
    locations: tuple[float, ...]
    cut_points: tuple[float, ...]
    n: int
    density_n: int
    ties_spread: bool
    sensitivity: float = SENSITIVITY
    precision: float = PRECISION


def lowland_modes(
    x, sensitivity: float = SENSITIVITY, precision: float = PRECISION
) -> LowlandModes:
    """The modes of ``x`` by perfolizer's lowland detector; see the module docstring.

    ``sensitivity`` in [0, 1]: a lowland whose bins fill less than this share
    of the water rectangle splits two modes (higher finds more modes).
    ``precision`` in (0, 0.5]: the bin probability, 1 / K. O(n log n) for
    the sort, then 3-40 ms. Raises ``StatisticsError`` on empty, NaN or
    infinite input; one value or all-equal values give one mode.
    """
    sensitivity = check_number(sensitivity, "sensitivity", "a number in [0, 1]", lambda v: 0.0 <= v <= 1.0)
    precision = check_number(precision, "precision", "a number in (0, 0.5]", lambda v: 0.0 < v <= 0.5)  # 2+ bins
    arr = np.sort(as_sample(x, "x", min_n=1, what="to detect modes"))
    return _lowland_modes_sorted(arr, sensitivity, precision)


def _lowland_modes_sorted(
    values: np.ndarray, sensitivity: float = SENSITIVITY, precision: float = PRECISION
) -> LowlandModes:
    """``lowland_modes`` for an already validated, sorted float64 array (no checks)."""
    n = values.size
    origin, value_range = float(values[0]), float(values[-1] - values[0])
    if value_range == 0.0:
        return LowlandModes(1, (origin,), (), n, n, False, sensitivity, precision)
    shifted = values - origin
    spread, ties = _spread_ties(shifted)
    thinned = _thin(spread, DENSITY_MAX_N)
    lower, upper, heights = _density_histogram(thinned, round(1.0 / precision))
    modes, cuts = _lowland_split(lower, upper, heights, sensitivity)
    middle = (lower + upper) / 2.0 + origin
    return LowlandModes(
        count=len(modes),
        locations=tuple(float(middle[i]) for i in modes),
        cut_points=tuple(float(middle[i]) for i in cuts),
        n=n,
        density_n=thinned.size,
        ties_spread=ties,
        sensitivity=sensitivity,
        precision=precision,
    )


# ------------------------------------------------------------------ the density


def hd_quantiles(values: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Harrell-Davis quantiles of sorted ``values`` at ``probs`` (Harrell & Davis 1982).

    Q_p = sum_i W_i x_(i), W_i = I_{i/n}(a, b) - I_{(i-1)/n}(a, b), with
    a = p (n + 1), b = (1 - p)(n + 1) and I the regularized incomplete beta
    function; Q_0 = min and Q_1 = max. Only the order statistics where the
    Beta(a, b) CDF moves by more than 1e-15 are summed: O(sqrt(n)) per
    quantile instead of O(n) (all of them while n times the quantiles is
    small). The weights depend on n and ``probs`` alone, so samples of one size
    (a compare's sides) share them (``_weight_table``). Agrees with
    ``scipy.stats.mstats.hdquantiles``.
    """
    n = values.size
    probs = np.asarray(probs, dtype=np.float64)
    out = np.where(probs < 1.0, values[0], values[-1])  # p = 0 -> min, p = 1 -> max
    if n > 1:
        for j, lo, hi, w, total in _weight_table(n, tuple(probs.tolist())):
            out[j] = float(np.dot(w, values[lo:hi])) / total
    return out


@functools.lru_cache(maxsize=8)
def _weight_table(n: int, probs: tuple[float, ...]) -> tuple[tuple[int, int, int, np.ndarray, float], ...]:
    """The Harrell-Davis weights of n order statistics at each p of ``probs`` in (0, 1): (its index in
    ``probs``, the span lo:hi of order statistics it weighs, their weights (read-only), the weights'
    sum). Pure; cached because a run's series mostly have the same n."""
    p = np.array(probs, dtype=np.float64)
    inner = np.flatnonzero((p > 0.0) & (p < 1.0))
    if not inner.size:
        return ()
    a, b = p * (n + 1), (1.0 - p) * (n + 1)
    if n * inner.size <= _WHOLE_GRID:  # every weight: cheaper than finding where they are negligible
        spans = [(0, n)] * inner.size
    else:
        low, high = _beta_support(a[inner], b[inner])
        spans = [(max(int(lo), 0), min(int(hi), n))
                 for lo, hi in zip(np.floor(low * n), np.ceil(high * n), strict=True)]
    weights = _hd_weights(a[inner], b[inner], spans, n)
    for w in weights:
        w.flags.writeable = False
    return tuple((int(j), lo, hi, w, float(w.sum())) for j, (lo, hi), w in zip(inner, spans, weights, strict=True))


def _hd_weights(a: np.ndarray, b: np.ndarray, spans: list[tuple[int, int]], n: int) -> list[np.ndarray]:
    """Each quantile's weights I_{i/n}(a, b) - I_{(i-1)/n}(a, b) over its span, all in two calls:
    differences of the incomplete beta function, or, for a, b >= ``_SMOOTH`` and cells narrower than
    a fifth of the distribution's SD, each cell's mass by Gauss-Legendre (``_special.beta_masses``:
    the same weights to 1e-13, a tenth of the cost)."""
    smooth = (a >= _SMOOTH) & (b >= _SMOOTH) & (np.sqrt(a * b / (a + b)) >= 5.0)
    sizes = np.array([hi - lo for lo, hi in spans])
    grid = np.arange(n + 1) / n  # the edges i / n, each the same float in every span
    weights: list[np.ndarray] = [np.empty(0)] * len(spans)
    picked = np.flatnonzero(smooth)
    if picked.size:
        cells = np.concatenate([np.arange(*spans[i]) for i in picked])
        masses = _special.beta_cell_masses(a[picked], b[picked], grid[:-1], grid[1:],
                                           np.repeat(np.arange(picked.size), sizes[picked]), cells)
        for i, part in zip(picked, np.split(masses, np.cumsum(sizes[picked])[:-1]), strict=True):
            weights[i] = part
    picked = np.flatnonzero(~smooth)
    if picked.size:
        ends = np.cumsum(sizes[picked] + 1)  # where each span's points end in the concatenation
        cdf = _special.betainc(np.repeat(a[picked], sizes[picked] + 1), np.repeat(b[picked], sizes[picked] + 1),
                               np.concatenate([grid[spans[i][0]:spans[i][1] + 1] for i in picked]))
        cdf[(ends - sizes[picked] - 1)[[spans[i][0] == 0 for i in picked]]] = 0.0
        cdf[(ends - 1)[[spans[i][1] == n for i in picked]]] = 1.0
        steps = cdf[1:] - cdf[:-1]
        for i, end in zip(picked, ends, strict=True):
            weights[i] = steps[end - sizes[i] - 1:end - 1].copy()
    return weights


def _beta_support(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points low <= high with I_low(a, b) <= 1e-15 and 1 - I_high(a, b) <= 1e-15 (``_WEIGHT_EPS``):
    10 standard deviations either side of the Beta(a, b) mean, each side widened by 4 more until its
    tail is that small. A superset of the exact support (the inverse of the CDF at 1e-15, which
    costs ten times as much here), so no weight above 1e-15 is left out."""
    mean = a / (a + b)
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    k_low, k_high = np.full(a.shape, 10.0), np.full(a.shape, 10.0)
    for _ in range(_WIDENINGS):
        low, high = np.clip(mean - k_low * sd, 0.0, 1.0), np.clip(mean + k_high * sd, 0.0, 1.0)
        too_low = _special.betainc(a, b, low) > _WEIGHT_EPS
        too_high = _special.betainc(b, a, 1.0 - high) > _WEIGHT_EPS  # 1 - I_high(a, b), to its last digits
        if not (too_low.any() or too_high.any()):
            return low, high
        k_low, k_high = k_low + 4.0 * too_low, k_high + 4.0 * too_high
    return np.zeros_like(a), np.ones_like(a)  # every weight: never reached for a, b > 0 (90 SDs)


def _density_histogram(values: np.ndarray, bins: int):
    """perfolizer's quantile-respectful density histogram: (lower, upper, height) per bin."""
    q = hd_quantiles(values, np.arange(bins + 1) / bins)
    width = np.diff(q)
    keep = width > _ZERO_WIDTH * float(values[-1] - values[0])
    return q[:-1][keep], q[1:][keep], (1.0 / bins) / width[keep]


def _spread_ties(values: np.ndarray) -> tuple[np.ndarray, bool]:
    """Sorted ``values`` with each group of k tied values spread over its step.

    The copies of v become v + step * ((i + 1/2) / k - 1/2), i = 0..k-1, step
    = the smallest gap between distinct values; untied values stay. Returns
    (values, whether any tie was spread).
    """
    new_value = np.flatnonzero(np.diff(values)) + 1  # where a run of equal values starts
    if new_value.size == values.size - 1:
        return values, False
    starts = np.concatenate(([0], new_value))
    counts = np.diff(np.concatenate((starts, [values.size])))
    gaps = values[new_value] - values[new_value - 1]
    step = float(gaps.min()) if gaps.size else 1.0
    rank = np.arange(values.size) - np.repeat(starts, counts)
    k = np.repeat(counts, counts)
    return values + step * ((rank + 0.5) / k - 0.5), True


def _thin(values: np.ndarray, m: int) -> np.ndarray:
    """m evenly spaced order statistics of sorted ``values`` (all of them if n <= m)."""
    if values.size <= m:
        return values
    return values[np.rint(np.linspace(0.0, values.size - 1, m)).astype(np.intp)]


# ------------------------------------------------------------------ the lowlands


def _lowland_split(lower, upper, heights, sensitivity) -> tuple[list[int], list[int]]:
    """Mode bins and cut bins: the C# ``DetectModes`` after the histogram is built.

    Returns (indices of the bins locating each mode, indices of the bins
    locating each cut point).
    """
    h = heights
    peaks = [i for i in range(1, h.size - 1) if h[i] > h[i - 1] and h[i] >= h[i + 1]]
    if len(peaks) < 2:
        return [peaks[0] if peaks else int(np.argmax(h))], []
    bin_area = 1.0 / h.size
    modes: list[int] = []
    cuts: list[int] = []

    def try_split(first: int, left_peak: int, right_peak: int) -> bool:
        left, right = left_peak, right_peak
        level = min(h[left_peak], h[right_peak])
        while left < right and h[left] > level:
            left += 1
        while left < right and h[right] > level:
            right -= 1
        filled = (right - left + 1) * bin_area / ((upper[right] - lower[left]) * level)
        if filled >= sensitivity:
            return False
        modes.append(first)
        cuts.append(left_peak + int(np.argmin(h[left_peak:right_peak])))
        return True

    previous = [peaks[0]]
    for peak in peaks[1:]:
        while previous and h[previous[-1]] < h[peak]:
            if try_split(previous[0], previous[-1], peak):
                previous.clear()
            else:
                previous.pop()
        if previous and h[previous[-1]] > h[peak] and try_split(previous[0], previous[-1], peak):
            previous.clear()
        previous.append(peak)
    modes.append(previous[0])
    return modes, cuts
