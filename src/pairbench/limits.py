"""What a result may hold: one set of limits for the readers and every writer.

The readers of result files and journals (``store``) refuse anything beyond
these; so every way in keeps within them, before anything is written: the
worker protocol (a larger field is a protocol error), the options (``--shard``,
the number of commands), the importers, and ``store.resultfile`` itself, which
checks a run against the readers' rules before it writes it. A file pairbench
writes is therefore always one it can read back.

Imported by the worker protocol, which benchmarked processes load: standard
library only.
"""

MAX_SAMPLE_VALUE = 2**53 - 1
"""The largest magnitude of a sample's integer column (as nanoseconds, ~104 days): exact as a float."""
MAX_SIDES = 1000
"""The most sides (commands, builds, the self-check copy) a result holds."""
MAX_BENCHMARKS = 100_000
"""The most benchmarks a result holds."""
MAX_SHARDS = 10_000
"""The most shards a suite is split into (``--shard K/N``, and a stored ``suite.shard``)."""
