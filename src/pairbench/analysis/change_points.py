"""The change points of one series: its steps, drifts and noise, and where each step may lie.

``detect`` works on a benchmark's history as ``analysis.history`` gives it: the logarithms of the
points' values (a step is a ratio, whatever the benchmark's speed; values not all positive, such
as a count that is 0 at some commits, over their typical size), by PELT (``stats.changepoint``) on
a model of steps, drifts and autocorrelated noise, as follows:

1. each value's distance from the running median of five is clipped to
   ``CLIP`` noise SDs (the SD from consecutive differences), so one wild
   result cannot make two steps (a step moves the running median with it);
2. the noise is modelled as AR(1) about the fitted segments, and estimated
   jointly with them, from below: first as independent noise, then, in turn,
   the segmentation for the noise's long-run SD and the noise (its SD and
   lag-1 autocorrelation, bias-corrected) of the residuals about that
   segmentation, until the segmentation repeats. Results measured on a shared
   machine are autocorrelated (its load comes in phases); the SD of
   consecutive differences alone reads AR(1) noise of phi 0.5 at 0.7 of its
   SD and finds a false step in half of all histories of 100 commits;
3. PELT divides the series by the long-run SD, sd sqrt((1 + phi) / (1 - phi)),
   the scale on which a step between two stretches is measured, and charges
   ``penalty(n)`` per step; each segment is a level, or a line for the same
   penalty again: a line is a **drift**, a slow change over many commits that a
   model of levels alone would cut into several steps;
4. each stretch between steps (of at least ``TESTED`` commits) is asked once more whether it
   holds one step, by the Bayes evidence of one step against a level and against a line under
   AR(1) noise of unknown autocorrelation (``stats.step_evidence``), which does not rely on the
   noise estimated about a segmentation that may lack the step: with a log Bayes factor above
   ``EVIDENCE`` against a level (the stretch measured in units of the noise scale from
   consecutive differences, so that the flat prior on a step, which is not unit-free, means the
   same at every noise level), above 0 against a line and above ``LASTING`` against a level when
   the innovation at the step's own commit is left free in both (``stats.lasting_evidence``: a
   step must outlast its jump, so one wild value of heavy-tailed noise, which an AR(1) model of
   high phi reads as a jump and its decay, is not one), the stretch becomes two levels, split
   where the step's posterior is likeliest (and each half asked once more; then the noise is
   estimated again).
   Under AR(1) noise the noise estimated about a segmentation without the step reads phi near
   0.9, on whose long-run scale a step of 3 SDs looks small, and PELT misses it;
5. each step is then placed (within ``REACH`` commits) where the likelihood of
   its two neighbouring segments' generalised least-squares fit under the AR(1)
   noise, summed over the place and the commits either side of it (plus
   ``EXACT`` times the place's own), is the largest: under AR(1) noise that
   likelihood is often flat over 2-3 commits, and its single maximum then falls
   two commits off as easily as one;
5b. each step between two levels is asked whether it came at once or over many commits: the
   Bayes evidence of a ramp (a level, a line over ``RAMP_WIDTH`` or more commits, the level it
   reached) against one step in its neighbourhood (``stats.ramp_evidence``, ``RAMP_REACH`` each side
   at most); above ``RAMP``, or above ``RAMP_VAGUE`` when the step's place is vague (its span holds
   ``RAMP_SPAN`` commits or more), the step becomes a drift over the likeliest ramp. Not asked in
   fewer than ``RAMP_CONTEXT`` commits, nor when the noise's lag-1 autocorrelation is above
   ``RAMP_PHI``: there a ramp and a step of a few noise SDs look alike (under AR(1) 0.5 the
   question turned 5-8% of true 3-SD steps at 100 commits into drifts), and the step's wide span
   already says its place is vague. A slow rise
   between two flat stretches otherwise costs less as one step than as a level, a line and a level,
   and was reported as one step in 13-48% of such histories of independent noise with rises of
   1-4 SD over 50-100 commits, now in 0-22%; over 20 commits, where a rise looks much like a step,
   in 23-88% (45-93% before); under AR(1) 0.5 noise, unchanged: the question is not asked there
   (``benchmarks/history_drifts.py``);
5c. each step between two levels in ``RAMP_CONTEXT`` commits or more is asked the same question
   once more at every autocorrelation, to say what it is: **one step** only when one step beats
   the ramp decisively (a log Bayes factor above ``ONE_STEP`` for the step), else a change that
   may be **spread** over the commits of its likeliest ramp and its span (a step or a drift: the
   data do not tell): ``analysis.history`` then offers a bisect of those commits as a search that
   may answer that the change is spread, not as one for its commit. The segmentation is not changed,
   so false steps and where steps are found stay as they were. A rise of 2 SD over 20 commits
   between flat stretches (where the step's misfit of a ramp is a few nats, under AR(1) 0.5 one
   or two) was reported as exactly one step in 87% (independent) and 66% (AR(1) 0.5) of
   histories, now in at most 5% of every such cell of 1-4 SD over 20-100 commits; the price is
   that a true 3-SD step at 100 commits is called spread rather than one step in 11-14% of
   histories of independent noise and about 40% under AR(1) 0.5, where the two look alike
   (``benchmarks/history_ramps.py``);
6. each step between two levels gets a **span**: the shortest run of commits that holds
   ``SPAN_LEVEL`` (95%) of the posterior of one step's place between its neighbouring steps,
   by the evidence of step 4 (``stats.credible_places``), widened to take in the step's own place.
   Where the likelihood is flat the span is wide; `confirm` and `bisect` are offered over it, so
   that they look where the step may be, not only where it likely is. Under AR(1) noise at 100
   commits a span holds the step in 0.99 of the histories where the step is found near it
   (``benchmarks/history_spans.py``). A step beside a drift gets none;
7. a history whose noise is **skewed** (``stats.is_skewed``: the quantile skewness of its
   residuals about the running median beyond ``SKEWED`` / sqrt(n); timings slowed by other
   tenants, a tight bulk and a long tail on one side) is taken apart first: steps 1-5 on its
   midranks give a segmentation, about whose robust fit (``stats.median_fitted``) each side's
   residuals are scaled to the lighter side's (``stats.two_piece``); steps 1-5 run on those
   pseudo-values, each step is then placed where the residuals' own kernel density makes the
   history likeliest (``stats.placed_by_density``), and the noise and the spans (step 6) are the
   history's own values' about that segmentation (on the pseudo-values the spans were too
   sure). A Gaussian model reads the tail as spread and misses a step the size of a few
   bulk-widths, and the tail's slow values pull its least-squares place off. On this
   machine's real result noise at 100 commits a 3-SD step is found within 1 commit in 0.72 of
   histories (0.51 without) and false steps fall from 0.90 to 0.17 per 1,000 commits;
   independent, AR(1) and t3 noise are read as skewed in under 1% of histories.

The penalty was calibrated by simulation to at most one false step per 1,000
commits under independent and AR(1) (phi 0.5) noise, normal and heavy-tailed,
for histories of 30 to 1,000 commits (``benchmarks/history_steps.py``; the
figures are in ``benchmarks/RESULTS.md``). Pure: no I/O.
"""

