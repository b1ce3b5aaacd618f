"""The start-up probe: ``true``, run once in every round beside the benchmark being validated.

Its time is what any command pays to start (a fork, an exec, with ``--shell``
the shell too), measured under the same conditions as the benchmark, so the
duration and setup-overhead checks can take it off. It is a
:class:`~pairbench.measure.targets.Target` of the sampler like the
benchmark's own, with two differences: a run of ``true`` that fails yields no
row (it measured nothing, and must not end the validation), and once ``true``
cannot be started the probe stops trying.
"""

from __future__ import annotations

from pairbench.analysis.doctor import PROBE as PROBE_BENCHMARK
from pairbench.errors import CommandNotFound, ProgramNotFound
from pairbench.measure.commandline import Shell, parse_command
from pairbench.measure.executor import Executor
from pairbench.measure.targets import Row
from pairbench.model import Command

STARTUP_COMMAND = "true"


class StartupProbe:
    """Runs ``true`` for one sample of process start-up; rows of benchmark ``PROBE_BENCHMARK``."""

    name = "process start-up (true)"

    def __init__(self, command: Command):
        self.command = command
        self.runnable = True

    @classmethod
    def for_shell(cls, shell: Shell | None) -> StartupProbe | None:
        """The probe of commands run through ``shell`` (``sh -c true``; ``true`` itself without one),
        or None when ``true`` is not found."""
        try:
            return cls(parse_command(STARTUP_COMMAND, shell=shell))
        except ProgramNotFound:
            return None

    def execute(self, executor: Executor, *, timeout_ns: int | None) -> tuple[Row, ...]:
        """One run of ``true``: its row, or none when it failed or cannot be started (then never again)."""
        if not self.runnable:
            return ()
        try:
            execution = executor.run(self.command, timeout_ns=timeout_ns)
        except CommandNotFound:
            self.runnable = False
            return ()
        return (Row(PROBE_BENCHMARK, execution),) if execution.status == 0 else ()
