"""Sessions: one measuring command end to end, from its ``Settings`` to the result file.

``commands`` (``run``, ``compare``), ``bench`` with its ``driver``, ``lanes`` and
``sizing`` (a suite of benchmarks), ``functions`` (``compare_functions`` and the
pytest plugin's in-process comparisons), ``confirm`` (two revisions built and
measured again) and ``record`` (a result into the history store). Nothing here
prints: the CLI renders what a session returns.
"""