from __future__ import annotations

import math

import numpy as np

from pairbench import stats
from pairbench.frozen import frozen

PENALTY_FACTOR = 3.0  # per step, times ln(n); see penalty()
SMALL_HISTORY = 20.0  # the penalty's extra for short histories, whose noise is known less well
MIN_SEGMENT = 3
MIN_DRIFT = 10  # a drift is a line over at least this many commits
DRIFT_COST = 0.75  # what a drift's slope costs, as a share of the penalty of a step
CLIP = 3.0
RUNNING_MEDIAN = 5
REACH = 3  # how far the generalised least-squares fit may move a step
EXACT = 0.2  # what placing a step on its commit is worth beyond placing it within one; see detect()
EVIDENCE = 5.25  # the log Bayes factor of one step against a level, in noise units, that splits a stretch
LASTING = 3.0  # ... and the log Bayes factor of a step that outlasts its jump it needs as well
TESTED = 10  # the shortest stretch asked for one more step
RAMP = 3.0  # the log Bayes factor of a ramp against one step that makes a step a drift; see detect()
RAMP_VAGUE = 0.0  # ... or above this when the step's place is vague: its span holds RAMP_SPAN commits or more
RAMP_SPAN = 20
RAMP_WIDTH = 16  # the fewest commits a ramp rises over
RAMP_CONTEXT = 40  # the fewest commits around a step asked about a ramp: in fewer, the two look alike
RAMP_REACH = 100  # a step's neighbourhood asked whether it came over many commits, each side
RAMP_PHI = 0.3  # ... asked only of a history whose noise is this little autocorrelated, or less
ONE_STEP = 2.0  # the log Bayes factor of one step against a ramp that makes a change one step; see detect()
SKEWED = 3.5  # a history's noise is skewed beyond this quantile skewness times sqrt(n); see detect()
SPAN_LEVEL = 0.95  # the posterior mass a step's span holds
ROUNDS = 8  # at most this many rounds of segmentation and noise
SHORT, SHORTEST = 100, 30  # histories below SHORT commits get SHORT_SMALL and SHORT_EVIDENCE, fully at SHORTEST
SHORT_SMALL, SHORT_EVIDENCE = 70.0, 3.75
BY_LENGTH = "by length"  # the default of ``small`` and ``evidence``: ``short_history`` of the defaults


