"""pairbench: benchmark commands with interleaved, randomized pairs and verdicts you can trust.

The statistics are usable on their own: ``from pairbench import stats``.
"""

__version__ = "0.2.0"
