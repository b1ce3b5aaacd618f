"""A measurement session: setup, sampling, journaling, cleanup, and the run record at the end.

This is where "lose nothing" is kept: every sample is journaled as it arrives;
a failed command, a failed helper command or Ctrl-C ends sampling but the samples
taken so far become a :class:`~pairbench.model.Run` (state ``failed`` or
``interrupted``) that is written like any other. Ctrl-C during --cleanup is a
warning of the run, not a loss. A result file that cannot be written is reported
in the :class:`Outcome`, with the journal (kept) holding the samples. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pairbench import __version__
from pairbench.errors import HelperCommandFailed, PairbenchError, ResultFileError
from pairbench.measure.executor import Executor
from pairbench.measure.plan import DecisionRule, Progress, Sampler, SamplingPlan
from pairbench.model import STATUS_TIMEOUT, Command, Run, Sample, Samples, Variant, describe_status
from pairbench.resultfile import Journal, journal_path, write_result
from pairbench.units import format_duration


@dataclass(frozen=True)
class SessionSpec:
    """What to measure and how, plus the metadata to store with it."""

    kind: str  # "run" or "compare"
    plan: SamplingPlan
    labels: tuple[str, ...] = ()
    setup: Command | None = None
    cleanup: Command | None = None
    environment: Mapping = field(default_factory=dict)
    options: Mapping = field(default_factory=dict)
    shell_overhead: Mapping | None = None
    json_path: str | None = None
    notes: tuple[str, ...] = ()  # caveats known before measuring (e.g. shell operators without --shell)


@dataclass(frozen=True)
class Outcome:
    """How a session ended: the run (always), the error or interruption that ended it early,
    and the error that kept the result file from being written (the journal then holds the samples)."""

    run: Run
    error: PairbenchError | None = None
    interrupted: bool = False
    result_error: ResultFileError | None = None


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def measure(
    spec: SessionSpec,
    executor: Executor,
    *,
    on_progress: Callable[[Progress, Sampler], None] | None = None,
    decide: DecisionRule | None = None,
    finalize: Callable[[Run], Run] | None = None,
) -> Outcome:
    """Run ``spec`` to completion, failure or Ctrl-C, journaling samples when a JSON path is set.

    ``finalize`` adds derived data (summaries, comparisons) to the run before it
    is written; if it raises, the raw run is written first and the error passes on.
    """
    started = utc_now()
    skeleton = _build_run(spec, started, state="running", rows=None)
    try:
        journal = _RunJournal(spec.json_path, skeleton) if spec.json_path else None
    except BaseException:  # refused (an unfinished run's journal is there) or unwritable: nothing ran
        executor.close()
        raise
    sampler = Sampler(
        executor,
        spec.plan,
        on_sample=journal.append if journal else None,
        on_progress=(lambda progress: on_progress(progress, sampler)) if on_progress else None,
        decide=decide,
    )
    try:
        error, interrupted = _sample(executor, spec, sampler)
    finally:  # also when something unexpected escapes: --cleanup always runs
        cleanup_error, cleanup_note = _clean_up(executor, spec.cleanup, spec.plan.timeout_ns)
    error = error or cleanup_error
    state = "interrupted" if interrupted else ("failed" if error else "complete")
    stopped = sampler.stopped_because or _early_stop_reason(interrupted, error)
    notes = (*spec.notes, *getattr(executor, "notes", ()), *sampler.notes, *filter(None, [cleanup_note]))
    run = _build_run(spec, started, state=state, rows=sampler.rows, stopped=stopped, notes=notes)
    run = run.replace(environment={**run.environment, "executor": executor_metadata(executor)})
    interrupted = interrupted or cleanup_note is not None  # Ctrl-C during cleanup still exits 130
    result_error = None
    try:
        run = finalize(run) if finalize else run
    finally:
        if journal:
            result_error = journal.save(run)
    return Outcome(run=run, error=error, interrupted=interrupted, result_error=result_error)


class _RunJournal:
    """The run's journal and, at the end, its result file; OS errors become ``ResultFileError``."""

    def __init__(self, path: str, skeleton: Run):
        self.path = path
        self.journal_path = journal_path(path)
        self.samples = 0  # appended so far
        self.broken = False  # an append failed: the journal lacks the later samples
        try:
            self._journal = Journal(path, skeleton)
        except OSError as exc:  # we created it but could not write its header (Journal checks opening)
            self.journal_path.unlink(missing_ok=True)  # else it would block the next run as unfinished
            raise ResultFileError(f"{self.journal_path}: cannot write the journal ({_why(exc)})") from None

    def append(self, variant: int, sample: Sample) -> None:
        """Journal one sample; on an OS error raise ``ResultFileError``, which ends sampling."""
        try:
            self._journal.append(variant, sample)
        except OSError as exc:
            self.broken = True
            raise ResultFileError(
                f"{self.journal_path}: cannot append to the journal ({_why(exc)}); sampling stopped "
                "rather than go on with samples a crash would lose"
            ) from None
        self.samples += 1

    def save(self, run: Run) -> ResultFileError | None:
        """Write ``run`` atomically and remove the journal; on an OS error keep the journal and say so."""
        try:
            with _ignoring_interrupts():  # a second Ctrl-C must not leave half a result
                write_result(run, self.path)
        except OSError as exc:
            self._close(remove=False)
            return ResultFileError(f"{self.path}: cannot write the result ({_why(exc)}); {self._where(run)}")
        self._close(remove=True)
        return None

    def _where(self, run: Run) -> str:
        total = sum(len(v.samples) for v in run.variants)
        if self.broken or self.samples < total:
            return f"the journal {self.journal_path} holds the first {self.samples} of the {total} samples"
        return (f"all {total} samples are in the journal {self.journal_path} "
                f"(`pairbench show {self.journal_path}` reads it)")

    def _close(self, *, remove: bool) -> None:
        try:
            self._journal.close(remove=remove)
        except OSError:  # its last sync failed: what it holds was flushed line by line
            if remove:
                self.journal_path.unlink(missing_ok=True)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def executor_metadata(executor: Executor) -> dict:
    """What the result should record about how samples were taken (kind, max RSS floor)."""
    floor = getattr(executor, "rss_floor_kib", None)
    try:
        floor_kib = int(floor()) if callable(floor) else None
    except Exception:  # noqa: BLE001 - a floor we cannot read is simply not recorded
        floor_kib = None
    return {"kind": type(executor).__name__, "rss_floor_kib": floor_kib}