@frozen
class Detection:
    """What :func:`detect` found in a series: its segmentation (breaks, and which segments are
    lines) and the noise about it (None when the series is too short to segment)."""

    segmentation: stats.Segmentation
    noise: stats.SerialNoise | None
    spans: tuple[tuple[int, int] | None, ...] = ()  # each break's first and last likely place
    spread: tuple[tuple[int, int] | None, ...] = ()  # each break's commits when it may be spread, else None

    def one_step(self, k: int) -> bool:
        """Whether the k-th break is one step, not a change that may be spread over commits."""
        return not self.spread or self.spread[k] is None

    @property
    def breaks(self) -> tuple[int, ...]:
        return self.segmentation.breaks


def penalty(n: int, factor: float = PENALTY_FACTOR, small: float = SMALL_HISTORY) -> float:
    """What a step (or a drift) costs in a history of ``n`` commits, in units of the noise's
    long-run variance: (factor + small / sqrt(n)) ln n. The ln n of the BIC keeps the rate of false
    steps per commit falling as histories grow; ``small`` pays for the noise model's uncertainty
    in short ones (both chosen by ``benchmarks/history_steps.py``)."""
    return (factor + small / math.sqrt(n)) * math.log(n)


def detect(y: np.ndarray, *, skewed: float | None = SKEWED, **options) -> Detection:
    """The segmentation of ``y``, its noise and its steps' spans (module docstring); none below 2
    segments' length. A history whose noise is skewed (``skewed``, None: never) is segmented on its
    two-piece pseudo-values and its steps placed by the noise's density (step 7); its noise and
    spans are its own values'. ``options`` (``factor``, ``small``, ``drifts``, ``drift_cost``,
    ``exact``, ``evidence``: None for no evidence pass, ``lasting``: -inf for no such condition,
    ``one_step``: None to call every break one step) are for the simulation that chose the defaults."""
    one_step = options.pop("one_step", ONE_STEP)
    if y.size < 2 * MIN_SEGMENT:
        return Detection(stats.Segmentation((), (False,)), None)
    sd, x = _clipped_series(y)
    if sd <= 0:
        return Detection(stats.Segmentation((), (False,)), stats.SerialNoise(0.0, 0.0))
    if skewed is None or not stats.is_skewed(y, RUNNING_MEDIAN, skewed):
        segmentation, noise = _segmented(sd, x, **options)
        spans = _spans_of(x, segmentation)
        spread = _spread_of(x / sd, segmentation, spans, one_step) if one_step is not None else ()
        return Detection(segmentation, noise, spans, spread)
    options = {**options, "ramp": None}  # the ramp's evidence assumes Gaussian noise: on one-sided noise it errs
    first, _ = _segmented(*_clipped_series(stats.midranks(y)), **options)
    pseudo = stats.two_piece(y, stats.median_fitted(y, first))
    found, _ = _segmented(*_clipped_series(pseudo), **options)
    segmentation = stats.Segmentation(stats.placed_by_density(y, stats.median_fitted(y, found), found.breaks,
                                                              found.sloped, MIN_SEGMENT), found.sloped)
    return Detection(segmentation, stats.serial_noise(x, segmentation), _spans_of(x, segmentation))


