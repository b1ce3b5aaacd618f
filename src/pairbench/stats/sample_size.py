"""Power and sample size of t tests, as R's ``power.t.test`` computes them.

Seed 000 plans its sample count with ``power.t.test(delta, sd, sig.level = 0.01,
power = 0.95)`` and then adds "the 15% overhead for non-parametric statistics".
This module reproduces R 4.2.2's ``power.t.test`` (two-sided, ``strict = FALSE``,
the default) with ``scipy.stats.nct`` and ``scipy.optimize.brentq``:

* nu = max(1e-7, n - 1) * s, s = 2 (two-sample, n per group) or 1 (paired: n pairs,
  ``sd`` = SD of the within-pair differences);
* ncp = sqrt(n / s) * |effect| / sd;
* power = P(T'(nu, ncp) > t_{1 - alpha/2, nu}) (the lower rejection tail is
  ignored, as R does unless ``strict = TRUE``).

R solves for n with ``uniroot(tol = .Machine$double.eps^0.25)``, so R's printed n
is within about 1.2e-4 of the true root; ``brentq`` here solves to 1e-10.
"""

from __future__ import annotations

import math
import warnings

from scipy import optimize as _opt
from scipy import stats as _sps

from pairbench.errors import StatisticsError
from pairbench.stats._validation import check_confidence, check_number

# Pitman ARE of Wilcoxon / Mann-Whitney vs the t test is >= 108/125 = 0.864 for
# every continuous distribution (Hodges & Lehmann 1956, Ann. Math. Statist. 27:324).
RANK_TEST_ARE = 0.864

# ARE of the sign test vs the t test at the normal distribution: 2 / pi.
SIGN_TEST_ARE_NORMAL = 2.0 / math.pi


def _check_effect_sd(effect, sd) -> tuple[float, float]:
    """Return (|effect|, sd) as finite floats, effect != 0 and sd > 0, or raise."""
    e = check_number(effect, "effect", "a finite non-zero number", lambda v: math.isfinite(v) and v != 0.0)
    return abs(e), check_number(sd, "sd", "a finite positive number", lambda v: math.isfinite(v) and v > 0.0)


def _power_of(n: float, effect: float, sd: float, alpha: float, groups: int) -> float:
    """R's power.t.test p.body, two-sided, strict = FALSE; ``groups`` is R's ``tsample``."""
    nu = max(1e-7, n - 1.0) * groups
    critical = _sps.t.isf(alpha / 2.0, nu)
    ncp = math.sqrt(n / groups) * effect / sd
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's nct loses precision at huge ncp
        value = float(_sps.nct.sf(critical, nu, ncp))
    if math.isnan(value):  # far beyond nct's range: the t statistic is ~ N(ncp, 1) there
        value = float(_sps.norm.sf(critical - ncp))
    return value


def power(n, effect, sd, alpha: float = 0.01, paired: bool = False) -> float:
    """The power of a two-sided t test with ``n`` per group (or ``n`` pairs when ``paired``).

    Equals R's ``power.t.test(n, delta = effect, sd, sig.level = alpha,
    type = "two.sample" | "paired")$power``. ``effect`` and ``sd`` share a unit;
    for paired data ``sd`` is the SD of the differences. ``n`` must be > 1 (a t
    test needs two values); it may be fractional, as in R.
    """
    n_value = check_number(n, "n", "a finite number > 1", lambda v: math.isfinite(v) and v > 1.0)
    effect, sd = _check_effect_sd(effect, sd)
    alpha = check_confidence(alpha, "alpha")
    return _power_of(n_value, effect, sd, alpha, 1 if paired else 2)


def samples_needed(
    effect,
    sd,
    alpha: float = 0.01,
    power: float = 0.95,
    paired: bool = False,
    nonparametric: bool = True,
) -> float:
    """How many samples per group (pairs when ``paired``) a two-sided test needs; a float.

    The t-test n is R's ``power.t.test(delta = effect, sd, sig.level = alpha,
    power = power, type = ...)$n``, returned unrounded as R reports it (round it
    up with ``math.ceil`` to plan a run). The root is found like R 4.2.2's
    ``uniroot(c(2, 1e7), extendInt = "upX")``: the bracket is widened when the
    root lies outside it, so huge effects give n < 2, as in R.

    ``nonparametric=True`` divides by ``RANK_TEST_ARE`` = 0.864, the lower bound
    of the Pitman efficiency of Wilcoxon / Mann-Whitney tests relative to the t
    test over all continuous distributions (Hodges & Lehmann 1956): about 15.7%
    more samples, the usual "15% overhead" rule of thumb. Caution: that bound is for
    rank tests. The sign test behind ``paired_effect`` has efficiency 2/pi
    (``SIGN_TEST_ARE_NORMAL``, about 0.64) at the normal and less for flat
    distributions, so for the sign-test verdict use ``nonparametric=False`` and
    divide by 2/pi yourself.
    """
    effect, sd = _check_effect_sd(effect, sd)
    alpha = check_confidence(alpha, "alpha")
    target = check_confidence(power, "power")
    groups = 1 if paired else 2

    def shortfall(n: float) -> float:
        return _power_of(n, effect, sd, alpha, groups) - target

    low, high = _bracket(shortfall)
    n = _opt.brentq(shortfall, low, high, xtol=1e-10, rtol=4 * 2.220446049250313e-16)
    return n / RANK_TEST_ARE if nonparametric else n


def _bracket(shortfall) -> tuple[float, float]:
    """An interval [low, high] with shortfall(low) < 0 < shortfall(high), widened like R's uniroot."""
    low, high = 2.0, 1e7
    while shortfall(low) > 0.0:
        low = 1.0 + (low - 1.0) / 2.0
        if low - 1.0 < 1e-9:
            raise StatisticsError("the effect is so large that any n > 1 has the requested power")
    while shortfall(high) < 0.0:
        high *= 10.0
        if high > 1e15:
            raise StatisticsError(
                "the effect is too small relative to `sd`: more than 1e15 samples would be needed"
            )
    return low, high