def _early_stop_reason(interrupted: bool, error: PairbenchError | None) -> str:
    if interrupted:
        return "interrupted (Ctrl-C)"
    if error is not None:  # the first sentence; the advice that follows is printed with the error
        return f"stopped by an error: {str(error).split('. ')[0].rstrip('.')}"
    return ""


def _sample(executor: Executor, spec: SessionSpec, sampler: Sampler) -> tuple[PairbenchError | None, bool]:
    """Run --setup, then sample; return the error that ended them early, and whether Ctrl-C did."""
    try:
        _run_helper(executor, spec.setup, "--setup", spec.plan.timeout_ns)
        sampler.run()
    except PairbenchError as exc:
        return exc, False
    except KeyboardInterrupt:
        return None, True
    return None, False


def _clean_up(executor: Executor, command: Command | None,
              timeout_ns: int | None) -> tuple[PairbenchError | None, str | None]:
    """Run --cleanup (Ctrl-C and --timeout can end it) and close the executor.

    Returns the cleanup's error, and a note if Ctrl-C cut the cleanup short:
    the result is still written, with the note among its warnings.
    """
    error = note = None
    try:
        _run_helper(executor, command, "--cleanup", timeout_ns)
    except PairbenchError as exc:
        error = exc
    except KeyboardInterrupt:
        note = f"cleanup interrupted (Ctrl-C): the --cleanup command {command.text!r} may not have finished"
    try:
        executor.close()
    except KeyboardInterrupt:
        note = note or "cleanup interrupted (Ctrl-C) while the commands' executor was being closed"
    return error, note


def _run_helper(executor: Executor, command: Command | None, option: str, timeout_ns: int | None) -> None:
    if command is None:
        return
    result = executor.run(command, timeout_ns=timeout_ns)
    if result.status == STATUS_TIMEOUT and timeout_ns:
        raise HelperCommandFailed(f"{option} command {command.text!r} failed: timed out after "
                                  f"{format_duration(timeout_ns, digits=3)} (--timeout)")
    if result.status != 0:
        raise HelperCommandFailed(f"{option} command {command.text!r} failed: {describe_status(result.status)}")


def _build_run(spec: SessionSpec, started: str, *, state: str, rows, stopped: str = "",
               notes: tuple[str, ...] = ()) -> Run:
    plan = spec.plan
    variants = tuple(
        Variant(
            name=plan.name(i),
            command=command,
            label=spec.labels[i] if spec.labels else "",
            samples=Samples.from_rows(rows[i]) if rows is not None else Samples.empty(),
        )
        for i, command in enumerate(plan.commands)
    )
    return Run(
        kind=spec.kind,
        variants=variants,
        tool_version=__version__,
        started_at=started,
        finished_at="" if state == "running" else utc_now(),
        state=state,
        stopped_because=stopped,
        environment=dict(spec.environment),
        options=dict(spec.options),
        shell_overhead=dict(spec.shell_overhead) if spec.shell_overhead else None,
        warnings=notes,
    )


@contextlib.contextmanager
def _ignoring_interrupts():
    """Let a second Ctrl-C not cut the atomic write of the result short (main thread only).

    Only that write, which is short and bounded, is guarded: --setup and --cleanup
    stay interruptible, so a hanging one cannot make pairbench unkillable.
    """
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: nothing to guard
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
