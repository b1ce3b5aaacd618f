"""The command line: parse options, run sessions, print reports, exit. The only layer that prints.

``main(argv)`` returns the exit code; ``entry_point`` is the console script.
Exit codes: 0 success; 1 a verdict matched --fail-on; 2 usage error; 3 a
command could not be measured; 4 a result file (or standard output) could not
be read or written; 130 interrupted (Ctrl-C); 141 standard output was closed.

Modules: ``app`` (the group, I/O, main), ``options`` (shared option sets),
``progress`` (live display), ``measuring`` (run, compare), ``show``, and one
module per further command. Importing this package registers every command.
"""

from pairbench.cli import doctor, measuring, report, show  # noqa: F401 - importing registers them
from pairbench.cli.app import cli, entry_point, main

__all__ = ["cli", "entry_point", "main"]
