"""Serial dependence of a run of timings and the honest error of their mean.

Timings taken one after another are autocorrelated: frequency scaling, caches,
other processes and garbage collectors make neighbours alike. The textbook
standard error s / sqrt(n) assumes independence and is then far too small
(runs reported as "2.45 +- 0.01 ms" that scatter by 0.15 ms). This module gives

* ``autocovariance`` / ``autocorrelation``: the biased (1/N, positive
  semi-definite) sample autocovariance by FFT, O(N log N), and the correlogram
  with white-noise and Bartlett bands (the correlogram check of independence);
* ``ljung_box``: the portmanteau test of "no autocorrelation up to lag h";
* ``mean_error``: the mean with an autocorrelation-aware standard error and
  confidence interval, and the effective sample size
  n_eff = n * (s^2 / n) / Var^(mean) = s^2 / Var^(mean).

Which error to use: the autoregressive estimate of the spectral density at
frequency zero (the default, ``"autoregressive"``) kept its nominal coverage on
white noise, skewed and bimodal data, AR(1) up to phi = 0.95 at n = 1000 and
AR(1) plus measurement noise, where batch means (the default before) fell to
about 0.89 at phi = 0.9 and n = 1000 and Newey-West to 0.85. Batch means,
truncated-lag and Newey-West remain as named alternatives; "iid" is the textbook
error, kept for contrast. The methods compared (overlapping batch means,
Politis-White block lengths, fixed-b batch means, Andrews-Monahan
prewhitening) and their measured coverage are in ``benchmarks/RESULTS.md``
(``benchmarks/mean_error_methods.py``, ``benchmarks/coverage_mean.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pairbench.errors import NotEnoughData, StatisticsError
from pairbench.frozen import frozen
from pairbench.notes import Note, note
from pairbench.stats import _special
from pairbench.stats._validation import as_sample, check_confidence, require_variance

METHODS = ("autoregressive", "batch-means", "truncated-lag", "newey-west", "iid")
DEFAULT_METHOD = "autoregressive"
_MIN_N = {"autoregressive": 4, "batch-means": 4, "truncated-lag": 4, "newey-west": 4, "iid": 2}
NW_BARTLETT_CONSTANT = 1.1447  # Andrews (1991) / Newey & West (1994), Bartlett kernel
# Below this effective sample size the autoregressive interval's t quantile has
# df = n_eff / 2 < 2 degrees of freedom (no finite variance): no interval is given.
MIN_N_EFF = 4.0


@dataclass(frozen=True, eq=False)
class Correlogram:
    """Sample autocorrelations r_1..r_L of a series with their significance bands.

    ``acf[k - 1]`` is r_k = gamma_k / gamma_0 for ``lags[k - 1]`` = k (lag 0,
    always 1, is left out). Under white noise each r_k lies within
    +-``white_noise_band`` = z_{1-a/2} / sqrt(n) with probability
    ``confidence``. ``bartlett_band[k - 1]`` = z sqrt((1 + 2 sum_{j<k} r_j^2) / n)
    is Bartlett's band for r_k when the true autocorrelation vanishes beyond
    lag k - 1 (the band statsmodels' ``plot_acf`` draws). Arrays are read-only.
    """

    lags: np.ndarray
    acf: np.ndarray
    white_noise_band: float
    bartlett_band: np.ndarray
    confidence: float
    n: int

    @property
    def lag1(self) -> float:
        """The lag-1 autocorrelation r_1."""
        return float(self.acf[0])


@frozen
class LjungBox:
    """The Ljung-Box portmanteau test of "no autocorrelation at lags 1..``lags``".

    Q = n (n + 2) sum_{k=1}^{h} r_k^2 / (n - k), referred to chi^2 with ``df``
    = h degrees of freedom (Ljung & Box 1978, Biometrika 65:297; R's
    ``Box.test(x, lag = h, type = "Ljung-Box")``). A small ``pvalue`` says
    the samples are serially dependent.
    """

    statistic: float
    pvalue: float
    lags: int
    df: int
    n: int


@frozen
class MeanError:
    """The mean of a series with an autocorrelation-aware standard error and interval.

    ``[low, high]`` = mean -+ q * se with q the t quantile on ``df`` degrees of
    freedom (autoregressive: n_eff / 2; batch means: number of batches - 1;
    iid: n - 1) or the normal quantile (``df`` None: truncated-lag,
    Newey-West). ``n_eff`` = s^2 / se^2 is the number of independent samples
    worth the same precision (None when se = 0); it exceeds n only when the
    samples are significantly negatively autocorrelated, and a warning then
    says so. ``bandwidth`` is the autoregressive order, the batch size (batch
    means), the lag cut-off (truncated-lag) or the Bartlett bandwidth
    (Newey-West); None for iid.
    ``se_iid`` = s / sqrt(n) is the textbook error, for comparison. ``method``
    names the estimator actually used (a truncated-lag estimate that went
    negative falls back to batch means, with a warning).
    """

    mean: float
    se: float
    low: float
    high: float
    confidence: float
    n: int
    n_eff: float | None
    method: str
    warnings: tuple[Note, ...]
    df: float | None
    bandwidth: float | None
    se_iid: float


@frozen
class _Variance:
    """One estimator's variance of the mean and how to turn it into an interval."""

    var_mean: float
    df: float | None
    bandwidth: float | None
    method: str
    warnings: tuple[Note, ...] = ()


def autocovariance(x, max_lag: int | None = None) -> np.ndarray:
    """Sample autocovariances gamma_0..gamma_L of ``x`` about its mean, by FFT.

    gamma_k = (1/n) sum_{t=1}^{n-k} (x_t - xbar)(x_{t+k} - xbar), the biased,
    positive semi-definite estimator R's ``acf(type = "covariance")`` and
    statsmodels' ``acovf`` use. L defaults to n - 1. Computed as
    irfft(|rfft(x - xbar)|^2) zero-padded to a 5-smooth length >= 2n - 1 so
    nothing wraps around: O(n log n), 1e7 samples in about a second.
    """
    arr = as_sample(x, "x", min_n=2, what="for an autocovariance")
    lag = _check_lag(max_lag, arr.size, "max_lag", default=arr.size - 1)
    return _autocovariance(_deviations(arr)[1], lag)


def autocorrelation(x, max_lag: int | None = None, confidence: float = 0.95) -> Correlogram:
    """The correlogram r_1..r_L of ``x`` with white-noise and Bartlett bands.

    r_k = gamma_k / gamma_0 as in R's ``acf(x, lag.max = L, plot = FALSE)``;
    L defaults to R's floor(10 log10(n)), at most n - 1. Needs n >= 3 and
    some variance.
    """
    conf = check_confidence(confidence)
    arr = as_sample(x, "x", min_n=3, what="for an autocorrelation")
    default = min(arr.size - 1, int(math.floor(10 * math.log10(arr.size))))
    lag = _check_lag(max_lag, arr.size, "max_lag", default=default, minimum=1)
    require_variance(arr, "x")
    r = _acf(arr, lag)
    z = float(_special.ndtri(0.5 + conf / 2))
    cum = np.concatenate(([0.0], np.cumsum(r[:-1] ** 2)))
    bartlett = z * np.sqrt((1.0 + 2.0 * cum) / arr.size)
    return Correlogram(
        lags=_frozen(np.arange(1, lag + 1)),
        acf=_frozen(r),
        white_noise_band=z / math.sqrt(arr.size),
        bartlett_band=_frozen(bartlett),
        confidence=conf,
        n=arr.size,
    )


def ljung_box(x, lags: int | None = None) -> LjungBox:
    """Ljung-Box test of no autocorrelation at lags 1..h; h defaults to min(10, n // 5).

    Needs n >= 5 for the default h (n >= 3 with an explicit ``lags``) and some
    variance.
    """
    arr = as_sample(x, "x", min_n=3, what="for a Ljung-Box test")
    n = arr.size
    if lags is None and n < 5:
        raise NotEnoughData(
            f"x must hold at least 5 values for the default Ljung-Box lag min(10, n // 5), got {n}",
            needed=5, got=n, purpose="ljung-box",
        )
    h = _check_lag(lags, n, "lags", default=min(10, n // 5), minimum=1)
    require_variance(arr, "x")
    r = _acf(arr, h)
    k = np.arange(1, h + 1)
    q = float(n * (n + 2) * np.sum(r**2 / (n - k)))
    return LjungBox(statistic=q, pvalue=float(_special.chdtrc(h, q)), lags=h, df=h, n=n)


def mean_error(x, confidence: float = 0.95, method: str = DEFAULT_METHOD) -> MeanError:
    """The mean of ``x`` with a standard error that allows for autocorrelation.

    ``method``:

    * ``"autoregressive"`` (default): the long-run variance is the spectral
      density at frequency zero of an autoregressive fit, sigma^2 / (1 - sum
      phi_i)^2 (Berk 1974, Ann. Stat. 2:489; den Haan & Levin 1997's VARHAC,
      Handbook of Statistics 15:299; what R's ``coda::spectrum0.ar``
      computes): Yule-Walker estimates of orders 0..min(n - 1, floor(10
      log10 n)) by the Durbin-Levinson recursion, the order minimising AIC =
      n log(sigma_p^2) + 2p, and sigma^2 = sigma_p^2 n / (n - p - 1), all as R's
      ``ar(x, aic = TRUE)``. The sum S of the coefficients is corrected for
      the Yule-Walker bias of a lag-1 autocorrelation, E[r_1] = phi - (1 + 4
      phi) / n + O(n^-2) (Kendall 1954, Biometrika 41:403; Marriott & Pope
      1954, Biometrika 41:390): S + (1 + 4 S) / n, which matters at small n
      (phi = 0.9 at n = 100 is read as 0.85 on average). The interval uses
      the t quantile with df = n_eff / 2: for AR(1), the delta method gives
      Var(log se) ~ (1 + phi) / (n (1 - phi)) = 1 / n_eff, the variance of the
      log of a chi_df / sqrt(df) scale when df = n_eff / 2. When n_eff < 4
      (df < 2) no interval is given: ``StatisticsError`` with code
      ``"effective-sample-too-small"``. An n_eff above n (a negative sum of
      coefficients) is kept only when the lag-1 autocorrelation lies below the
      white-noise band -z / sqrt(n), with a warning; otherwise the error is
      the iid one and n_eff = n.
    * ``"batch-means"``: b = floor(sqrt n) values per batch,
      a = floor(n / b) batches from the start (the last n - a b values only
      enter the mean), se = sd(batch means) / sqrt(a), t_{a-1} quantile
      (Schmeiser 1982, Oper. Res. 30:556).
    * ``"truncated-lag"``: the autocovariance-corrected estimator, Var = (gamma_0 + 2 sum_{k=1}^{L}
      (1 - k/n) gamma_k) / n with L = floor(sqrt n), normal quantile; when it is
      negative, batch means instead, with a warning.
    * ``"newey-west"``: Bartlett kernel, weights 1 - j/(b+1) for j <= b, with
      Newey & West's (1994, Rev. Econ. Stud. 61:631) automatic bandwidth
      b = 1.1447 (alpha T)^(1/3) from ceil(4 (T/100)^(2/9)) pilot lags, as
      ``arch.covariance.kernel.Bartlett`` computes it; normal quantile.
    * ``"iid"``: the textbook s / sqrt(n) with t_{n-1}; wrong for autocorrelated
      data, kept for contrast.

    Warns when n_eff < n / 2. O(n log n) (one FFT autocovariance).
    """
    conf = check_confidence(confidence)
    if method not in METHODS:
        raise StatisticsError(f"`method` must be one of {', '.join(METHODS)}; got {method!r}")
    arr = as_sample(x, "x", min_n=_MIN_N[method], what=f"for the {method} error of the mean")
    require_variance(arr, "x")
    n = arr.size
    mean, d = _deviations(arr)
    var = (float(np.dot(d, d)) - float(d.sum()) ** 2 / n) / (n - 1)
    est = _ESTIMATORS[method](d)
    if method == "autoregressive":
        est = _effective_size_checked(d, var, est)
    return _mean_error(mean, var, n, conf, est)


def _mean_error(mean: float, var: float, n: int, conf: float, est: _Variance) -> MeanError:
    """Assemble the record: interval, effective sample size and warnings."""
    se = math.sqrt(est.var_mean)
    if est.df is None:
        q = float(_special.ndtri(0.5 + conf / 2))
    else:
        q = float(_special.stdtrit(est.df, 0.5 + conf / 2))
    warnings = list(est.warnings)
    n_eff = var / est.var_mean if est.var_mean > 0 else None
    if n_eff is not None and abs(n_eff - n) <= 1e-9 * n:
        n_eff = float(n)  # s^2 / (s^2 / n) is n, up to rounding
    if n_eff is None:
        warnings.append(note("zero-standard-error",
                             f"the {est.method} standard error is 0, which is not credible",
                             method=est.method))
    elif n_eff < n / 2:
        warnings.append(note(
            "autocorrelated-mean",
            f"effective sample size {n_eff:.1f} is less than half of n = {n}: the samples "
            f"are autocorrelated and s/sqrt(n) would understate the error "
            f"{math.sqrt(n / n_eff):.1f}-fold",
            n_eff=n_eff, n=n, factor=math.sqrt(n / n_eff),
        ))
    return MeanError(
        mean=mean,
        se=se,
        low=mean - q * se,
        high=mean + q * se,
        confidence=conf,
        n=n,
        n_eff=n_eff,
        method=est.method,
        warnings=tuple(warnings),
        df=est.df,
        bandwidth=est.bandwidth,
        se_iid=math.sqrt(var / n),
    )


# ------------------------------------------------------------------ estimators
# Each takes the demeaned series d and returns the variance of the mean.


def _autoregressive(d: np.ndarray) -> _Variance:
    """AR spectral density at zero / n: Yule-Walker, AIC order, bias-corrected sum; df = n_eff / 2."""
    n = d.size
    order_max = min(n - 1, int(math.floor(10.0 * math.log10(n))))
    g = _autocovariance(d, order_max)
    coefficients, variances = _durbin_levinson(g, order_max)
    aic = n * np.log(variances) + 2.0 * np.arange(order_max + 1)
    order = int(np.argmin(aic))  # the first minimum, as R's ar()
    innovations = float(variances[order]) * n / (n - order - 1)
    total = float(np.sum(coefficients[order]))
    if order:
        total += (1.0 + 4.0 * total) / n  # Yule-Walker bias of a lag-1 autocorrelation
    if total >= 1.0:
        return _Variance(math.inf, None, float(order), "autoregressive")
    var_mean = innovations / (1.0 - total) ** 2 / n
    n_eff = float(g[0]) * n / (n - 1) / var_mean if var_mean > 0 else math.inf
    return _Variance(var_mean, n_eff / 2.0, float(order), "autoregressive")


def _durbin_levinson(g: np.ndarray, order_max: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Yule-Walker AR coefficients and innovation variances of orders 0..order_max.

    The Durbin-Levinson recursion (Brockwell & Davis 1991, Prop. 5.2.1) on the
    autocovariances g_0..g_order_max, as R's ``ar.yw`` (Fortran ``eureka``).
    Written here because numpy and scipy have no recursion that returns every
    order's variance (``scipy.linalg.solve_toeplitz`` solves one order). O(p^2).
    """
    coefficients = [np.zeros(0)]
    variances = np.empty(order_max + 1)
    variances[0] = g[0]
    a = np.zeros(0)
    for m in range(1, order_max + 1):
        k = (g[m] - float(np.dot(a, g[m - 1 : 0 : -1]))) / variances[m - 1]
        a = np.concatenate((a - k * a[::-1], [k]))
        variances[m] = variances[m - 1] * (1.0 - k * k)
        coefficients.append(a)
    return coefficients, variances


def _effective_size_checked(d: np.ndarray, var: float, est: _Variance) -> _Variance:
    """The autoregressive estimate, refused below ``MIN_N_EFF`` and kept above n only with evidence."""
    n = d.size
    if est.var_mean <= 0.0:
        return est  # said as a zero standard error
    n_eff = var / est.var_mean if math.isfinite(est.var_mean) else 0.0
    if n_eff < MIN_N_EFF:
        raise StatisticsError(
            f"the effective sample size {n_eff:.2g} of n = {n} samples is below {MIN_N_EFF:g}: the "
            f"samples are too strongly autocorrelated for an interval of the mean; measure longer",
            code="effective-sample-too-small", n_eff=n_eff, n=n, needed=MIN_N_EFF)
    if n_eff <= n:
        return est
    g = _autocovariance(d, 1)
    lag1 = float(g[1] / g[0])
    band = float(_special.ndtri(0.975)) / math.sqrt(n)
    if lag1 < -band:
        alternating = note(
            "negatively-autocorrelated",
            f"effective sample size {n_eff:.1f} exceeds n = {n}: the samples alternate (lag-1 "
            f"autocorrelation {lag1:+.2f}, below the white-noise band -{band:.2f}), so their "
            f"deviations partly cancel in the mean",
            n_eff=n_eff, n=n, lag1=lag1, band=band)
        return _Variance(est.var_mean, est.df, est.bandwidth, est.method, (*est.warnings, alternating))
    # no evidence of alternation: an n_eff above n is noise in the fit; use the iid error
    return _Variance(var / n, n / 2.0, est.bandwidth, est.method, est.warnings)


def _batch_means(d: np.ndarray) -> _Variance:
    """Non-overlapping batch means: b = floor(sqrt n), a = floor(n / b) batches."""
    n = d.size
    b = math.isqrt(n)
    a = n // b
    means = d[: a * b].reshape(a, b).mean(axis=1)
    return _Variance(float(np.var(means, ddof=1)) / a, float(a - 1), float(b), "batch-means")


def _truncated_lag(d: np.ndarray) -> _Variance:
    """Seed 001: (gamma_0 + 2 sum_{k<=L} (1 - k/n) gamma_k) / n, L = floor(sqrt n)."""
    n = d.size
    lag = min(math.isqrt(n), n - 1)
    g = _autocovariance(d, lag)
    k = np.arange(1, lag + 1)
    var_mean = (float(g[0]) + 2.0 * float(np.sum((1.0 - k / n) * g[1:]))) / n
    if var_mean > 0:
        return _Variance(var_mean, None, float(lag), "truncated-lag")
    fallback = _batch_means(d)
    fell_back = note(
        "mean-error-fallback",
        f"the truncated-lag variance of the mean was {var_mean:.3g} <= 0 "
        f"(lags 1..{lag}); fell back to batch means",
        variance=var_mean, lags=lag,
    )
    return _Variance(fallback.var_mean, fallback.df, fallback.bandwidth, fallback.method, (fell_back,))


def _newey_west(d: np.ndarray) -> _Variance:
    """Bartlett-kernel long-run variance with the Newey-West (1994) automatic bandwidth."""
    n = d.size
    g = _autocovariance(d, n - 1)
    bandwidth = float(_newey_west_bandwidth(g))
    return _Variance(_bartlett_long_run(g, bandwidth) / n, None, bandwidth, "newey-west")


def _iid(d: np.ndarray) -> _Variance:
    n = d.size
    var = (float(np.dot(d, d)) - float(d.sum()) ** 2 / n) / (n - 1)
    return _Variance(var / n, float(n - 1), None, "iid")


_ESTIMATORS = {
    "autoregressive": _autoregressive,
    "batch-means": _batch_means,
    "truncated-lag": _truncated_lag,
    "newey-west": _newey_west,
    "iid": _iid,
}


def _newey_west_bandwidth(g: np.ndarray) -> float:
    """Newey & West's (1994) plug-in bandwidth for the Bartlett kernel, at most n - 1.

    Pilot lags m = ceil(4 (T/100)^(2/9)); s0 = sum_{|j|<=m} gamma_j,
    s1 = sum_{|j|<=m} |j| gamma_j; alpha = (s1/s0)^2; b = 1.1447 (alpha T)^(1/3).
    ``g`` holds gamma_0..gamma_{T-1}. (The same steps as arch's ``_alpha_q`` and
    ``opt_bandwidth``; R's ``sandwich::bwNeweyWest`` uses floor for m.)
    """
    n = g.size
    pilot = min(math.ceil(4.0 * (n / 100.0) ** (2.0 / 9.0)), n - 1)
    j = np.arange(1, pilot + 1)
    s0 = float(g[0]) + 2.0 * float(np.sum(g[1 : pilot + 1]))
    s1 = 2.0 * float(np.sum(j * g[1 : pilot + 1]))
    if s0 <= 0.0:
        return 0.0
    alpha = (s1 / s0) ** 2
    return min(NW_BARTLETT_CONSTANT * (alpha * n) ** (1.0 / 3.0), n - 1.0)


def _bartlett_long_run(g: np.ndarray, bandwidth: float) -> float:
    """gamma_0 + 2 sum_{j=1}^{floor(b)} (1 - j/(b+1)) gamma_j: Bartlett-weighted long-run variance."""
    m = int(bandwidth)
    j = np.arange(1, m + 1)
    return float(g[0] + 2.0 * np.sum((1.0 - j / (bandwidth + 1.0)) * g[1 : m + 1]))


# ------------------------------------------------------------------ helpers


def _deviations(arr: np.ndarray) -> tuple[float, np.ndarray]:
    """The mean and the deviations from it, exact to rounding even on a large offset.

    With rough = the float mean and correction = mean(x - rough), the
    deviations are (x - rough) - correction: on 1e15 + small jitter the mean
    itself is only stored to 0.125, but the deviations keep every digit.
    """
    rough = float(arr.mean())
    d = arr - rough
    correction = float(d.mean())
    d -= correction
    return rough + correction, d


def _autocovariance(d: np.ndarray, max_lag: int) -> np.ndarray:
    """gamma_0..gamma_max_lag of the demeaned series d (1/n normalisation), by FFT.

    gamma_0 is the direct sum of squares, which is exact to rounding. numpy's FFT, not
    scipy.fft: both are pocketfft and give the same bits here, and numpy's costs nothing
    to import (scipy.fft about 0.03 s of CPU after a run's last sample).
    """
    n = d.size
    size = _five_smooth_at_least(2 * n - 1)
    spectrum = np.fft.rfft(d, size)
    power = spectrum.real**2
    power += spectrum.imag**2
    del spectrum
    g = np.fft.irfft(power, size)[: max_lag + 1] / n
    g[0] = float(np.dot(d, d)) / n
    return g


def _five_smooth_at_least(target: int) -> int:
    """The smallest 2^a 3^b 5^c >= ``target``: a length FFTs factor quickly
    (``scipy.fft.next_fast_len(target, real=True)``)."""
    best, fives = None, 1
    while fives < 2 * target:
        threes = fives
        while threes < 2 * target:
            length = threes
            while length < target:
                length *= 2
            best = length if best is None else min(best, length)
            threes *= 3
        fives *= 5
    return best


def _acf(arr: np.ndarray, max_lag: int) -> np.ndarray:
    """r_1..r_max_lag of a series with some variance."""
    g = _autocovariance(_deviations(arr)[1], max_lag)
    return g[1:] / g[0]


def _check_lag(value, n: int, name: str, *, default: int, minimum: int = 0) -> int:
    """Validate a lag argument: an integer in [minimum, n - 1], or the default when None."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise StatisticsError(f"`{name}` must be an integer, got {value!r}")
    if not minimum <= value <= n - 1:
        raise StatisticsError(f"`{name}` must be in [{minimum}, n - 1 = {n - 1}], got {value}")
    return int(value)


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr
