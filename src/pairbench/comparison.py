"""Paired comparisons: each candidate against the baseline, round by round, with a verdict.

A round ran every variant once in random order, so the samples of baseline and
candidate that share a ``pair`` id were measured under the same machine state.
The effect is the median per-pair log-ratio ln(candidate / baseline) as a percent
change, with one of two intervals:

* fixed rounds (``--runs``): the exact sign-test interval (``stats.paired_effect``);
* adaptive stopping: the anytime-valid confidence sequence, intersected over
  the rounds (``stats.RunningSequence``): valid although we looked after every
  round, it only narrows, so a verdict once reached stays, and it excludes 0
  exactly when the anytime p-value is below alpha.

With several candidates the family-wise error is held at alpha: intervals are
built at level alpha/m and p-values are Bonferroni-adjusted (m p), so a
p-value below alpha always goes with an interval that excludes 0. The verdict
itself comes from ``verdict.decide``. Everything here is pure.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from pairbench import stats
from pairbench.errors import NotEnoughData, ResultFileError, StatisticsError
from pairbench.model import Run, Samples, json_safe
from pairbench.stats._order import median_interval_ranks, smallest_n_for_median_interval
from pairbench.stats.paired import log_ratios as _log_ratios
from pairbench.stats.paired import require_spread
from pairbench.stats.sequential import RunningSequence, first_bounded_n, upper_ranks
from pairbench.verdict import Verdict, decide, refuse

T_OPT = 200  # rounds at which the confidence sequence is tightest (see stats.sequential)
MAX_ROUNDS_PLANNED = 10_000_000  # beyond this, "rounds still needed" is not given
SELF_CHECK_LABEL = "self-check"
MOVED_REASON = ("the change itself moved during the run: no single change fits every round "
                "(the running interval is empty), so the interval of the last round is shown")


@dataclass(frozen=True)
class DecisionSettings:
    """How strict a comparison is: error rate, smallest change that matters, interval kind."""

    alpha: float = 0.01
    threshold: float = 1.0  # percent
    anytime: bool = True  # adaptive stopping: use the confidence sequence
    family: int = 1  # number of candidates compared with the baseline (self-check excluded)

    @property
    def level_alpha(self) -> float:
        """The per-comparison alpha after the Bonferroni split over the family."""
        return self.alpha / max(self.family, 1)


@dataclass(frozen=True)
class Effect:
    """The paired effect in percent with the interval the verdict rests on."""

    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    pvalue: float
    pvalue_method: str
    n: int
    moved: bool = False  # the running interval became empty: no single change fits every round

    def to_dict(self) -> dict:
        return {"estimate": self.estimate, "low": self.low, "high": self.high,
                "confidence": self.confidence, "method": self.method}


# --------------------------------------------------------------------------- pairing


def paired_walls(baseline: Samples, candidate: Samples) -> tuple[np.ndarray, np.ndarray]:
    """Wall times (ns, float) of the rounds where both variants succeeded, in round order."""
    b, c = baseline.measured(), candidate.measured()
    common, b_index, c_index = np.intersect1d(b["pair"], c["pair"], return_indices=True)
    common_ok = common >= 0
    return (b["wall_ns"][b_index[common_ok]].astype(np.float64),
            c["wall_ns"][c_index[common_ok]].astype(np.float64))


def failed_rounds(baseline: Samples, candidate: Samples) -> int:
    """Measured rounds left out of the pairs because the baseline's or the candidate's sample failed.

    A round cut short by Ctrl-C (one variant ran, the other never did) is not a failure.
    """
    pairs = [s.select((s["warmup"] == 0) & (s["pair"] >= 0)) for s in (baseline, candidate)]
    failed = [set(s["pair"][s["status"] != 0].tolist()) for s in pairs]
    return len(failed[0] | failed[1])


def log_ratios_in_round_order(baseline: Samples, candidate: Samples) -> np.ndarray:
    base, cand = paired_walls(baseline, candidate)
    return _log_ratios(base, cand) if base.size else np.zeros(0)


# --------------------------------------------------------------------------- effect and verdict


def effect_of(log_ratios: np.ndarray, settings: DecisionSettings) -> Effect:
    """The effect interval at the settings' level; raises StatisticsError when none can be given.

    ``log_ratios`` are in round order (the adaptive interval intersects over rounds).
    """
    level = settings.level_alpha
    if settings.anytime:
        running = RunningSequence(level, T_OPT)
        running.extend(log_ratios)
        return anytime_effect(running)
    effect = stats.paired_effect(np.ones_like(log_ratios), np.exp(log_ratios), 1.0 - level)
    return Effect(effect.estimate_pct, effect.low_pct, effect.high_pct, effect.achieved_confidence,
                  "sign-test interval for the median", effect.p_value, "sign test", effect.n)


def anytime_effect(running: RunningSequence) -> Effect:
    """The effect of a running confidence sequence, once it is bounded and the pairs vary."""
    needed = first_bounded_n(running.alpha, T_OPT)
    if running.n < needed:
        raise stats_not_enough(needed, running.n, running.alpha, anytime=True)
    require_spread(running.values)
    cs = running.current()
    return Effect(cs.estimate_pct, cs.low_pct, cs.high_pct, 1.0 - running.alpha,
                  "anytime-valid confidence sequence for the median, intersected over rounds",
                  running.pvalue, "anytime-valid (confidence sequence)", running.n,
                  moved=running.low > running.high)


def stats_not_enough(needed: int, got: int, level: float, *, anytime: bool) -> StatisticsError:
    kind = "an anytime-valid interval" if anytime else "an interval"
    return NotEnoughData(
        f"too few rounds for {kind} at alpha {level:.3g}: need at least {needed}, got {got}"
    )


def verdict_for(log_ratios: np.ndarray, settings: DecisionSettings) -> tuple[Verdict, Effect | None]:
    """The verdict and the effect it rests on; a refused verdict when no interval can be given."""
    return _verdict_of(lambda: effect_of(log_ratios, settings), settings)


def _verdict_of(effect, settings: DecisionSettings) -> tuple[Verdict, Effect | None]:
    try:
        found = effect()
    except StatisticsError as exc:
        return refuse(str(exc)), None
    if found.moved:
        return Verdict("inconclusive", reason=MOVED_REASON), found
    return decide(found.low, found.high, settings.threshold), found


def rounds_needed(log_ratios: np.ndarray, settings: DecisionSettings) -> int | None:
    """Further rounds after which the verdict's interval should be decisive, or None.

    An interval no wider than the threshold always decides: if it holds 0 it
    lies within +-threshold. So this is the smallest total n at which the
    interval the settings use (the sequence's ranks when adaptive, the sign
    test's otherwise) spans at most ln(1 + threshold) in the distribution of
    the log-ratios seen so far (their empirical quantiles), and never less than
    the n at which that interval first exists. At least 1 (the verdict is
    inconclusive now); None with fewer than 3 pairs, no spread, or when it
    would take more than ``MAX_ROUNDS_PLANNED`` rounds.
    """
    r = np.asarray(log_ratios, dtype=np.float64)
    if r.size < 3 or np.all(r == r[0]):
        return None
    level, target = settings.level_alpha, math.log1p(settings.threshold / 100.0)
    floor = (first_bounded_n(level, T_OPT) if settings.anytime
             else smallest_n_for_median_interval(1.0 - level))

    def decisive(n: int) -> bool:
        low_rank, high_rank = _interval_ranks(n, level, settings.anytime)
        width = np.quantile(r, [(high_rank - 0.5) / n, (low_rank - 0.5) / n])
        return float(width[0] - width[1]) <= target

    if not decisive(MAX_ROUNDS_PLANNED):
        return None
    lo, hi = floor - 1, MAX_ROUNDS_PLANNED  # decisive(hi); bisection on the (nearly monotone) width
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if mid >= floor and decisive(mid) else (mid, hi)
    return max(hi - int(r.size), 1)


def _interval_ranks(n: int, level: float, anytime: bool) -> tuple[int, int]:
    """1-based ranks (low, high) of the interval at n pairs: the sequence's or the sign test's."""
    if anytime:
        high = int(upper_ranks(np.array([n]), level, T_OPT, "beta-binomial")[0])
        return n + 1 - high, high
    ranks = median_interval_ranks(n, 1.0 - level)
    return (ranks.low, ranks.high) if ranks else (0, n + 1)


# --------------------------------------------------------------------------- whole comparisons


@dataclass(frozen=True)
class ComparisonResult:
    """One candidate against the baseline: verdict, effect, p-value and the secondary numbers."""

    baseline: str
    candidate: str
    self_check: bool
    verdict: Verdict
    effect: Effect | None
    pvalue: float | None
    pvalue_unadjusted: float | None
    rounds: int
    rounds_needed: int | None
    secondary: dict
    warnings: tuple[str, ...]

    def to_dict(self, settings: DecisionSettings, stopped_because: str) -> dict:
        adjusted = settings.family > 1 and not self.self_check
        return json_safe({
            "baseline": self.baseline,
            "candidate": self.candidate,
            "self_check": self.self_check,
            "verdict": self.verdict.verdict,
            "negligible": self.verdict.negligible,
            "verdict_reason": self.verdict.reason,
            "refused": self.verdict.refused,
            "effect": self.effect.to_dict() if self.effect else None,
            "pvalue": self.pvalue,
            "pvalue_unadjusted": self.pvalue_unadjusted,
            "pvalue_method": self.effect.pvalue_method if self.effect else None,
            "adjustment": "bonferroni" if adjusted else "none",
            "alpha": settings.alpha,
            "threshold": settings.threshold,
            "rounds": self.rounds,
            "rounds_needed": self.rounds_needed,
            "stopped_because": stopped_because,
            "secondary": self.secondary,
            "warnings": list(self.warnings),
        })


def settings_for_run(run: Run) -> DecisionSettings:
    """The decision settings a stored comparison was made with (defaults where absent)."""
    options = run.options
    candidates = sum(1 for v in run.variants if v.label == "candidate") or len(run.variants) - 1
    try:
        alpha, threshold = float(options.get("alpha", 0.01)), float(options.get("threshold", 1.0))
    except (TypeError, ValueError):
        alpha = threshold = math.nan
    if not (0 < alpha < 1 and 0 < threshold < 100):
        raise ResultFileError(f"the result's options do not describe a comparison (alpha must lie in (0, 1) "
                              f"and threshold in (0, 100) percent): alpha {options.get('alpha')!r}, "
                              f"threshold {options.get('threshold')!r}")
    return DecisionSettings(alpha=alpha, threshold=threshold,
                            anytime=options.get("runs") is None, family=max(candidates, 1))


def baseline_and_candidates(run: Run) -> tuple[int, list[int]]:
    """Index of the baseline (label "baseline", else the first variant) and of the others."""
    labels = [v.label for v in run.variants]
    base = labels.index("baseline") if "baseline" in labels else 0
    return base, [i for i in range(len(run.variants)) if i != base]


def compare_run(run: Run, settings: DecisionSettings) -> tuple[ComparisonResult, ...]:
    """Every candidate of ``run`` against its baseline, p-values Bonferroni-adjusted over the family."""
    base_index, others = baseline_and_candidates(run)
    baseline = run.variants[base_index]
    results = [
        _compare_pair(baseline.name, baseline.samples, run.variants[i].name, run.variants[i].samples,
                      settings, self_check=run.variants[i].label == SELF_CHECK_LABEL)
        for i in others
    ]
    return tuple(_bonferroni_adjusted(results, settings.family))


def _compare_pair(base_name: str, base: Samples, cand_name: str, cand: Samples,
                  settings: DecisionSettings, *, self_check: bool) -> ComparisonResult:
    base_ns, cand_ns = paired_walls(base, cand)
    warnings: list[str] = []
    r = _log_ratios(base_ns, cand_ns) if base_ns.size else np.zeros(0)
    verdict, effect = verdict_for(r, settings)
    needed = (rounds_needed(r, settings)
              if verdict.verdict == "inconclusive" and not (effect and effect.moved) else None)
    secondary = secondary_statistics(base_ns, cand_ns, r, settings, warnings)
    lost = failed_rounds(base, cand)
    if lost > 0:
        warnings.append(f"{lost} round(s) left out because a sample in them failed")
    return ComparisonResult(
        baseline=base_name, candidate=cand_name, self_check=self_check, verdict=verdict,
        effect=effect, pvalue=effect.pvalue if effect else None,
        pvalue_unadjusted=effect.pvalue if effect else None, rounds=int(r.size),
        rounds_needed=needed, secondary=secondary, warnings=tuple(warnings),
    )


def _bonferroni_adjusted(results: list[ComparisonResult], family: int) -> list[ComparisonResult]:
    """p-values times the family size (at most 1), for every candidate but the self-check.

    The intervals are built at alpha/m, so only Bonferroni keeps "p <= alpha"
    and "the interval excludes 0" the same statement; Holm would reject more
    than the intervals show (a candidate could read "equivalent, p = 0.005").
    """
    if family < 2:
        return results
    return [r if r.self_check or r.pvalue is None else
            dataclasses.replace(r, pvalue=min(1.0, family * r.pvalue)) for r in results]


def secondary_statistics(base_ns: np.ndarray, cand_ns: np.ndarray, r: np.ndarray,
                         settings: DecisionSettings, warnings: list[str]) -> dict:
    """The numbers shown beside the verdict: seed 002's table, seed 000's tests, diagnostics."""
    if base_ns.size == 0:
        return {}
    out = {
        "min": {"baseline": float(base_ns.min()), "candidate": float(cand_ns.min()),
                "delta_pct": float(100.0 * (cand_ns.min() / base_ns.min() - 1.0))},
        "mean": {"baseline": float(base_ns.mean()), "candidate": float(cand_ns.mean()),
                 "paired_difference": float(np.mean(cand_ns - base_ns)),
                 "paired_difference_pct": float(100.0 * np.mean(cand_ns - base_ns) / base_ns.mean())},
        "pairs": {"candidate_faster": int(np.count_nonzero(r < 0)),
                  "candidate_slower": int(np.count_nonzero(r > 0)),
                  "tied": int(np.count_nonzero(r == 0))},
    }
    confidence = 1.0 - settings.level_alpha
    out["hodges_lehmann"] = _guarded(warnings, lambda: _hodges_lehmann(cand_ns, base_ns, confidence))
    out["mann_whitney_pvalue"] = _guarded(warnings, lambda: stats.mann_whitney(cand_ns, base_ns).pvalue)
    out["signed_rank_pvalue"] = _guarded(warnings, lambda: stats.signed_rank(cand_ns, base_ns).pvalue)
    out["autocorrelation"] = _guarded(warnings, lambda: _lag1(r, warnings))
    out["outlier_balance"] = _guarded(warnings, lambda: _outliers(r))
    return out


def _guarded(warnings: list[str], compute):
    try:
        return compute()
    except StatisticsError as exc:
        if str(exc) not in warnings:
            warnings.append(str(exc))
        return None


def _hodges_lehmann(cand_ns: np.ndarray, base_ns: np.ndarray, confidence: float) -> dict:
    hl = stats.hodges_lehmann(cand_ns, base_ns, confidence)
    return {"estimate": hl.estimate, "low": hl.low, "high": hl.high, "confidence": hl.confidence}


def _lag1(r: np.ndarray, warnings: list[str]) -> dict:
    correlogram = stats.autocorrelation(r, max_lag=1)
    lag1 = correlogram.lag1
    band = float(correlogram.white_noise_band)
    significant = abs(lag1) > band
    if significant:
        warnings.append(
            f"the pair differences are autocorrelated (lag-1 r = {lag1:.2f}, outside ±{band:.2f}): "
            "consecutive rounds are not independent; run `pairbench doctor` to see why"
        )
    return {"lag1": lag1, "band": band, "significant": bool(significant)}


def _outliers(r: np.ndarray) -> dict:
    balance = stats.outlier_balance(r)
    return {"slow": balance.n_above, "fast": balance.n_below, "pvalue": balance.p_value,
            "enabled": balance.enabled}


# --------------------------------------------------------------------------- adaptive stopping


class StoppingRule:
    """Decides, after each round, whether every real comparison has reached a verdict.

    Keeps one ``RunningSequence`` per candidate, fed the new rounds' log-ratios,
    so consulting it after one more round costs O(n), and its verdicts are the
    ones ``compare_run`` recomputes from the stored samples. The sampler
    consults it only from ``--min-runs`` on; it catches up then. With --runs
    (no anytime interval) the progress display consults it for the sign-test
    interval instead.
    """

    def __init__(self, settings: DecisionSettings, baseline: int, candidates: list[int]):
        self.settings = settings
        self.baseline = baseline
        self.candidates = candidates
        # one store of each candidate's log-ratios: the running sequence when adaptive, a list with --runs
        self.running = ({i: RunningSequence(settings.level_alpha, T_OPT) for i in candidates}
                        if settings.anytime else {})
        self.ratios: dict[int, list[float]] = {} if settings.anytime else {i: [] for i in candidates}
        self.latest: dict[int, tuple[Verdict, Effect | None]] = {}
        self._rounds_seen = 0

    def __call__(self, sampler) -> str | None:
        self._catch_up(sampler)
        verdicts = []
        for i in self.candidates:
            if self.settings.anytime:
                result = _verdict_of(lambda i=i: anytime_effect(self.running[i]), self.settings)
            else:
                result = verdict_for(np.asarray(self.ratios[i]), self.settings)
            self.latest[i] = result
            verdicts.append(result[0])
        if all(v.decided for v in verdicts):
            if len(verdicts) == 1:
                return f"the verdict was decided ({verdicts[0].verdict})"
            return "every comparison reached a verdict"
        return None

    def _catch_up(self, sampler) -> None:
        """Add the log-ratios of the rounds completed since the last call.

        Every round appends exactly one sample per variant, warmup rounds first,
        so measured round k of variant v is ``rows[v][warmup_rounds + k]``.
        """
        offset = sampler.plan.warmup_rounds
        base_rows = sampler.rows[self.baseline]
        fresh: dict[int, list[float]] = {i: [] for i in self.candidates}
        for k in range(self._rounds_seen, sampler.rounds):
            b = base_rows[offset + k]
            for i in self.candidates:
                c = sampler.rows[i][offset + k]
                if b.status == 0 and c.status == 0:
                    fresh[i].append(math.log1p((c.wall_ns - b.wall_ns) / b.wall_ns))
        for i in self.candidates:
            if self.settings.anytime:
                self.running[i].extend(fresh[i])
            else:
                self.ratios[i].extend(fresh[i])
        self._rounds_seen = sampler.rounds
