"""A session's result: the run it starts, the run it finishes, the analysis, and the result file.

Every session ends the same way, here: the samples the sampler took
become the :class:`~pairbench.model.Run` (:func:`finished`), ``analyse(run)``
derives everything from them, and :func:`save` writes the result document
atomically, the run and then the analysis as records for other tools
(``analysis.derived``). Every result document pairbench writes (a measuring
command's, ``compare_functions``', the pytest plugin's, ``import``'s,
``merge``'s) is written by :func:`save`, or to standard output as
:func:`result_document` gives it. The journal (``RESULT.json.partial``, a sink
of the sampler) holds every sample until then: a result file that cannot be
written keeps it, and says where. Nothing here prints.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pairbench import __version__
from pairbench.errors import PairbenchError, ResultFileError, Terminated, interruption_name
from pairbench.frozen import frozen
from pairbench.measure.executor import ExecutorInfo
from pairbench.measure.sampler import Sink
from pairbench.model import BenchmarkKey, Run, Samples, Side, utc_now
from pairbench.notes import Note
from pairbench.settings import Settings
from pairbench.store.journal import Journal, journal_path

if TYPE_CHECKING:  # the analysis and the result file's writer load after the last sample
    from pairbench.analysis import Analysis

ProgressFactory = Callable[[int, str, int, object], "Sink | None"]
"""The progress display of a session, one per benchmark measured: ``(benchmark index, its label
("" for a command's), how many, its stopping rule or None) -> the sink it shows, or None``."""


@frozen
class Outcome:
    """How a session ended: the run (always), its analysis (None only if analysing failed), the
    error or interruption that ended it early (``signum``: the signal that interrupted, SIGINT for
    Ctrl-C), and the error that kept the result file from being written (the journal then holds the
    samples)."""

    run: Run
    analysis: Analysis | None
    error: PairbenchError | None = None
    interrupted: bool = False
    result_error: ResultFileError | None = None
    signum: int = signal.SIGINT


def new_run(kind: str, settings: Settings, sides: tuple[Side, ...], benchmarks: tuple[BenchmarkKey, ...],
            environment: Mapping, *, notes: Sequence[Note] = (), **parts) -> Run:
    """The run a session starts: what it will measure, on which machine, nothing measured yet."""
    return Run(kind=kind, sides=sides, settings=settings, tool_version=__version__, started_at=utc_now(),
               benchmarks=benchmarks, environment=dict(environment), notes=tuple(notes), state="running",
               **parts)


def finished(run: Run, samples: Mapping[tuple[int, int], Samples], executor: ExecutorInfo, *,
             stopped_because: str, notes: Sequence[Note] = (), error: PairbenchError | None = None,
             interruption: BaseException | None = None) -> Run:
    """``run`` with its samples, how it ended, what measured it and what was noticed meanwhile."""
    state = "interrupted" if interruption is not None else ("failed" if error else "complete")
    return run.replace(samples=dict(samples), state=state, finished_at=utc_now(), stopped_because=stopped_because,
                       executor=executor, notes=(*run.notes, *executor.notes, *notes))


def journal_for(path: str | None, run: Run) -> RunJournal | None:
    """The journal of a run writing its result to ``path`` (None: no file, or standard output)."""
    return RunJournal(path, run) if path and path != "-" else None


def conclude(run: Run, journal: RunJournal | None, *,
             error: PairbenchError | None = None, interruption: KeyboardInterrupt | None = None) -> Outcome:
    """Analyse the finished ``run`` and save it where its journal is (a failed analysis still
    leaves the raw samples written)."""
    analysis = result_error = None
    try:
        analysis = analyse(run)
    finally:
        if journal:
            result_error = journal.save(run, analysis)
    return Outcome(run, analysis, error, interruption is not None, result_error,
                   getattr(interruption, "signum", signal.SIGINT))


def analyse(run: Run) -> Analysis:
    """``analysis.analyse(run)``. The analysis (numpy, the statistics) is imported here, after the
    last sample: nothing a session's first sample does not need loads before it."""
    from pairbench.analysis import analyse as analysed

    return analysed(run)


def save(run: Run, analysis: Analysis | None, path: str | os.PathLike) -> None:
    """Write ``run`` to ``path`` atomically, with its analysis as records for other tools (when
    there is one)."""
    from pairbench.analysis.derived import derived_records
    from pairbench.store.resultfile import write_result

    write_result(run, path, derived_records(run, analysis) if analysis is not None else None)


def result_document(run: Run, analysis: Analysis | None) -> dict:
    """The result document :func:`save` writes, as JSON-ready data (for standard output)."""
    from pairbench.analysis.derived import derived_records
    from pairbench.store.resultfile import run_to_document

    return run_to_document(run, derived_records(run, analysis) if analysis is not None else None)


class RunJournal(Journal):
    """The run's journal and, at the end, its result file; OS errors become ``ResultFileError``."""

    def __init__(self, path: str, skeleton: Run):
        self.result_path = path
        self.broken = False  # an append failed: the journal lacks the later samples
        try:
            super().__init__(path, skeleton)  # removes what it created if its header fails
        except OSError as exc:
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

    def save(self, run: Run, analysis: Analysis | None) -> ResultFileError | None:
        """Write ``run`` atomically and remove the journal; on an OS error keep the journal and say so."""
        try:
            with _ignoring_interrupts():  # a second Ctrl-C must not leave half a result
                save(run, analysis, self.result_path)
        except (OSError, ResultFileError) as exc:  # ResultFileError: it could not be read back
            self._close(remove=False)
            why = _why(exc) if isinstance(exc, OSError) else str(exc).removeprefix(f"{self.result_path}: ")
            return ResultFileError(f"{self.result_path}: cannot write the result ({why}); {self._where(run)}")
        self._close(remove=True)
        return None

    def _where(self, run: Run) -> str:
        total = sum(len(s) for s in run.samples.values())
        if not self.is_in_place():  # never point to a journal that is not there (or not ours)
            what = "is gone too (was its directory removed?)" if not self.path.exists() else \
                "was replaced by another file"
            return (f"the journal {self.path} {what}, so these samples were not saved; run again "
                    "with --json in a directory that stays")
        if self.broken or self.written < total:
            return f"the journal {self.path} holds the first {self.written} of the {total} samples"
        return f"all {total} samples are in the journal {self.path} (`pairbench show {self.path}` reads it)"

    def _close(self, *, remove: bool) -> None:
        with contextlib.suppress(OSError):  # its last sync failed: what it holds was flushed line by line
            self.close(remove=remove)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def early_stop_reason(interruption: BaseException | None, error: PairbenchError | None) -> str:
    """Why sampling ended before its plan did: Ctrl-C (or a signal), or the first sentence of an
    error (the advice that follows is printed with the error)."""
    if interruption is not None:
        return f"interrupted ({interruption_name(interruption)})"
    if error is not None:
        return f"stopped by an error: {str(error).split('. ')[0].rstrip('.')}"
    return ""


def interruption_note(interruption: KeyboardInterrupt, command: str | None) -> Note:
    """A run cut short while ``command`` (--cleanup) ran: said among the run's notes."""
    data = {"command": command}
    if isinstance(interruption, Terminated):
        data["signal"] = interruption_name(interruption)
    return Note("cleanup-interrupted", data)


_INTERRUPTING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _ignoring_interrupts():
    """Let a second Ctrl-C, SIGTERM or SIGHUP not cut the atomic write of the result short (main
    thread only).

    Only that write, which is short and bounded, is guarded: --setup and --cleanup
    stay interruptible, so a hanging one cannot make pairbench unkillable.
    """
    try:
        previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in _INTERRUPTING_SIGNALS}
    except ValueError:  # not the main thread: nothing to guard
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
