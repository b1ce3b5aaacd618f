"""R's rank statistics at one shift d, on Python floats and integers, for small samples.

``ranks._SignedRankZ`` and ``ranks._RankSumZ`` are the step functions R's root finder
walks (some 40 evaluations per interval end). On numpy each evaluation costs about
twenty array calls, 15-30 µs whatever the size; on a few dozen distinct values a
Python merge of the sorted values costs a third to a half of that. The numbers are
the same: x - d is the same IEEE subtraction, the ranks and counts are integers, and
the tie sum is ``math.fsum`` of the same exact terms (t^3 - t is exact below
t = 2^17, so ``small`` asks for fewer values than that; fsum does not depend on the
terms' order). ``tests/stats/test_ranks.py`` checks both routes against each other
over shifts at, between and beyond the values.
"""

from __future__ import annotations

import math

SMALL = 64
"""Up to this many distinct values (both samples together) the Python route is the faster: at
64 signed-rank or 100 rank-sum values both cost about 30 and 15 µs."""
MAX_COUNT = 2**17
"""Below this many values every tie group's t^3 - t is exact, in numpy as in Python."""


def small(distinct: int, count: int) -> bool:
    """Whether samples of ``count`` values, ``distinct`` of them different, take the Python route."""
    return distinct <= SMALL and count < MAX_COUNT


def shifted(values: list[float], counts: list[int], d: float) -> tuple[list[float], list[int]]:
    """values - d (ascending) with their counts, neighbours that became equal merged."""
    out, merged = [], []
    for v, c in zip(values, counts, strict=True):
        y = v - d
        if out and out[-1] == y:
            merged[-1] += c
        else:
            out.append(y)
            merged.append(c)
    return out, merged


def tie_sum(groups: list[int]) -> float:
    """sum(t^3 - t) over groups t > 1 (integers), correctly rounded: ``math.fsum`` of exact terms."""
    return math.fsum([float(t) ** 3 - t for t in groups if t > 1])


def signed_rank_parts(values: list[float], counts: list[int], d: float) -> tuple[int, int, float]:
    """(twice the sum of the midranks of |x - d| over x - d > 0, how many x - d are non-zero, the tie
    sum of the |x - d|) for x given as ascending distinct ``values`` with ``counts``."""
    ys, cs = shifted(values, counts, d)
    negative = [(-y, c) for y, c in zip(reversed(ys), reversed(cs), strict=True) if y < 0]  # |y| ascending
    positive = [(y, c) for y, c in zip(ys, cs, strict=True) if y > 0]
    twice, below, groups = 0, 0, []
    i = j = 0
    while i < len(negative) or j < len(positive):
        if j == len(positive) or (i < len(negative) and negative[i][0] < positive[j][0]):
            group, up = negative[i][1], 0
            i += 1
        elif i == len(negative) or positive[j][0] < negative[i][0]:
            group = up = positive[j][1]
            j += 1
        else:  # |y| of a negative and a positive value tie
            up = positive[j][1]
            group = negative[i][1] + up
            i, j = i + 1, j + 1
        twice += up * (2 * below + group + 1)
        groups.append(group)
        below += group
    return twice, below, tie_sum(groups)


def rank_sum_parts(x_values: list[float], x_counts: list[int], y_values: list[float], y_counts: list[int],
                   d: float) -> tuple[int, float]:
    """(twice the Mann-Whitney U of x - d against y, the tie sum of the pooled values) for x and y
    given as ascending distinct values with counts."""
    xs, xc = shifted(x_values, x_counts, d)
    twice, below, groups, j = 0, 0, [], 0
    for v, c in zip(xs, xc, strict=True):
        while j < len(y_values) and y_values[j] < v:
            groups.append(y_counts[j])
            below += y_counts[j]
            j += 1
        tied = y_counts[j] if j < len(y_values) and y_values[j] == v else 0
        twice += c * (2 * below + tied)
        groups.append(c + tied)
        if tied:
            below += tied
            j += 1
    groups += y_counts[j:]
    return twice, tie_sum(groups)
