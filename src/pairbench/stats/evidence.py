"""The Bayes evidence of one step in a stretch of a series, against a level and against a line,
under AR(1) noise whose autocorrelation is not known.

PELT (``changepoint``) charges a step its penalty on a scale set by a noise model estimated
about the segmentation it found; when that segmentation misses a step, the noise about it reads
as strongly autocorrelated, on whose long-run scale the step looks small, and the miss stands
(``benchmarks/RESULTS.md``, issue 27). :func:`step_evidence` asks the question again of one
stretch without that estimate: the marginal likelihood of the stretch under three models,

* a **level**: y_t = mu + e_t;
* a **line**: y_t = mu + beta (t - (m - 1) / 2) / m + e_t (beta is the rise over the stretch);
* **one step** at a place q: y_t = mu_1 before q, mu_2 from q on, plus e_t; q uniform on
  ``min_size`` .. m - ``min_size``;

and, to tell a step that lasts from one wild value (a heavy-tailed innovation at q, which an AR(1)
model of high phi turns into a step's jump and its quick decay), the same level and step each with
the **innovation at q left free** (a one-off shock there: the whitened row q dropped), q uniform as
above; their Bayes factor (:func:`lasting_evidence`) rests only on the shift after q;

with e an AR(1) process of unknown SD (prior 1 / sd) and lag-1 autocorrelation phi (prior
uniform on the grid ``PHIS``, 0 to 0.95), and flat priors on the levels, the rise and the step.
For a given phi the levels and the SD integrate in closed form: with W the Prais-Winsten
whitening (w_0 = sqrt(1 - phi^2) y_0, w_t = y_t - phi y_(t-1)), X the k columns of the model,

    p(y | phi) = sqrt(1 - phi^2) |X'W'WX|^(-1/2) rss^(-(m - k)/2) Gamma((m - k)/2) pi^(-(m - k)/2) / 2,

rss the whitened least-squares residual sum of squares (the flat priors' constant is the same
for models of the same k; thresholds on the evidence are set by simulation anyway). A flat prior
on a level is not unit-free: y times c moves the evidence of one step against a level by ln c
(against a line, both of k = 2, not at all), so a caller passes y in units of its noise. phi and the
place are then summed over their priors. For the step model the whitened columns are piecewise
constant, so every place's fit comes from cumulative sums: O(m) per phi, not O(m^2).

:func:`ramp_evidence` asks of a stretch that holds one change whether it came at once or over
many commits: the marginal likelihood of a **ramp**, a level, then a line that rises from it over
``width`` commits (``min_width`` and up), then the level it reached,

    y_t = mu + delta r_t,  r_t = clip((t - a) / width, 0, 1),

against one step (the ramp of width 1), the start a and the width uniform, under the same AR(1)
noise on a coarser grid of phi (``RAMP_PHIS``: the two models differ in the mean's shape over
many commits, where the noise's fine autocorrelation matters little, and each ramp's columns are
whitened apart, O(m) per ramp). Both have k = 2 columns, so the flat priors' constants cancel and
the Bayes factor does not depend on the unit of y. A drift inside a history, between two flat
stretches, is otherwise cut as one step: the step's misfit of a ramp costs less than the two
breaks and the slope of a level, a line and a level.

:func:`credible_places` turns the step's posterior into the shortest run of places that holds a
given share of it: where the step is, with its uncertainty.

Written here because no library computes marginal likelihoods of regression models with AR(1)
errors over a grid of change points (statsmodels' GLSAR estimates phi, it does not integrate it).
Pure: arrays in, numbers out.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from pairbench.frozen import frozen
from pairbench.stats._validation import as_sample, check_confidence, check_count, require_variance
from pairbench.stats.changepoint import relative_likelihood, whitened

PHIS = np.round(np.arange(0.0, 0.951, 0.025), 3)  # the prior's grid of phi (changepoint.PHI_MAX)
RAMP_PHIS = np.array([0.0, 0.2, 0.4, 0.6, 0.75, 0.9])  # ramp_evidence's coarser grid


@frozen
class StepEvidence:
    """Log marginal likelihoods of a stretch under a level, a line and one step (module
    docstring), and the step's log posterior over its ``places`` (up to a constant)."""

    level: float
    line: float
    step: float
    places: np.ndarray
    posterior: np.ndarray

    @property
    def against_level(self) -> float:
        """The log Bayes factor of one step against a level."""
        return self.step - self.level

    @property
    def against_line(self) -> float:
        """The log Bayes factor of one step against a line (a drift)."""
        return self.step - self.line