def short_history(n: int, long: float, short: float) -> float:
    """A setting for a history of ``n`` commits: ``long`` from ``SHORT`` commits up, ``short`` at
    ``SHORTEST`` and below, linear between. A history of 30 commits estimates its noise from 30 values:
    PELT, whose penalty is on that noise's long-run scale, needs a higher penalty there to keep
    false steps under 1 per 1,000 commits under heavy-tailed AR(1) noise; the Bayes evidence, which
    sums the autocorrelation over its prior instead, can then split a stretch at a lower threshold.
    At 30 commits under AR(1) phi 0.5 (``benchmarks/history_short.py``): a 3-SD step within 1 commit
    in 0.655 of histories (0.56 with the long histories' settings; the goal 0.65), false steps 0.45
    per 1,000 commits under normal innovations and 0.90 under t3 (2.1 million commits; at the
    evidence threshold 3.5 they were 1.06, past the goal of 1, and 3.6 did not bring them clearly
    below it); under AR(1) phi 0.8, 1.58: past the goal."""
    share = min(max((SHORT - n) / (SHORT - SHORTEST), 0.0), 1.0)
    return long + share * (short - long)


def _segmented(sd: float, x: np.ndarray, *, factor: float = PENALTY_FACTOR, small: float | str = BY_LENGTH,
               drifts: bool = True, drift_cost: float = DRIFT_COST, exact: float = EXACT,
               evidence: float | str | None = BY_LENGTH, lasting: float = LASTING, ramp: float | None = RAMP):
    """The segmentation of a series and its noise on the Gaussian model (steps 2-5), from its noise
    scale ``sd`` and its values clipped to it, ``x`` (:func:`_clipped_series`); no breaks and no
    noise where the series is constant."""
    n = x.size
    if sd <= 0:
        return stats.Segmentation((), (False,)), stats.SerialNoise(0.0, 0.0)
    small = short_history(n, SMALL_HISTORY, SHORT_SMALL) if small == BY_LENGTH else small
    evidence = short_history(n, EVIDENCE, SHORT_EVIDENCE) if evidence == BY_LENGTH else evidence
    segmentation, noise = _joint(x, stats.SerialNoise(sd, 0.0), penalty(n, factor, small),
                                 drift_cost if drifts else None)
    if evidence is not None:
        split = _evident_steps(x / sd, segmentation, (evidence, lasting), exact)
        if split != segmentation:
            segmentation, noise = split, stats.serial_noise(x, split)
    segmentation = stats.refined(x, segmentation, noise, REACH, MIN_SEGMENT, exact)
    if ramp is not None and drifts and noise.phi <= RAMP_PHI:
        ramped = _ramps(x / sd, segmentation, ramp)
        if ramped != segmentation:
            segmentation, noise = ramped, stats.serial_noise(x, ramped)
    return segmentation, noise


def _ramps(x: np.ndarray, segmentation, threshold: float):
    """``segmentation`` with each step between two levels that came over many commits made a drift
    (module docstring, step 5b): where the Bayes evidence of a ramp (a level, a line of at least
    ``MIN_DRIFT`` commits, the new level) against one step, in the step's neighbourhood between its
    neighbouring breaks (``RAMP_REACH`` each side at most), passes ``threshold``."""
    edges = [0, *segmentation.breaks, x.size]
    breaks: list[int] = []
    sloped: list[bool] = [segmentation.sloped[0]]
    for k, q in enumerate(segmentation.breaks):
        a, found = _ramp_around(x, segmentation, edges, k)
        if found is not None and found.against_step > min(threshold, _vague(x, edges, k))\
                and (not breaks or a + found.start > breaks[-1]):
            breaks += [a + found.start, a + found.end]
            sloped += [True, segmentation.sloped[k + 1]]
        else:
            breaks.append(q)
            sloped.append(segmentation.sloped[k + 1])
    return stats.Segmentation(tuple(breaks), tuple(sloped)) if len(breaks) > len(segmentation.breaks) else segmentation


