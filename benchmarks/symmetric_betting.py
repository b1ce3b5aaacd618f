"""A candidate studied for issue 15 and not adopted: a confidence sequence for the centre of
symmetric paired log-ratios, by betting on their signs weighted by their clipped sizes.

Why it was studied: the signs of the pair differences alone waste what their
sizes say. For normal noise the sign test needs pi/2 = 1.57 times the rounds of
a t test; a bet that weighs each sign by the size of its difference needs
about as few as a t test, and clipping the size keeps one wild round from
deciding anything. Why it was not adopted (``sequential_power.py``, RESULTS.md):
on heavy-tailed noise it needed more rounds than the sign-based sequence, and
when the candidate's noise has another shape than the baseline's it covers no
median: it called a candidate with the baseline's median "slower" in a third
of runs.

Construction (testing by betting: Shafer & Vovk 2019, *Game-Theoretic
Foundations for Probability and Finance*; Waudby-Smith & Ramdas 2024,
"Estimating means of bounded random variables by betting", JRSS B 86(1):1-27;
Ramdas, Ruf, Larsson & Koolen 2022, "Admissible anytime-valid sequential
inference must rely on nonnegative martingales", on betting on symmetry):

1. Hypothesis H(delta): given everything before round i, D_i - delta is
   symmetric about 0. Under no change this holds *exactly* for pairs run in a
   fresh random order: the sign of ln(B/A) is then the order's coin flip,
   whatever the machine did (drift, load phases, heavy tails). Under a change
   that scales every run by the same factor it holds at delta = the change.
2. Round i's bet: s_i(delta) = clip((D_i - delta) / c_i, -1, 1), with the
   scale c_i = ``CLIP`` x 1.4826 x MAD(D_1 .. D_{i-1}) fixed before round i
   (re-estimated at rounds ``WARMUP``, 8, 16, 32, ... and every ``REFIT``
   rounds; s_i = sign when c_i = 0; no bet during the first ``WARMUP``
   rounds). s is odd in D_i - delta, so under H(delta) E[s_i | past] = 0.
3. Wealth: K+_t(delta) = (1/L) sum_l prod_{i<=t} (1 + lambda_l s_i(delta)), a
   mixture over the fixed bet sizes ``LAMBDAS`` (0 < lambda < 1), is a
   nonnegative martingale under H(delta) with K+_0 = 1; under a centre below
   delta, s_i has mean <= 0 (clip is nondecreasing, the noise symmetric), so it
   is a supermartingale. K-_t bets the other way (s -> -s).
4. Ville's inequality: P(exists t: K+_t(delta) >= 2/alpha) <= alpha/2, and the
   same for K-. The sequence at t is every delta that neither wealth has
   reached 2/alpha at by t: the running intersection, built in.
5. Each factor 1 + lambda s_i(delta) is nonincreasing in delta (c_i and lambda
   do not depend on delta), so K+_t(delta) and its running maximum are too:
   the excluded deltas below the centre form a half-line, so deciding at 0 and
   at +-threshold is enough for a verdict.

What it covers: the centre of symmetry of D under the shift model. When the
candidate's noise has another shape than the baseline's (D skewed), there is
no centre of symmetry; the interval then sits between D's median and its mean
(``benchmarks/sequential_power.py`` measures how it behaves). The sign-based
sequence covers the median of D under any shape.

Cost: O(n L) per delta and look, vectorised. Study code: numpy only.
"""

from __future__ import annotations

import math

import numpy as np

from pairbench.stats._validation import check_confidence

WARMUP = 3  # rounds before the first bet (the scale needs them)
REFIT = 64  # after round 64 the scale is re-estimated every REFIT rounds
CLIP = 2.0  # the bet's size saturates at CLIP robust SDs of D
LAMBDAS = tuple(0.9 * 0.5**k for k in range(7))  # bet sizes mixed: 0.9 .. 0.014
CHUNK = 128  # runs per block in SymmetricBetting.excluded
_LOG_SLACK = 1e-9  # "wealth >= 2/alpha" made slightly harder: rounding only widens


def refit_rounds(horizon: int) -> np.ndarray:
    """The rounds i (1-based) before which the scale is re-estimated from rounds 1 .. i - 1."""
    early = [WARMUP + 1] + [2**k + 1 for k in range(3, 7) if 2**k + 1 > WARMUP + 1]
    late = list(range(REFIT * 2 + 1, horizon + 1, REFIT))
    return np.array(sorted({r for r in early + late if r <= horizon}), dtype=np.int64)


def scales(d: np.ndarray) -> np.ndarray:
    """c_i for each round of each row of ``d`` (reps x n): the clipped bet's scale before round i,
    NaN before the first bet. Predictable: c_i uses rounds 1 .. i - 1 only."""
    d = np.atleast_2d(d)
    reps, n = d.shape
    c = np.full((reps, n), np.nan)
    refits = refit_rounds(n)
    for k, start in enumerate(refits):
        past = d[:, : start - 1]
        mad = np.median(np.abs(past - np.median(past, axis=1, keepdims=True)), axis=1)
        end = refits[k + 1] - 1 if k + 1 < refits.size else n
        c[:, start - 1 : end] = (CLIP * 1.4826 * mad)[:, None]
    return c


def _bets(d: np.ndarray, c: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """s_i(delta): reps x n x points, 0 where no bet is made."""
    x = d[:, :, None] - delta[None, None, :]
    scale = c[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(scale > 0, np.clip(x / scale, -1.0, 1.0), np.sign(x))
    return np.where(np.isnan(scale), 0.0, s)


def _log_wealth(s: np.ndarray) -> np.ndarray:
    """ln K_t for bets ``s`` (reps x n x points) at every t: the log of the mixture over LAMBDAS."""
    total = None
    for lam in LAMBDAS:
        log_k = np.cumsum(np.log1p(lam * s), axis=1)
        total = log_k if total is None else np.logaddexp(total, log_k)
    return total - math.log(len(LAMBDAS))


class SymmetricBetting:
    """The betting sequence's decisions at given deltas, for many runs at once."""

    def __init__(self, alpha: float = 0.01):
        self.alpha = check_confidence(alpha, "alpha")
        self.log_threshold = math.log(2.0 / self.alpha) + _LOG_SLACK

    def excluded(self, d: np.ndarray, points) -> tuple[np.ndarray, np.ndarray]:
        """For runs ``d`` (reps x n, rounds in order) and ``points`` (deltas): whether the sequence
        lies above each delta at each round (it was excluded by K+ by then), and below it (K-)."""
        d = np.atleast_2d(np.asarray(d, dtype=np.float64))
        delta = np.asarray(points, dtype=np.float64)
        above = np.zeros((*d.shape, delta.size), dtype=bool)
        below = np.zeros_like(above)
        for start in range(0, d.shape[0], CHUNK):  # bounded memory: CHUNK runs at a time
            part = d[start : start + CHUNK]
            s = _bets(part, scales(part), delta)
            above[start : start + CHUNK] = np.maximum.accumulate(_log_wealth(s) >= self.log_threshold, axis=1)
            below[start : start + CHUNK] = np.maximum.accumulate(_log_wealth(-s) >= self.log_threshold, axis=1)
        return above, below
