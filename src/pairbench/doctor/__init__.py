"""The doctor: is the machine, or the benchmark, the problem?

* :func:`diagnose_machine` judges the machine's metadata (collected now, or
  stored with a result: ``metadata.stored_environment``) with the checks of
  ``environment.checks``: governor, turbo, SMT, ASLR, load and the busiest
  processes, isolated CPUs, clock, perf events, virtualization, memory,
  power, thermal throttling. Each :class:`Finding` is a note with a status
  (ok, unknown, warn, fail) and the figures read; ``report.findings`` says
  what was read, why it matters for timing and the fix.
* ``pairbench doctor COMMAND`` is a session (``sessions.doctor``): its plan
  (``plan``) and start-up probe (``probe``) are here, its judgement is
  ``analysis.doctor``'s.

Nothing here prints: ``report.doctor`` words the reports.
"""

from __future__ import annotations

from collections.abc import Mapping

from pairbench.doctor.plan import ValidationPlan, parse_fail_on, parse_plan
from pairbench.environment.checks import evaluate
from pairbench.environment.findings import STATUSES, Finding, Report, worst

__all__ = ["DOCTOR_WINDOW_S", "STATUSES", "Finding", "Report", "ValidationPlan", "diagnose_machine", "evaluate",
           "parse_fail_on", "parse_plan", "worst"]

DOCTOR_WINDOW_S = 0.5  # the doctor can afford a longer look at "right now" than run can


def diagnose_machine(environment: Mapping, *, live: bool = False) -> Report:
    """Judge the machine metadata ``environment``; the metadata goes in the report's details.

    ``live``: it was read from this machine just now (``pairbench doctor`` without
    ``--environment``), so the load finding may say which PIDs to pause.
    """
    return Report("environment", evaluate(environment, live=live), {"environment": environment})