def _ramp_around(x: np.ndarray, segmentation, edges: list[int], k: int):
    """The k-th break's neighbourhood's first index and the Bayes evidence of a ramp against one step
    in it (``stats.ramp_evidence``), between its neighbouring breaks (``edges``: 0, the breaks, the
    length) and ``RAMP_REACH`` each side at most; None for the evidence beside a drift, in fewer than
    ``RAMP_CONTEXT`` commits, or on values all the same."""
    q = segmentation.breaks[k]
    a, b = max(edges[k], q - RAMP_REACH), min(edges[k + 2], q + RAMP_REACH)
    if segmentation.sloped[k] or segmentation.sloped[k + 1] or b - a < RAMP_CONTEXT or not np.ptp(x[a:b]) > 0.0:
        return a, None
    return a, stats.ramp_evidence(x[a:b], MIN_SEGMENT, RAMP_WIDTH)


def _spread_of(x: np.ndarray, segmentation, spans, threshold: float = ONE_STEP) -> tuple[tuple[int, int] | None, ...]:
    """Each break's commits when it may be a change spread over them (module docstring, step 5c):
    the likeliest ramp's first and last commits, widened to take in the break's span, where one step
    does not beat a ramp in the break's neighbourhood by a log Bayes factor above ``threshold``
    (``x`` in units of the noise); None for one step, beside a drift, or in too few commits to ask."""
    edges = [0, *segmentation.breaks, x.size]
    spread: list[tuple[int, int] | None] = []
    for k, q in enumerate(segmentation.breaks):
        a, found = _ramp_around(x, segmentation, edges, k)
        if found is None or -found.against_step > threshold:
            spread.append(None)
            continue
        first, last = spans[k] if spans and spans[k] else (q, q)
        spread.append((min(a + found.start, first, q), max(a + found.end, last, q)))
    return tuple(spread)


def _clipped_series(y: np.ndarray) -> tuple[float, np.ndarray]:
    """The noise scale of ``y`` and ``y`` clipped to it (step 1). The scale is the MAD of the
    differences, robust to steps and wild values; but not below a quarter of their SD: a repeating
    pattern (most values equal, or a period of a few commits) can have a MAD of (nearly) 0, and
    clipping to it would flatten the series onto its running median."""
    sd = max(stats.noise_scale(y), 0.25 * float(np.std(np.diff(y))) / math.sqrt(2.0))
    return sd, (sd * clipped((y - np.median(y)) / sd) if sd > 0 else y)


def _spans_of(x: np.ndarray, segmentation) -> tuple[tuple[int, int] | None, ...]:
    """Each break's span (module docstring, step 6): the shortest run of places that holds
    ``SPAN_LEVEL`` of the posterior of one step between its neighbouring breaks, widened to take in
    the break; None beside a drift, or in a stretch too short for the evidence."""
    edges = [0, *segmentation.breaks, x.size]
    spans = []
    for k, place in enumerate(segmentation.breaks):
        a, b = edges[k], edges[k + 2]
        found = None if segmentation.sloped[k] or segmentation.sloped[k + 1] else \
            _step_evidence(x[a:b], 2 * MIN_SEGMENT + 1)
        if found is None:
            spans.append(None)
            continue
        first, last = stats.credible_places(found.posterior, SPAN_LEVEL)
        spans.append((min(a + int(found.places[first]), place), max(a + int(found.places[last]), place)))
    return tuple(spans)


def _vague(x: np.ndarray, edges: list[int], k: int) -> float:
    """The evidence a ramp needs against the k-th step when the step's place is vague (its span
    holds ``RAMP_SPAN`` commits or more): ``RAMP_VAGUE``; else +inf (``RAMP`` alone decides)."""
    found = _step_evidence(x[edges[k]:edges[k + 2]], 2 * MIN_SEGMENT + 1)
    if found is None:
        return math.inf
    first, last = stats.credible_places(found.posterior, SPAN_LEVEL)
    return RAMP_VAGUE if last - first + 1 >= RAMP_SPAN else math.inf


