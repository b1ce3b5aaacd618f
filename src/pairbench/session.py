"""A measurement session: sides from the settings, setup, sampling, cleanup, analysis, the result file.

This is where "lose nothing" is kept: every sample is journaled as it arrives;
a failed command, a failed helper command or Ctrl-C ends sampling, but the
samples taken so far become a :class:`~pairbench.model.Run` (state ``failed``
or ``interrupted``) that is analysed and written like any other. Ctrl-C during
--cleanup is a note of the run, not a loss. A result file that cannot be
written is reported in the :class:`Outcome`, with the journal (kept) holding
the samples. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pairbench import __version__
from pairbench.analysis import Analysis, analyse, baseline_and_candidates, criteria_of
from pairbench.analysis.stopping import StoppingRule
from pairbench.errors import HelperCommandFailed, PairbenchError, ResultFileError
from pairbench.measure.commandline import measure_shell_startup, parse_command, shell_syntax_note
from pairbench.measure.executor import Executor, OutputPolicy
from pairbench.measure.sampler import Sampler, SamplingPlan, Sink, StopRule
from pairbench.measure.targets import CommandTarget
from pairbench.model import STATUS_TIMEOUT, Command, Run, Samples, Side, describe_status
from pairbench.notes import Note
from pairbench.report.jsonfile import derived_document
from pairbench.settings import Settings
from pairbench.store.journal import Journal, journal_path
from pairbench.store.resultfile import write_result
from pairbench.units import format_duration

ExecutorFactory = Callable[[OutputPolicy], Executor]
SELF_CHECK = "self-check"


@dataclass(frozen=True)
class Outcome:
    """How a session ended: the run (always), its analysis (None only if analysing failed), the
    error or interruption that ended it early, and the error that kept the result file from being
    written (the journal then holds the samples)."""

    run: Run
    analysis: Analysis | None
    error: PairbenchError | None = None
    interrupted: bool = False
    result_error: ResultFileError | None = None


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def sides_of(settings: Settings) -> tuple[tuple[Side, ...], tuple[Note, ...]]:
    """The sides ``settings`` measure, and the notes of naming them.

    ``run``: one side per command. ``compare``: the baseline, the candidates,
    and with ``--self-check`` a copy of the baseline named "NAME (copy)".
    Without ``--name`` a side is named by its command text, a repeat getting a
    " (2)" suffix (with a note): reports tell sides apart by name. Raises
    ``UsageError`` or ``CommandNotFound`` before anything runs.
    """
    commands = list(settings.commands)
    names = list(settings.names or settings.commands)
    labels = [""] * len(commands)
    if settings.kind == "compare":
        labels = ["baseline"] + ["candidate"] * (len(commands) - 1)
        if settings.decision.self_check:
            commands.append(commands[0])
            names.append(f"{names[0]} (copy)")
            labels.append(SELF_CHECK)
    names, renamed = distinct_names(names)
    sides = tuple(Side(name, parse_command(text, shell=settings.sampling.shell), label)
                  for name, text, label in zip(names, commands, labels, strict=True))
    syntax: list[Note] = []
    for note in filter(None, (shell_syntax_note(side.command) for side in sides)):
        if note not in syntax:  # the self-check copy runs the baseline's command again
            syntax.append(note)
    return sides, (*renamed, *syntax)


def distinct_names(names: Sequence[str]) -> tuple[tuple[str, ...], tuple[Note, ...]]:
    """``names`` with each repeat renamed "NAME (2)", "NAME (3)"..., and a note for each name renamed."""
    taken, seen = set(names), set()
    result: list[str] = []
    renamed: dict[str, list[str]] = {}
    for name in names:
        if name not in seen:
            seen.add(name)
            result.append(name)
            continue
        k = 2
        while f"{name} ({k})" in taken:
            k += 1
        taken.add(f"{name} ({k})")
        result.append(f"{name} ({k})")
        renamed.setdefault(name, []).append(f"{name} ({k})")
    return tuple(result), tuple(Note("renamed", {"name": name, "copies": copies})
                                for name, copies in renamed.items())


class Session:
    """One ``run`` or ``compare``: built from settings (commands checked), then :meth:`measure`."""

    def __init__(self, settings: Settings, executor_factory: ExecutorFactory, environment: Mapping):
        self.settings = settings
        self.sides, self._naming_notes = sides_of(settings)
        sampling = settings.sampling
        self._helpers = {option: parse_command(text, shell=sampling.shell) if text else None
                         for option, text in (("--prepare", sampling.prepare), ("--setup", sampling.setup),
                                              ("--cleanup", sampling.cleanup))}
        self._executor_factory = executor_factory
        self._environment = dict(environment)
        self.skeleton = Run(kind=settings.kind, sides=self.sides, settings=settings,
                            tool_version=__version__, started_at="", environment=self._environment,
                            notes=self._naming_notes)
        self.rule = self._stopping_rule()

    def _stopping_rule(self) -> StoppingRule | None:
        if self.settings.kind != "compare" or len(self.sides) < 2:
            return None
        base, candidates = baseline_and_candidates(self.skeleton)
        return StoppingRule(criteria_of(self.skeleton), base, candidates)

    def measure(self, progress: Sink | None = None) -> Outcome:
        """Measure to completion, failure or Ctrl-C; analyse; write the result (``--json``)."""
        overhead = self._shell_overhead() if self.settings.sampling.shell else None
        skeleton = self.skeleton.replace(started_at=utc_now(), shell_overhead=overhead, state="running")
        json_path = self.settings.outputs.json_path
        executor = self._executor_factory(OutputPolicy.parse(self.settings.sampling.output))
        try:
            journal = _RunJournal(json_path, skeleton) if json_path and json_path != "-" else None
        except BaseException:  # refused (an unfinished run's journal is there) or unwritable: nothing ran
            executor.close()
            raise
        sampler = Sampler(executor, self._plan(), sinks=[s for s in (journal, self.rule, progress) if s],
                          decide=self.rule.decide if self.rule and self.settings.sampling.adaptive else None)
        try:
            error, interrupted = self._sample(executor, sampler)
        finally:  # also when something unexpected escapes: --cleanup always runs
            cleanup_error, cleanup_note = self._clean_up(executor)
        run = self._finished(skeleton, sampler, executor, error or cleanup_error, interrupted, cleanup_note)
        analysis = result_error = None
        try:
            analysis = analyse(run)
        finally:  # a failed analysis still leaves the raw samples written
            if journal:
                result_error = journal.save(run, derived_document(run, analysis) if analysis else None)
        return Outcome(run, analysis, error or cleanup_error, interrupted or cleanup_note is not None,
                       result_error)

    def _plan(self) -> SamplingPlan:
        sampling = self.settings.sampling
        return SamplingPlan(
            targets=tuple(CommandTarget(side.command, side.name) for side in self.sides),
            stop=StopRule(sampling.runs, sampling.min_runs, sampling.max_runs, sampling.max_time_ns),
            warmup_rounds=sampling.warmup, prepare=self._helpers["--prepare"],
            timeout_ns=sampling.timeout_ns, ignore_failure=sampling.ignore_failure, seed=sampling.seed)

    def _shell_overhead(self) -> dict:
        executor = self._executor_factory(OutputPolicy())
        try:
            startup = measure_shell_startup(executor)
        finally:
            executor.close()
        return {"median_ns": startup.median_ns, "min_ns": startup.min_ns, "n": startup.n}

    def _sample(self, executor: Executor, sampler: Sampler) -> tuple[PairbenchError | None, bool]:
        """Run --setup, then sample; return the error that ended them early, and whether Ctrl-C did."""
        try:
            _run_helper(executor, self._helpers["--setup"], "--setup", self.settings.sampling.timeout_ns)
            sampler.run()
        except PairbenchError as exc:
            return exc, False
        except KeyboardInterrupt:
            return None, True
        return None, False

    def _clean_up(self, executor: Executor) -> tuple[PairbenchError | None, Note | None]:
        """Run --cleanup (Ctrl-C and --timeout can end it) and close the executor.

        Returns the cleanup's error, and a note if Ctrl-C cut the cleanup short:
        the result is still written, with the note among its notes.
        """
        command = self._helpers["--cleanup"]
        error = note = None
        try:
            _run_helper(executor, command, "--cleanup", self.settings.sampling.timeout_ns)
        except PairbenchError as exc:
            error = exc
        except KeyboardInterrupt:
            note = Note("cleanup-interrupted", {"command": command.text if command else None})
        try:
            executor.close()
        except KeyboardInterrupt:
            note = note or Note("cleanup-interrupted", {"command": None})
        return error, note

    def _finished(self, skeleton: Run, sampler: Sampler, executor: Executor, error: PairbenchError | None,
                  interrupted: bool, cleanup_note: Note | None) -> Run:
        info = executor.info()
        state = "interrupted" if interrupted else ("failed" if error else "complete")
        samples = {series: Samples.from_rows(rows, sampler.metrics.get(series))
                   for series, rows in sampler.rows.items()}
        return skeleton.replace(
            samples=samples, state=state, finished_at=utc_now(),
            stopped_because=sampler.stopped_because or _early_stop_reason(interrupted, error),
            environment={**skeleton.environment, "executor": info.to_dict()},
            notes=(*skeleton.notes, *info.notes, *sampler.notes, *([cleanup_note] if cleanup_note else [])))


class _RunJournal(Journal):
    """The run's journal and, at the end, its result file; OS errors become ``ResultFileError``."""

    def __init__(self, path: str, skeleton: Run):
        self.result_path = path
        self.broken = False  # an append failed: the journal lacks the later samples
        try:
            super().__init__(path, skeleton)
        except OSError as exc:  # created but its header could not be written
            journal_path(path).unlink(missing_ok=True)  # else it would block the next run as unfinished
            raise ResultFileError(f"{journal_path(path)}: cannot write the journal ({_why(exc)})") from None

    def on_sample(self, measured) -> None:
        """Journal one sample; on an OS error raise ``ResultFileError``, which ends sampling."""
        try:
            super().on_sample(measured)
        except OSError as exc:
            self.broken = True
            raise ResultFileError(
                f"{self.path}: cannot append to the journal ({_why(exc)}); sampling stopped "
                "rather than go on with samples a crash would lose") from None

    def save(self, run: Run, derived: Mapping | None) -> ResultFileError | None:
        """Write ``run`` atomically and remove the journal; on an OS error keep the journal and say so."""
        try:
            with _ignoring_interrupts():  # a second Ctrl-C must not leave half a result
                write_result(run, self.result_path, derived)
        except OSError as exc:
            self._close(remove=False)
            return ResultFileError(f"{self.result_path}: cannot write the result ({_why(exc)}); "
                                   f"{self._where(run)}")
        self._close(remove=True)
        return None

    def _where(self, run: Run) -> str:
        total = sum(len(s) for s in run.samples.values())
        if self.broken or self.written < total:
            return f"the journal {self.path} holds the first {self.written} of the {total} samples"
        return f"all {total} samples are in the journal {self.path} (`pairbench show {self.path}` reads it)"

    def _close(self, *, remove: bool) -> None:
        try:
            self.close(remove=remove)
        except OSError:  # its last sync failed: what it holds was flushed line by line
            if remove:
                self.path.unlink(missing_ok=True)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _early_stop_reason(interrupted: bool, error: PairbenchError | None) -> str:
    if interrupted:
        return "interrupted (Ctrl-C)"
    if error is not None:  # the first sentence; the advice that follows is printed with the error
        return f"stopped by an error: {str(error).split('. ')[0].rstrip('.')}"
    return ""


def _run_helper(executor: Executor, command: Command | None, option: str, timeout_ns: int | None) -> None:
    if command is None:
        return
    result = executor.run(command, timeout_ns=timeout_ns)
    if result.status == STATUS_TIMEOUT and timeout_ns:
        raise HelperCommandFailed(f"{option} command {command.text!r} failed: timed out after "
                                  f"{format_duration(timeout_ns, digits=3)} (--timeout)")
    if result.status != 0:
        raise HelperCommandFailed(f"{option} command {command.text!r} failed: {describe_status(result.status)}")


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
