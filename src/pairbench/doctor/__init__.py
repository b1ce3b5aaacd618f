"""The doctor: is the machine, or the benchmark, the problem?

* :func:`diagnose_machine` judges the machine's metadata (collected now, or
  stored with a result: ``metadata.stored_environment``) with the checks of
  ``environment.checks``: governor, turbo, SMT, ASLR, load and the busiest
  processes, isolated CPUs, clock, perf events, virtualization, memory,
  power, thermal throttling. Each :class:`Finding` has a status (ok, unknown,
  warn, fail), what was read, why it matters for timing and the fix.
* :func:`diagnose_benchmark` runs a command a few times on the sampler of
  ``run`` and ``compare`` (``validation``) and judges it by the Swift
  benchmark suite's validation rules (setup overhead, memory growth with the
  iteration count, name length) and the sample checks (``samplechecks``).

Nothing here prints: ``report.doctor`` words the reports.
"""

from __future__ import annotations

from collections.abc import Mapping

from pairbench.analysis.rules import timer_step
from pairbench.doctor.plan import ValidationPlan, parse_fail_on, parse_plan
from pairbench.doctor.validation import measure_benchmark, validate
from pairbench.environment.checks import evaluate
from pairbench.environment.findings import STATUSES, Finding, Report, worst
from pairbench.measure.executor import Executor

__all__ = [
    "DOCTOR_WINDOW_S", "STATUSES", "Finding", "Report", "ValidationPlan", "diagnose_benchmark",
    "diagnose_machine", "evaluate", "measure_benchmark", "parse_fail_on", "parse_plan", "timer_step",
    "validate", "worst",
]

DOCTOR_WINDOW_S = 0.5  # the doctor can afford a longer look at "right now" than run can


def diagnose_machine(environment: Mapping, *, live: bool = False) -> Report:
    """Judge the machine metadata ``environment``; the metadata goes in the report's details.

    ``live``: it was read from this machine just now (``pairbench doctor`` without
    ``--environment``), so the load finding may say which PIDs to pause.
    """
    return Report("environment", evaluate(environment, live=live), {"environment": environment})


def diagnose_benchmark(plan: ValidationPlan, executor: Executor, *,
                       timer_resolution_ns: int | None = None) -> Report:
    """Measure ``plan``'s command with ``executor`` and judge it (see ``validation``).

    ``timer_resolution_ns`` is the clock's step (:func:`timer_step` of the
    machine's metadata); None measures it now.
    """
    return validate(plan, measure_benchmark(plan, executor, timer_resolution_ns=timer_resolution_ns))
