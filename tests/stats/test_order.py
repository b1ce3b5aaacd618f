"""``stats._order``'s median, quantiles and count of distinct values are numpy's, bit for bit, without
the import of ``numpy.ma`` that ``np.median``, ``np.quantile`` and ``np.unique`` make at their first
call: numpy itself is the reference."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from pairbench.stats._order import distinct, distinct_count, middle, quantiles

PROBABILITIES = [[0.25, 0.5, 0.75], [0.25, 0.75], (0.1, 0.5, 0.9), [0.0, 1.0], 0.3, 1.0,
                 np.linspace(0.05, 0.95, 19), np.array([0.999, 0.001])]


def _samples(seed: int):
    """Seeded samples of every size to 80: continuous, coarse (ties, both zeros), and integers."""
    rng = np.random.default_rng(seed)
    for n in [*range(1, 81), 257, 1000]:
        yield rng.lognormal(0.0, 1.0, n) * 10.0 ** rng.uniform(-9, 3)
        yield np.round(rng.normal(size=n), 1)  # ties, and -0.0 beside 0.0
        yield rng.integers(0, 5, n)


@pytest.mark.parametrize("probabilities", PROBABILITIES, ids=repr)
def test_quantiles_are_numpys_bit_for_bit(probabilities):
    for x in _samples(11):
        ours, numpys = quantiles(x, probabilities), np.quantile(x, probabilities)
        assert type(ours) is type(numpys) and np.shape(ours) == np.shape(numpys)
        assert np.asarray(ours).tobytes() == np.asarray(numpys).tobytes(), (x, probabilities)


def test_quantiles_leave_their_input_as_it_was():
    x = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    quantiles(x, [0.5])
    assert x.tolist() == [3.0, 1.0, 2.0, 5.0, 4.0]


def test_the_median_and_the_distinct_values_are_numpys():
    for x in _samples(12):
        assert middle(x) == float(np.median(x))
        assert distinct(x).tolist() == np.unique(x).tolist()  # equal; a zero's sign may differ
        assert distinct(np.abs(x)).tobytes() == np.unique(np.abs(x)).tobytes()
        assert distinct_count(x) == np.unique(x).size
    assert distinct_count(np.array([])) == 0 and distinct(np.array([7.0])).tolist() == [7.0]


@pytest.mark.e2e
def test_none_of_them_imports_numpy_ma():
    code = ("import sys, numpy as np\n"
            "from pairbench.stats._order import distinct, distinct_count, middle, quantiles\n"
            "x = np.random.default_rng(1).normal(size=30)\n"
            "middle(x), quantiles(x, [0.25, 0.5]), quantiles(x, 0.9), distinct(x), distinct_count(x)\n"
            "print('numpy.ma' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
