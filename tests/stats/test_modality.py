"""Behaviour of the lowland multimodality detector and its Harrell-Davis quantiles.

Expected values come from outside pairbench:

* R 4.2.2: ``tests/reference/modality.R`` wrote ``modality_reference.json``
  (Harrell-Davis quantiles from the definition with every pbeta weight; it
  first checks perfolizer's own Harrell-Davis test values);
* perfolizer (github.com/AndreyAkinshin/perfolizer, MIT), the C# the detector
  is ported from:
  - ``src/Perfolizer/Perfolizer.Tests/Mathematics/Modality/ModalityDataFormatterTests.cs``:
    seven deterministic samples with the expected modes (count and location);
  - ``.../Modality/TestDataSets/ModalityManualDataSet.cs`` (Manual1, 3 modes),
    ``ModalityGumbelLocationProgressionDataSet.cs`` and
    ``ModalityCloseModesDataSet.cs``, which ``ModalityDetectorTests.cs`` runs
    through the detector expecting the generated number of modes. perfolizer
    draws them with .NET's Random(42); here the same recipes use numpy's
    generator, so the samples differ but the expected counts are the same.

The false-alarm and detection rates are checked at full size by
``benchmarks/modality_calibration.py`` (``benchmarks/RESULTS.md, "Modality label"``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from pairbench.errors import StatisticsError
from pairbench.stats.descriptive import mvalue
from pairbench.stats.modality import (
    _density_histogram,
    _lowland_split,
    hd_quantiles,
    lowland_modes,
)

REF = json.loads((Path(__file__).parents[1] / "reference" / "modality_reference.json").read_text())
CASES = {case["name"]: case for case in REF["cases"]}


def _reference_x(case) -> np.ndarray:
    if case["x"] is None:  # rebuilt exactly as tests/reference/modality.R builds it
        return np.arange(1, 20001) * 7919 % 20011 / 1000
    return np.array(case["x"], dtype=float)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hd_quantiles_match_the_definition_computed_in_r(name):
    case = CASES[name]
    x = np.sort(_reference_x(case))
    got = hd_quantiles(x, np.array(case["p"]))
    scale = float(np.max(np.abs(x))) or 1.0
    np.testing.assert_allclose(got, case["hd"], rtol=1e-13, atol=1e-13 * scale)


def _formatter_sample(modes: int, lower: int, intermodal: int, upper: int) -> list[float]:
    """perfolizer ModalityDataFormatterTests.GenerateSample: modes of 50 values 20 apart."""

    def series(count, lo, hi):
        if count == 1:
            return [(lo + hi) / 2]
        if count == 2:
            return [(lo * 2 + hi) / 3, (lo + hi * 2) / 3]
        middle, scale = (lo + hi) / 2, (hi - lo) / 2
        return [middle + (1 if i % 2 == 0 else -1) * ((i // 2) / (count // 2)) ** 2 * scale
                for i in range(count)]  # fmt: skip

    values, position = [], 0

    def add(count, delta):
        nonlocal position
        if count == 1:
            values.append(float(position))
        elif count >= 2:
            lo, hi = position - delta, position + delta
            values.extend([lo, hi, *series(count - 2, lo, hi)])
        position += 10

    add(lower, 1)
    for i in range(modes):
        if i:
            add(intermodal, 1)
        add(50, 3)
    add(upper, 1)
    return values


@pytest.mark.parametrize(
    ("sample", "locations"),
    [
        ((1, 0, 0, 0), [10]),  # "[7 | 10 | 13]_50"
        ((1, 1, 0, 1), [10]),  # "{0} + [7 | 10 | 13]_50 + {20}"
        ((1, 2, 0, 3), [10]),
        ((2, 0, 0, 0), [10, 30]),  # "[7 | 10 | 13]_50 + [27 | 30 | 33]_50"
        ((2, 1, 2, 1), [10, 30]),
        ((3, 2, 1, 0), [10, 30, 50]),  # Full6
        ((5, 3, 3, 3), [10, 30, 50, 70, 90]),  # Full7
    ],
    ids=[f"sample{i}" for i in range(1, 8)],
)
def test_lowland_finds_the_modes_of_perfolizer_formatter_samples(sample, locations):
    found = lowland_modes(_formatter_sample(*sample))
    assert found.count == len(locations)
    assert [round(v) for v in found.locations] == locations  # perfolizer formats with "N0"
    assert len(found.cut_points) == found.count - 1
    pairs = zip(locations[:-1], found.cut_points, locations[1:], strict=True)
    assert all(a < c < b for a, c, b in pairs)


def test_lowland_finds_three_modes_in_perfolizer_manual_sample():
    found = lowland_modes(CASES["manual1"]["x"])  # integer timings, heavily tied at 150 and 160
    assert found.count == 3 and found.ties_spread
    assert np.allclose(found.locations, [150, 160, 170], atol=1.0)


def test_lowland_counts_gumbel_location_progressions_like_perfolizer():
    rng = np.random.default_rng(42)
    for count in range(1, 11):  # ModalityGumbelLocationProgressionDataSet, batch 100
        x = np.concatenate([rng.gumbel(10.0 * i, 1.0, 100) for i in range(count)])
        assert lowland_modes(x).count == count, count
    for count in range(1, 9):  # the noisy variant, as written in perfolizer
        batch = 100 + int(rng.integers(-15, 15))
        parts = []
        for i in range(count):
            parts += [rng.gumbel(10.0 * i, 1.0, batch), rng.uniform(0, 6, batch // 10),
                      rng.uniform(-4, 0, batch // 10)]  # fmt: skip
        assert lowland_modes(np.concatenate(parts)).count == count, count


@pytest.mark.parametrize("delta", [0.5, 0.1, 0.01])
def test_lowland_separates_close_modes_like_perfolizer(delta):
    rng = np.random.default_rng(7)  # ModalityCloseModesDataSet: +-(delta + U^3), 1000 each
    x = np.concatenate([delta + rng.random(1000) ** 3, -delta - rng.random(1000) ** 3])
    found = lowland_modes(x)
    assert found.count == 2
    assert found.locations[0] < 0 < found.locations[1]


UNIMODAL = {
    "lognormal_0.3_n100": lambda r: r.lognormal(0, 0.3, 100),
    "lognormal_0.6_n30": lambda r: r.lognormal(0, 0.6, 30),
    "gamma2_n1000": lambda r: 1.0 + r.gamma(2.0, 0.1, 1000),
    "exponential_offset_n300": lambda r: 1.0 + r.exponential(0.05, 300),
    "normal_on_a_grid_n300": lambda r: np.round(r.normal(1000, 3, 300)),
    "poisson20_n1000": lambda r: r.poisson(20, 1000).astype(float),
}


@pytest.mark.parametrize("name", sorted(UNIMODAL))
def test_lowland_rarely_finds_modes_in_unimodal_timing_shapes(name):
    rng = np.random.default_rng(20261122)
    reps = 60
    found = sum(lowland_modes(UNIMODAL[name](rng)).count > 1 for _ in range(reps))
    # consistent with a false-alarm rate of at most 5% (0 of 1000 in the benchmark)
    assert sps.binomtest(found, reps, 0.05, alternative="greater").pvalue > 1e-3, found


def test_mvalue_cries_wolf_where_the_lowland_detector_does_not():
    rng = np.random.default_rng(11)
    samples = [rng.lognormal(0, 0.3, 1000) for _ in range(20)]
    assert sum(mvalue(x) > 3.2 for x in samples) >= 10  # about 80% in the benchmark
    assert all(lowland_modes(x).count == 1 for x in samples)


def test_lowland_detects_separated_mixtures_and_seed_000s_three_modes():
    rng = np.random.default_rng(5)
    halves = [np.concatenate([rng.normal(0, 1, 100), rng.normal(6, 1, 100)]) for _ in range(20)]
    assert sum(lowland_modes(x).count == 2 for x in halves) >= 18
    offset = np.array([0.0, 1.0, 3.0])[rng.choice(3, size=10000, p=[0.7, 0.2, 0.1])]
    mixed = 1000 + 2000 * (offset + rng.lognormal(0.0, 0.2, 10000))  # seed 000's rmixed
    found = lowland_modes(mixed)
    assert found.count >= 2 and found.locations[0] == pytest.approx(3000, rel=0.1)


def test_identical_values_are_one_mode_without_error():
    for x in ([7.5], [7.5] * 40):
        found = lowland_modes(x)
        assert (found.count, found.locations, found.cut_points) == (1, (7.5,), ())


def test_two_adjacent_timer_ticks_are_one_mode():
    found = lowland_modes([100.0] * 30 + [101.0] * 30)  # could be one mode split by the tick
    assert found.count == 1 and found.ties_spread


def test_ties_are_spread_so_a_coarse_timer_is_not_a_comb_of_modes():
    # Akinshin, "Lowland multimodality detection and jittering" (2024): normal
    # data rounded to one decimal look like five modes unless ties are spread.
    x = np.sort(np.round(np.random.default_rng(3).normal(0, 1, 2000), 1))
    lower, upper, heights = _density_histogram(x - x[0], 100)
    assert len(_lowland_split(lower, upper, heights, 0.5)[0]) > 1  # without spreading
    found = lowland_modes(x)
    assert found.count == 1 and found.ties_spread


def test_a_large_offset_changes_nothing_but_the_locations():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.poisson(20, 300), 60 + rng.poisson(20, 200)])
    small, big = lowland_modes(x.astype(float)), lowland_modes(1e9 + x)
    assert small.count == big.count == 2
    np.testing.assert_allclose(np.array(big.locations) - 1e9, small.locations, atol=1e-6)


def test_large_samples_are_thinned_to_5000_density_points_and_keep_both_modes():
    # speed: benchmarks/modality_calibration.py (Part 5); not asserted here
    rng = np.random.default_rng(6)
    x = np.where(rng.random(1_000_000) < 0.7, rng.normal(1e6, 1e4, 1_000_000), 1.2e6)
    x += rng.normal(0, 1e4, x.size) * (x == 1.2e6)
    found = lowland_modes(x)
    assert found.density_n == 5000 and found.n == 1_000_000
    assert found.count == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sensitivity": 1.5}, r"`sensitivity` must be a number in \[0, 1\], got 1.5"),
        ({"sensitivity": "high"}, "`sensitivity` must be a number"),
        ({"precision": 0.0}, r"`precision` must be a number in \(0, 0.5\]"),
        ({"precision": 0.75}, r"`precision` must be a number in \(0, 0.5\]"),
    ],
)
def test_lowland_rejects_unusable_settings(kwargs, message):
    with pytest.raises(StatisticsError, match=message):
        lowland_modes([1.0, 2.0, 3.0], **kwargs)


@pytest.mark.parametrize("x", [[], [1.0, float("nan")], [1.0, float("inf")]])
def test_lowland_rejects_unusable_input(x):
    with pytest.raises(StatisticsError):
        lowland_modes(x)


def test_sensitivity_zero_never_splits_and_one_splits_more():
    x = CASES["manual1"]["x"]
    assert lowland_modes(x, sensitivity=0.0).count == 1
    assert lowland_modes(x, sensitivity=1.0).count >= 3
