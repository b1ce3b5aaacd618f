"""The doctor: is the machine, or the benchmark, the problem?

* :func:`diagnose_machine` reads the machine (``environment.collect_environment``)
  and judges it (``checks.evaluate``): governor, turbo, SMT, ASLR, load and the
  busiest processes, isolated CPUs, clock, perf events, virtualization, memory,
  power, thermal throttling. Each :class:`Finding` has a status (ok, unknown,
  warn, fail), what was read, why it matters for timing and the fix.
* :func:`diagnose_benchmark` runs a command a few times (``validation``) and
  judges it by seed 004's rules (setup overhead, memory growth with the
  iteration count, name length) and the sample checks (``samplechecks``).
"""

from __future__ import annotations

from pairbench.environment.checks import evaluate
from pairbench.environment.findings import STATUSES, Finding, Report, worst
from pairbench.doctor.validation import ValidationPlan, measure_benchmark, validate

__all__ = [
    "STATUSES", "Finding", "Report", "ValidationPlan", "diagnose_benchmark", "diagnose_machine",
    "evaluate", "measure_benchmark", "validate", "worst",
]

DOCTOR_WINDOW_S = 0.5  # the doctor can afford a longer look at "right now" than run can


def diagnose_machine(environment: dict | None = None, *, root: str = "/",
                     activity_window_s: float = DOCTOR_WINDOW_S) -> Report:
    """Judge ``environment`` (collected now from ``root`` if None); the metadata goes in details."""
    if environment is None:
        from pairbench.environment import collect_environment

        environment = collect_environment(root, activity_window_s=activity_window_s)
    return Report("environment", evaluate(environment), {"environment": environment})


def diagnose_benchmark(plan: ValidationPlan, executor, *, timer_resolution_ns: int | None = None) -> Report:
    """Measure ``plan``'s command with ``executor`` and judge it (see ``validation``)."""
    return validate(plan, measure_benchmark(plan, executor, timer_resolution_ns=timer_resolution_ns))
