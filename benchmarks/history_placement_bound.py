"""How well any detector can place one step: the Bayes oracle of ``history_steps.py``'s step cells.

``history_steps.py`` scores a detector by the share of histories where it places a step of 3 noise
SDs within 1 commit of its true place (drawn uniformly from [0.2 n, 0.8 n]). Under AR(1) noise
of phi 0.5 pairbench reaches 0.88 at 100 commits and 0.93-0.94 at 300-1,000, short of the 0.95
of issue 27. This script bounds what *any* placement can reach on the same histories.

The oracle knows everything but the place: the noise (Gaussian AR(1), stationary, phi and SD),
the level before the step and the step's size, and that the place is uniform on [0.2 n, 0.8 n].
Then the posterior of the place tau given the history y is exact,

    p(tau | y) ~ exp(-0.5 sum_t e_t(tau)^2 / (sd^2 (1 - phi^2))),

e(tau) the residuals y - step_tau whitened by the AR(1) filter (e_0 = sqrt(1 - phi^2) r_0,
e_t = r_t - phi r_(t-1)), and the place that maximises P(|tau_hat - tau| <= 1 | y), the posterior
mass of the three commits around it, is the Bayes rule for the score: **no placement of one step
made from y, knowing less, is within 1 commit more often** (in expectation over the prior; the
simulation's share carries a binomial error, printed as a 95% interval). A detector that reports
several steps near each other could cover more commits; pairbench's segments are at least 3 long
and it reports 0.00-0.03 false steps per 1,000 commits in these cells, so it places one.

Seeded, times nothing: ``nice -n 10 .venv/bin/python benchmarks/history_placement_bound.py --seed 2042``
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.signal import lfilter

PHI = 0.5
STEP_SDS = 3.0
EXACT = 0.2  # analysis.history.EXACT


def histories(n: int, count: int, phi: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``count`` histories of ``n`` commits, AR(1) noise of SD 1 (as ``history_steps.model_noise``),
    one step of ``STEP_SDS`` at a place uniform on [0.2 n, 0.8 n]; and the places."""
    e = rng.standard_normal((count, n + 200))
    noise = math.sqrt(1.0 - phi * phi) * lfilter([1.0], [1.0, -phi], e, axis=1)[:, 200:] if phi else e[:, 200:]
    places = rng.integers(int(0.2 * n), int(0.8 * n) + 1, size=count)
    steps = (np.arange(n)[None, :] >= places[:, None]) * STEP_SDS
    return noise + steps, places


def whitened(r: np.ndarray, phi: float) -> np.ndarray:
    """The AR(1) innovations of ``r`` along its last axis (the first value scaled to their SD)."""
    out = np.empty_like(r)
    out[..., 0] = math.sqrt(1.0 - phi * phi) * r[..., 0]
    out[..., 1:] = r[..., 1:] - phi * r[..., :-1]
    return out


def oracle(y: np.ndarray, phi: float) -> tuple[np.ndarray, ...]:
    """For each history: the Bayes place (most posterior mass within 1 commit), and the maximum-
    likelihood place (the posterior's mode), both knowing all but the place; and the maximum-
    likelihood place knowing phi but not the levels (generalised least squares, as
    ``stats.changepoint.refined`` fits, over the whole history), and the place with the most of that
    profile likelihood within 1 commit (the noise's SD known too), and that plus ``EXACT`` times
    the place's own (what ``changepoint.refined`` does, with phi and the SD estimated)."""
    count, n = y.shape
    candidates = np.arange(int(0.2 * n), int(0.8 * n) + 1)
    loglik = np.empty((count, candidates.size))
    rss = np.empty((count, candidates.size))
    w = whitened(y, phi)
    for j, tau in enumerate(candidates):
        after = (np.arange(n) >= tau).astype(float)
        e = whitened(y - STEP_SDS * after, phi)
        loglik[:, j] = -0.5 * np.einsum("ij,ij->i", e, e) / (1.0 - phi * phi)
        x = whitened(np.stack([1.0 - after, after]), phi).T  # the two levels' columns, whitened
        fit = np.linalg.lstsq(x, w.T, rcond=None)[0]
        r = w - (x @ fit).T
        rss[:, j] = np.einsum("ij,ij->i", r, r)
    profile = -0.5 * rss / (1.0 - phi * phi)  # the likelihood with the levels at their best fit
    return (candidates[_window(loglik).argmax(axis=1)], candidates[loglik.argmax(axis=1)],
            candidates[rss.argmin(axis=1)], candidates[_window(profile).argmax(axis=1)],
            candidates[_window(profile, EXACT).argmax(axis=1)])


def _window(loglik: np.ndarray, exact: float = 0.0) -> np.ndarray:
    """Each candidate's likelihood mass with its two neighbours (normalised per history), plus
    ``exact`` times its own."""
    mass = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    mass /= mass.sum(axis=1, keepdims=True)
    padded = np.pad(mass, ((0, 0), (1, 1)))
    return padded[:, :-2] + (1.0 + exact) * padded[:, 1:-1] + padded[:, 2:]


def interval(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95% interval of a share k / n."""
    z, p = 1.959963984540054, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=2042)
    p.add_argument("--lengths", default="30,100,300,1000")
    p.add_argument("--histories", type=int, default=20_000)
    args = p.parse_args(argv)
    print("| noise | commits | histories | Bayes oracle within 1 [95%] | maximum likelihood, all known | "
          "maximum likelihood, phi known, levels fitted (on it) | most profile likelihood within 1, levels fitted "
          f"(on it) | the same plus {EXACT:g} of its own (on it) |")
    print("|---|---|---|---|---|---|---|---|")
    for phi, name in ((PHI, "AR(1) phi 0.5"), (0.0, "independent")):
        for n in (int(v) for v in args.lengths.split(",")):
            rng = np.random.default_rng([args.seed, n, int(100 * phi)])
            count = args.histories if n <= 300 else args.histories // 4
            hits_bayes = hits_ml = hits_gls = hits_window = hits_exact = 0
            on_gls = on_window = on_exact = 0
            for start in range(0, count, 1000):  # in blocks: bounded memory at 1,000 commits
                y, places = histories(n, min(1000, count - start), phi, rng)
                bayes, ml, gls, window, exact = oracle(y, phi)
                hits_window += int(np.sum(np.abs(window - places) <= 1))
                hits_exact += int(np.sum(np.abs(exact - places) <= 1))
                on_gls += int(np.sum(gls == places))
                on_window += int(np.sum(window == places))
                on_exact += int(np.sum(exact == places))
                hits_bayes += int(np.sum(np.abs(bayes - places) <= 1))
                hits_ml += int(np.sum(np.abs(ml - places) <= 1))
                hits_gls += int(np.sum(np.abs(gls - places) <= 1))
            low, high = interval(hits_bayes, count)
            print(f"| {name} | {n} | {count} | {hits_bayes / count:.3f} [{low:.3f}, {high:.3f}] | "
                  f"{hits_ml / count:.3f} | {hits_gls / count:.3f} ({on_gls / count:.3f}) | "
                  f"{hits_window / count:.3f} ({on_window / count:.3f}) | "
                  f"{hits_exact / count:.3f} ({on_exact / count:.3f}) |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