@frozen
class LastingEvidence:
    """The log marginal likelihoods of a level and of one step, each with the innovation at the
    (uniform) place q left free (module docstring)."""

    level: float
    step: float

    @property
    def against_level(self) -> float:
        """The log Bayes factor of one step against a level when the innovation at the step's own
        place is free in both: the evidence that the shift outlasts its jump."""
        return self.step - self.level


def step_evidence(y, min_size: int = 3) -> StepEvidence:
    """The evidence of one step in ``y`` (module docstring); each side of the step at least
    ``min_size`` long. ``y`` must hold 2 ``min_size`` + 1 finite values, not all equal."""
    y, places = _stretch(y, min_size)
    m = y.size
    rise = (np.arange(m) - (m - 1) / 2.0) / m
    level, line = np.empty(PHIS.size), np.empty(PHIS.size)
    step = np.empty((PHIS.size, places.size))
    for i, phi in enumerate(PHIS.tolist()):
        w, one = whitened(y, phi), whitened(np.ones(m), phi)
        level[i] = _log_marginal(w, one[None, :], phi)
        line[i] = _log_marginal(w, np.stack([one, whitened(rise, phi)]), phi)
        step[i] = _log_marginal_of_steps(w, places, phi)
    prior = math.log(PHIS.size)
    posterior = logsumexp(step, axis=0) - prior
    return StepEvidence(float(logsumexp(level) - prior), float(logsumexp(line) - prior),
                        float(logsumexp(posterior) - math.log(places.size)), places, posterior)


def lasting_evidence(y, min_size: int = 3) -> LastingEvidence:
    """The evidence of one step in ``y`` that outlasts its jump (module docstring), over the same
    places and phi as :func:`step_evidence`; a separate call, since it is asked only of a stretch
    whose evidence against a level and a line already holds a step."""
    y, places = _stretch(y, min_size)
    level, step = (np.empty((PHIS.size, places.size)) for _ in range(2))
    for i, phi in enumerate(PHIS.tolist()):
        level[i], step[i] = _log_marginals_shocked(whitened(y, phi), places, phi)
    each = math.log(PHIS.size) + math.log(places.size)
    return LastingEvidence(float(logsumexp(level) - each), float(logsumexp(step) - each))