def _evident_steps(x: np.ndarray, segmentation, evidence: tuple[float, float], exact: float, passes: int = 2):
    """``segmentation`` with each stretch of ``TESTED`` or more commits that holds one step by the
    Bayes evidence (module docstring, step 4) split in two levels, and each half again, ``passes``
    deep; ``evidence`` is the thresholds against a level and a level with a free shock."""
    edges = [0, *segmentation.breaks, x.size]
    breaks, sloped = [], []
    for k, line in enumerate(segmentation.sloped):
        found = _evident_breaks(x, edges[k], edges[k + 1], evidence, exact, passes)
        breaks += [edges[k]] if k else []
        breaks += found
        sloped += [False] * (len(found) + 1) if found else [line]
    return stats.Segmentation(tuple(breaks), tuple(sloped)) if len(breaks) > len(segmentation.breaks) else segmentation


def _evident_breaks(x: np.ndarray, a: int, b: int, evidence: tuple[float, float], exact: float,
                    depth: int) -> list[int]:
    """The breaks the evidence puts in ``x[a:b]``: one, then those of its halves, ``depth`` deep."""
    place = _evident_step(x[a:b], evidence, exact)
    if place is None:
        return []
    q = a + place
    if depth == 1:
        return [q]
    return [*_evident_breaks(x, a, q, evidence, exact, depth - 1), q, *_evident_breaks(x, q, b, evidence, exact, depth - 1)]


def _evident_step(stretch: np.ndarray, evidence: tuple[float, float], exact: float) -> int | None:
    """Where ``stretch`` holds one step by the evidence, or None."""
    found = _step_evidence(stretch, TESTED)
    level, lasting = evidence
    if found is None or not (found.against_level > level and found.against_line > 0.0
                             and stats.lasting_evidence(stretch, MIN_SEGMENT).against_level > lasting):  # NaN: none
        return None
    return int(found.places[np.argmax(stats.window_scores(found.posterior, exact))])


def _step_evidence(stretch: np.ndarray, shortest: int):
    """``stats.step_evidence`` of ``stretch`` (steps at least ``MIN_SEGMENT`` from its ends), or
    None when it is shorter than ``shortest`` or constant, where there is none."""
    if stretch.size < shortest or np.ptp(stretch) == 0.0:
        return None
    return stats.step_evidence(stretch, MIN_SEGMENT)


def _joint(x: np.ndarray, noise, cost: float, drift_cost: float | None):
    """The segmentation and its noise, each estimated from the other in turn from independent
    noise up (module docstring, steps 2-3), until a segmentation repeats: of a cycle, the one with
    the fewest breaks (and its noise). Drifts are looked for in every round: a drift left to the
    noise would read as strong autocorrelation, and hide itself and any step."""
    seen: list = []
    while len(seen) < ROUNDS:
        z = x / noise.long_run_sd
        segmentation = stats.segment(z, cost, MIN_SEGMENT)
        if drift_cost is not None:
            segmentation = stats.with_lines(z, segmentation, cost, MIN_DRIFT, drift_cost * cost)
        known = [k for k, (earlier, _) in enumerate(seen) if earlier == segmentation]
        if known:
            return min(seen[known[0]:], key=lambda found: len(found[0].breaks))
        following = stats.serial_noise(x, segmentation)
        if following.sd <= 0:
            return segmentation, noise
        seen.append((segmentation, following))
        noise = following
    return min(seen[-2:], key=lambda found: len(found[0].breaks))


def clipped(z: np.ndarray) -> np.ndarray:
    """``z`` with each value's distance from the running median of ``RUNNING_MEDIAN`` (shorter at
    the ends) limited to ``CLIP``."""
    level = stats.running_median(z, RUNNING_MEDIAN)
    return level + np.clip(z - level, -CLIP, CLIP)
