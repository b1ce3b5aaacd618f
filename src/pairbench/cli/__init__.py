"""The command line: parse options, run sessions, print reports, exit. The only layer that prints.

``main(argv, *, executor_factory, environment, clock)`` returns the exit code;
the keywords replace the real executor, machine metadata and progress clock
(tests). ``entry_point`` is the console script.
Exit codes: 0 success; 1 a verdict matched --fail-on; 2 usage error; 3 a
command could not be measured; 4 a result file (or standard output) could not
be read or written; 70 internal error (a bug); 130 interrupted (Ctrl-C), 143
SIGTERM and 129 SIGHUP (handled like Ctrl-C); 141 standard output was closed.

Modules: ``app`` (the group, I/O, main), ``options`` (run's and compare's
options, read as text: ``settings`` validates them), ``progress`` (live
display, a sampler sink), ``measuring`` (run, compare), ``show``, ``report``,
``doctor``, ``bench``. Each command is imported when it is used (``app.COMMANDS``), so that
``pairbench --version`` and ``--help`` load no numpy, scipy or renderer.
"""

from pairbench.cli.app import cli, entry_point, main

__all__ = ["cli", "entry_point", "main"]