def _stretch(y, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """``y`` validated and less its median, and the places a step may lie at."""
    min_size = check_count(min_size, "min_size")
    y = as_sample(y, "y", min_n=2 * min_size + 1, what="for the evidence of a step")
    require_variance(y, "y")
    return y - np.median(y), np.arange(min_size, y.size - min_size + 1)


def _log_marginal(w: np.ndarray, x: np.ndarray, phi: float) -> float:
    """log p(y | phi) for the whitened values ``w`` and the whitened columns ``x`` (k by m)."""
    gram = x @ x.T
    projected = x @ w
    rss = max(float(w @ w - projected @ np.linalg.solve(gram, projected)), 0.0)
    return _closed_form(w.size, x.shape[0], phi, float(np.linalg.slogdet(gram)[1]), rss)


def _log_marginal_of_steps(w: np.ndarray, places: np.ndarray, phi: float) -> np.ndarray:
    """log p(y | phi, q) of one step at each of ``places``. Whitened, the column of the values
    from q on is 0 before q, 1 at q and 1 - phi after; the column of those before q is
    sqrt(1 - phi^2) at 0, 1 - phi up to q - 1, -phi at q and 0 after; they meet only at q."""
    m, c, r = w.size, 1.0 - phi, math.sqrt(1.0 - phi * phi)
    total = np.concatenate(([0.0], np.cumsum(w)))  # total[k] = sum of w[:k]
    after_after = 1.0 + (m - 1 - places) * c * c
    before_before = r * r + (places - 1) * c * c + phi * phi
    after_w = w[places] + c * (total[m] - total[places + 1])
    before_w = r * w[0] + c * (total[places] - total[1]) - phi * w[places]
    det = after_after * before_before - phi * phi
    explained = (before_before * after_w ** 2 + 2.0 * phi * after_w * before_w
                 + after_after * before_w ** 2) / det
    rss = np.maximum(float(w @ w) - explained, 0.0)
    return _closed_form(m, 2, phi, np.log(det), rss)


def _log_marginals_shocked(w: np.ndarray, places: np.ndarray, phi: float) -> tuple[np.ndarray, np.ndarray]:
    """log p(y | phi, q) of a level and of one step at q, each with the whitened row q dropped (a
    free innovation at q), at each of ``places``. Without row q the level's column is
    sqrt(1 - phi^2), then 1 - phi; the step's two columns no longer meet: the values before q
    are sqrt(1 - phi^2) at 0 and 1 - phi up to q - 1, those after q are 1 - phi."""
    m, c, r = w.size, 1.0 - phi, math.sqrt(1.0 - phi * phi)
    total = np.concatenate(([0.0], np.cumsum(w)))
    kept = float(w @ w) - w[places] ** 2
    level_level = r * r + (m - 2) * c * c  # places >= 1: the column's 1 - phi at q is dropped
    level_w = r * w[0] + c * (total[m] - total[1] - w[places])
    before_before = r * r + (places - 1) * c * c
    before_w = r * w[0] + c * (total[places] - total[1])
    after_after = (m - 1 - places) * c * c
    after_w = c * (total[m] - total[places + 1])
    level = _closed_form(m - 1, 1, phi, np.log(level_level), np.maximum(kept - level_w ** 2 / level_level, 0.0))
    rss = np.maximum(kept - before_w ** 2 / before_before - after_w ** 2 / after_after, 0.0)
    return level, _closed_form(m - 1, 2, phi, np.log(before_before * after_after), rss)


def _closed_form(m: int, k: int, phi: float, log_det, rss):
    """The module docstring's p(y | phi), in logs; an exact fit (rss 0) is infinitely likely."""
    with np.errstate(divide="ignore"):
        log_rss = np.log(rss)
    return (0.5 * math.log(1.0 - phi * phi) - 0.5 * log_det - 0.5 * (m - k) * log_rss
            + gammaln((m - k) / 2.0) - 0.5 * (m - k) * math.log(math.pi) - math.log(2.0))


@frozen
class RampEvidence:
    """The log marginal likelihoods of a stretch under one ramp and one step (module docstring), and
    the likeliest ramp: its first commit off the old level (``start``) and its first at the new one
    (``end``), indices into the stretch."""

    ramp: float
    step: float
    start: int
    end: int

    @property
    def against_step(self) -> float:
        """The log Bayes factor of a ramp against one step."""
        return self.ramp - self.step


def ramp_evidence(y, min_size: int = 3, min_width: int = 10, max_width: int | None = None) -> RampEvidence | None:
    """The evidence of one ramp of ``min_width`` to ``max_width`` commits against one step in ``y``
    (module docstring), each flat end at least ``min_size`` long; None when no such ramp fits.
    O(R m) per phi for R ramps: keep ``y`` and ``max_width`` to the neighbourhood asked about."""
    y, places = _stretch(y, min_size)
    m = y.size
    top = m - 2 * min_size + 1 if max_width is None else min(max_width, m - 2 * min_size + 1)
    widths = np.arange(max(min_width, 2), top + 1)
    if widths.size == 0:
        return None
    starts = [np.arange(min_size - 1, m - min_size - w + 1) for w in widths]
    a = np.concatenate(starts).astype(np.float64)
    w = np.repeat(widths, [s.size for s in starts]).astype(np.float64)
    ramp, step = np.empty((RAMP_PHIS.size, a.size)), np.empty((RAMP_PHIS.size, places.size))
    for i, phi in enumerate(RAMP_PHIS.tolist()):
        v, one = whitened(y, phi), whitened(np.ones(m), phi)
        rr, orr, rv = _whitened_ramps(v, a, w, phi)
        oo, ov = float(one @ one), float(one @ v)
        det = oo * rr - orr ** 2
        explained = (rr * ov ** 2 - 2.0 * orr * ov * rv + oo * rv ** 2) / det
        ramp[i] = _closed_form(m, 2, phi, np.log(det), np.maximum(float(v @ v) - explained, 0.0))
        step[i] = _log_marginal_of_steps(v, places, phi)
    best = int(np.argmax(logsumexp(ramp, axis=0)))
    each = math.log(RAMP_PHIS.size)
    return RampEvidence(float(logsumexp(ramp) - each - math.log(a.size)),
                        float(logsumexp(step) - each - math.log(places.size)),
                        int(a[best]) + 1, int(a[best] + w[best]))


def _whitened_ramps(v: np.ndarray, a: np.ndarray, w: np.ndarray, phi: float):
    """For each ramp (start ``a``, width ``w``), its whitened column r' against itself, against the
    whitened constant and against the whitened values ``v``, from cumulative sums: O(1) a ramp.
    r_t = clip((t - a) / w, 0, 1) is 0 up to a (so r'_0 = 0); whitened, r'_t = ((1 - phi) j + phi) / w
    at t = a + j, j = 1 .. w, then 1 - phi; the constant's column is 1 - phi from t = 1 on."""
    m, c = v.size, 1.0 - phi
    t = np.arange(m, dtype=np.float64)
    s0, s1 = (np.concatenate(([0.0], np.cumsum(x))) for x in (v, t * v))  # s[k] = sum of x[:k]
    lo, hi = (a + 1).astype(np.int64), (a + w + 1).astype(np.int64)  # the ramp's rows: lo .. hi - 1
    tail = m - hi
    sum_j = w * (w + 1) / 2.0
    rr = (c * c * w * (w + 1) * (2 * w + 1) / 6.0 + 2.0 * phi * c * sum_j + w * phi * phi) / (w * w) + c * c * tail
    orr = c * ((c * sum_j + phi * w) / w + c * tail)
    j_v = (s1[hi] - s1[lo]) - a * (s0[hi] - s0[lo])  # sum over the ramp of (t - a) v_t
    rv = (c * j_v + phi * (s0[hi] - s0[lo])) / w + c * (s0[m] - s0[hi])
    return rr, orr, rv


def credible_places(log_posterior, level: float = 0.95) -> tuple[int, int]:
    """The shortest run of consecutive places ``i .. j`` (indices into ``log_posterior``, a log
    posterior up to a constant) whose posterior mass is at least ``level``; of runs equally short,
    the one of most mass. Each start's shortest run comes from the cumulative mass by a binary
    search: O(m log m)."""
    level = check_confidence(level, "level")
    mass = relative_likelihood(log_posterior)
    total = np.concatenate(([0.0], np.cumsum(mass / mass.sum())))
    ends = np.searchsorted(total, total[:-1] + level * (1.0 - 1e-12), side="left")  # run i .. end - 1
    starts = np.flatnonzero(ends <= mass.size)
    widths = ends[starts] - starts
    held = total[ends[starts]] - total[starts]
    best = starts[np.lexsort((-held, widths))[0]]
    return int(best), int(ends[best] - 1)

