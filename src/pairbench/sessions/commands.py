"""A measurement session: sides from the settings, setup, sampling, cleanup, analysis, the result file.

This is where "lose nothing" is kept: every sample is journaled as it arrives;
a failed command, a failed helper command or Ctrl-C (or SIGTERM or SIGHUP,
which the CLI turns into ``errors.Terminated``, a ``KeyboardInterrupt``) ends
sampling, but the samples taken so far become a :class:`~pairbench.model.Run`
(state ``failed`` or ``interrupted``) that is analysed and written like any
other. Ctrl-C during --cleanup is a note of the run, not a loss. A result file that cannot be
written is reported in the :class:`Outcome`, with the journal (kept) holding
the samples. Nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pairbench import held_signals
from pairbench.errors import PairbenchError
from pairbench.measure.commandline import (
    DEFAULT_SHELL,
    Shell,
    measure_shell_startup,
    parse_command,
    resolve_shell,
    split_words,
    substitute,
    with_input,
)
from pairbench.measure.drain import DrainedPipe, PipedExecutor
from pairbench.measure.executor import Executor, OutputPolicy
from pairbench.measure.sampler import Sampler, SamplingPlan, StopRule
from pairbench.measure.targets import CommandTarget, run_helper
from pairbench.model import (
    ANCHOR_LABEL,
    BenchmarkKey,
    Command,
    Run,
    ShellOverhead,
    Side,
)
from pairbench.notes import Note
from pairbench.sessions.activity import ActivityReading, activity_pending
from pairbench.sessions.result import (
    Outcome,
    ProgressFactory,
    conclude,
    early_stop_reason,
    finished,
    interruption_note,
    journal_for,
    new_run,
)
from pairbench.settings import COUNT_METRIC_CHOICES, Settings

if TYPE_CHECKING:
    from pairbench.analysis.criteria import Boundary, SizedChange
    from pairbench.analysis.stopping import StoppingRule
    from pairbench.environment.activity import ActivityWindow

ExecutorFactory = Callable[[OutputPolicy], Executor]
SELF_CHECK = "self-check"


def sides_of(settings: Settings, anchored: bool = False) -> tuple[tuple[Side, ...], tuple[Note, ...]]:
    """The sides ``settings`` measure, and the notes of naming them.

    ``run``: one side per command. ``compare``: the baseline, the candidates,
    and with ``--self-check`` a copy of the baseline named "NAME (copy)"; ``anchored``: the last
    command is an anchor (``record``: a second baseline the candidate is compared with too); one
    command alone (a branch's first record) is a lone side, as ``run``'s, which history shows.
    Without ``--name`` a side is named by its command text, a repeat getting a
    " (2)" suffix (with a note): reports tell sides apart by name. With
    parameters (``-P``/``-L``) a side's command is its template (``sleep {t}``):
    each parameter combination is a benchmark the side runs (see
    :meth:`Session.targets`). Raises ``UsageError`` (``ProgramNotFound`` among them)
    before anything runs.
    """
    commands = list(settings.commands)
    names = list(settings.names or settings.commands)
    labels = [""] * len(commands)
    if settings.kind == "compare" and len(commands) > 1:  # one command (a first record): a lone side
        labels = ["baseline"] + ["candidate"] * (len(commands) - 1)
        if anchored:
            labels[-1] = ANCHOR_LABEL
        if settings.decision.self_check:
            commands.append(commands[0])
            names.append(f"{names[0]} (copy)")
            labels.append(SELF_CHECK)
    names, renamed = distinct_names(names)
    shell = resolve_shell(settings.sampling.shell)
    sides = tuple(Side(name, _side_command(text, shell, settings), label)
                  for name, text, label in zip(names, commands, labels, strict=True))
    return sides, renamed


def _side_command(text: str, shell: Shell | None, settings: Settings) -> Command:
    """What a side runs: its command, or with parameters its template (the program resolved later,
    per benchmark, since a parameter may name it)."""
    if not settings.sampling.parameters:
        return _command(text, shell, settings.sampling.input)
    command = shell.command(text) if shell else Command(text, tuple(split_words(text)), shell=False)
    return with_input(command, settings.sampling.input) if settings.sampling.input else command


def _command(text: str, shell: Shell | None, input_path: str | None) -> Command:
    command = parse_command(text, shell=shell)
    return with_input(command, input_path) if input_path else command


def benchmarks_of(settings: Settings) -> tuple[BenchmarkKey, ...]:
    """One benchmark per parameter combination (``command[n=10]``); without parameters the one
    benchmark ``command``."""
    return tuple(BenchmarkKey("command", tuple(sorted(combination)))
                 for combination in settings.sampling.combinations())


def _helper(text: str | None, combinations, shell: Shell) -> Command | None:
    """A --setup or --cleanup command, run once: through the shell, for each distinct text its
    parameters give, in order (joined by &&, so the first failure stops it)."""
    if not text:
        return None
    texts = list(dict.fromkeys(substitute(text, combination) for combination in combinations))
    return parse_command(" && ".join(texts), shell=shell)


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


SHORT_NAME = 24  # characters: a default side name longer than this is cut to what tells the sides apart


def path_names(texts: Sequence[str]) -> tuple[str, ...]:
    """Default names of sides given as program or file paths (``bench``): the shortest run of
    trailing path components that tells each side from the others (``istrconv-a.test``,
    ``old/bench``); when that is longer than :data:`SHORT_NAME` characters, the components in which
    the paths differ (``itoa-a`` for ``./itoa-a/target/release/deps/bench-af32dd66837da667`` against
    ``./itoa-b/...``). Texts that are not single words (a program with arguments) keep their text;
    sides that are one path are named by its file name (and made distinct by ``distinct_names``).
    """
    if any(len(text.split()) != 1 for text in texts):
        return tuple(texts)
    parts = [tuple(part for part in os.path.abspath(text).split("/") if part) or ("/",) for text in texts]
    if len(set(parts)) < len(parts):
        return tuple(p[-1] for p in parts)
    suffixes = _distinct_suffixes(parts)
    if max(len(name) for name in suffixes) <= SHORT_NAME:
        return suffixes
    middles = _differing_components(parts)
    return middles if all(middles) else suffixes


def _distinct_suffixes(parts: list[tuple[str, ...]]) -> tuple[str, ...]:
    for k in range(1, max(len(p) for p in parts) + 1):
        names = tuple("/".join(p[-k:]) for p in parts)
        if len(set(names)) == len(names):
            return names
    raise AssertionError("distinct paths have distinct suffixes")


def _differing_components(parts: list[tuple[str, ...]]) -> tuple[str, ...]:
    """Each path without the leading and trailing components every path shares ('' when none is left)."""
    shortest = min(len(p) for p in parts)
    head = next((i for i in range(shortest) if len({p[i] for p in parts}) > 1), shortest)
    tail = next((i for i in range(shortest - head) if len({p[-1 - i] for p in parts}) > 1), shortest - head)
    return tuple("/".join(p[head:len(p) - tail]) for p in parts)


class Session:
    """One ``run`` or ``compare``: built from settings (commands checked), then :meth:`measure`."""

    def __init__(self, settings: Settings, executor_factory: ExecutorFactory, environment: Mapping, *,
                 boundary: Boundary | SizedChange | None = None, anchored: bool = False,
                 activity: ActivityWindow | None = None):
        """``boundary``: what ``bisect`` decides the comparison against, instead of its verdict (or
        ``record``'s ``SizedChange``: what a verdict of change waits for);
        ``anchored``: the last command is an anchor (``sides_of``); ``activity``: the machine's
        activity window, read between the samples once it has passed when ``environment`` leaves it
        to be read (``sessions.activity``)."""
        self.settings = settings
        self.boundary = boundary
        self.sides, self._naming_notes = sides_of(settings, anchored)
        self.benchmarks = benchmarks_of(settings)
        sampling = settings.sampling
        self._shell = resolve_shell(sampling.shell)
        helper_shell, combinations = self._shell or DEFAULT_SHELL, sampling.combinations()
        self._helpers = {"--setup": _helper(sampling.setup, combinations, helper_shell),
                         "--cleanup": _helper(sampling.cleanup, combinations, helper_shell)}
        self.targets = self._targets(helper_shell)  # every command checked before anything runs
        self.counter = self._counter()
        self._executor_factory = executor_factory
        self._environment = dict(environment)
        self._activity = ActivityReading(activity) if activity and activity_pending(environment) else None
        self.skeleton = new_run(settings.kind, settings, self.sides, self.benchmarks, self._environment,
                                notes=self._naming_notes)
        self.rule: StoppingRule | None = None  # made by measure, as the spawner starts

    def _counter(self):
        """What counts a count metric's instructions (``measure.counters``, loaded only then: its
        modules are not what a timed sample needs), None for a time; a Go program is refused
        under Callgrind."""
        if self.settings.decision.metric not in COUNT_METRIC_CHOICES:
            return None
        from pairbench.measure.counters import choose_counter, refuse_go

        counter = choose_counter(self.settings.decision.metric)
        if counter.kind == "callgrind":
            for target in self.targets:
                refuse_go(target.command.argv[0] if not target.command.shell else target.command.text)
        return counter

    def _counted_targets(self) -> tuple[tuple, list]:
        """The targets as sampled: counted by the count metric's counter, with the private
        directories that receive the counts (removed when the run ends); for a time, the commands."""
        if self.counter is None:
            return self.targets, []
        from pairbench.measure.counters import counted_targets

        return counted_targets(self.targets, self.counter)

    def _targets(self, helper_shell: Shell) -> tuple[CommandTarget, ...]:
        """One target per side and benchmark, side-major (target t is of side t // benchmarks):
        the command with its parameters, and the --prepare and --conclude given for it."""
        sampling, combinations = self.settings.sampling, self.settings.sampling.combinations()
        targets = []
        for s, side in enumerate(self.sides):
            given = s if s < len(self.settings.commands) else 0  # the self-check copy is the baseline's
            for b, combination in enumerate(combinations):
                command = (_command(substitute(self.settings.commands[given], combination), self._shell,
                                    sampling.input) if combination else side.command)
                prepare, conclude = (
                    parse_command(substitute(text, combination), shell=helper_shell) if text else None
                    for text in (sampling.helper_for("prepare", given), sampling.helper_for("conclude", given)))
                name = side.name if len(combinations) == 1 else f"{side.name} {self.benchmarks[b].label}"
                targets.append(CommandTarget(command, name, b, prepare=prepare, conclude=conclude))
        return tuple(targets)

    def _executor(self) -> Executor:
        """The executor the commands run with; --output pipe gets a pipe drained until it closes."""
        output = self.settings.sampling.output
        if output != "pipe":
            return self._executor_factory(OutputPolicy.parse(output))
        pipe = DrainedPipe()
        try:
            return PipedExecutor(self._executor_factory(OutputPolicy("file", pipe.path)), pipe)
        except BaseException:
            pipe.close()
            raise

    def _stopping_rule(self) -> StoppingRule | None:
        """The rule that decides a comparison as its rounds arrive, imported with what it computes
        with (numpy, the sign test, the confidence sequence) before the first sample, so that no
        import runs beside a sample; a ``run`` compares nothing and loads none of it."""
        if self.settings.kind == "run":
            return None
        from pairbench.analysis import compares, comparison_pairs, criteria_of
        from pairbench.analysis.stopping import StoppingRule

        if not compares(self.skeleton):
            return None
        return StoppingRule(criteria_of(self.skeleton), pairs=comparison_pairs(self.skeleton),
                            benchmarks=len(self.benchmarks),
                            boundary=self.boundary)

    def measure(self, progress: ProgressFactory | None = None, *,
                beside_warmup: Callable[[], object] | None = None) -> Outcome:
        """Measure to completion, failure or Ctrl-C; analyse; write the result (``--json``). The
        sampler reports to the journal, the stopping rule and the display ``progress`` makes. What
        the rule computes with was imported with it (``analysis.stopping``): nothing is imported
        beside a measured sample; ``beside_warmup`` may load what follows the last one beside the
        warmup rounds (``Sampler``)."""
        skeleton = self.skeleton.replace(shell_overhead=self._shell_overhead())
        executor = self._executor()  # the spawner starts while the rule loads what it computes with
        try:
            self.rule = self._stopping_rule()
            display = progress(0, "", 1, self.rule) if progress else None
            journal = journal_for(self.settings.outputs.json_path, skeleton)
        except BaseException:  # refused (an unfinished run's journal is there) or unwritable: nothing ran
            executor.close()
            raise
        sinks = [sink for sink in (journal, self.rule, display, self._activity) if sink]
        targets, directories = self._counted_targets()
        sampler = Sampler(executor, self._plan(targets), sinks=sinks, beside_warmup=beside_warmup,
                          decide=self.rule.decide if self.rule and self.settings.sampling.adaptive else None)
        try:
            error, interruption = self._sample(executor, sampler)
        finally:  # also when something unexpected escapes: --cleanup always runs
            cleanup_error, cleanup_interruption, cleanup_note = self._clean_up(executor)
            for directory in directories:
                directory.remove()
        interruption, error = interruption or cleanup_interruption, error or cleanup_error
        skeleton, interruption = self._with_activity(skeleton, interruption)
        run = finished(skeleton, sampler.series(), executor.info(), error=error, interruption=interruption,
                       stopped_because=sampler.stopped_because or early_stop_reason(interruption, error),
                       notes=(*sampler.notes, *([cleanup_note] if cleanup_note else []),
                              *([Note("counted-by", self.counter.to_note_data())] if self.counter else [])))
        return conclude(run, journal, error=error, interruption=interruption)

    def _with_activity(self, skeleton: Run, interruption: KeyboardInterrupt | None
                       ) -> tuple[Run, KeyboardInterrupt | None]:
        """``skeleton`` with the machine's activity, when it was left to be read after sampling
        began; a Ctrl-C meanwhile leaves it unread and interrupts the run, losing nothing."""
        if self._activity is None:
            return skeleton, interruption
        try:
            return skeleton.replace(environment=self._activity.finish(skeleton.environment)), interruption
        except KeyboardInterrupt as exc:
            return skeleton, interruption or exc

    def _plan(self, targets) -> SamplingPlan:
        sampling = self.settings.sampling
        return SamplingPlan(
            targets=targets,  # each with its --prepare and --conclude (counted, for a count metric)
            stop=StopRule(sampling.runs, sampling.min_runs, sampling.max_runs, sampling.max_time_ns),
            warmup_rounds=sampling.warmup, timeout_ns=sampling.timeout_ns,
            ignore_failure=sampling.ignore_failure, seed=sampling.seed,
            sides=tuple(t // len(self.benchmarks) for t in range(len(self.targets))))

    def _shell_overhead(self) -> ShellOverhead | None:
        """The start-up of the shell the commands run through (--shell, or sh for --input), or None."""
        shell = self._shell or (DEFAULT_SHELL if self.settings.sampling.input else None)
        if shell is None:
            return None
        executor = self._executor_factory(OutputPolicy())
        try:
            startup = measure_shell_startup(executor, shell=shell)
        finally:
            executor.close()
        return ShellOverhead(startup.median_ns, startup.min_ns, startup.n, shell.name)

    def _sample(self, executor: Executor, sampler: Sampler
                ) -> tuple[PairbenchError | None, KeyboardInterrupt | None]:
        """Run --setup, then sample; return the error that ended them early, or the interruption
        (Ctrl-C, or ``Terminated`` for SIGTERM and SIGHUP)."""
        try:
            held_signals.release()  # one held while pairbench started ends the run here, journal written
            run_helper(executor, self._helpers["--setup"], "--setup", self.settings.sampling.timeout_ns)
            sampler.run()
        except PairbenchError as exc:
            return exc, None
        except KeyboardInterrupt as exc:
            return None, exc
        return None, None

    def _clean_up(self, executor: Executor
                  ) -> tuple[PairbenchError | None, KeyboardInterrupt | None, Note | None]:
        """Run --cleanup (Ctrl-C, SIGTERM, SIGHUP and --timeout can end it) and close the executor.

        Returns the cleanup's error, the interruption that cut it short and a
        note saying so: the result is still written, with the note among its notes.
        """
        command = self._helpers["--cleanup"]
        error = interruption = None
        try:
            run_helper(executor, command, "--cleanup", self.settings.sampling.timeout_ns)
        except PairbenchError as exc:
            error = exc
        except KeyboardInterrupt as exc:
            interruption, cut = exc, command.text if command else None
        try:
            executor.close()
        except KeyboardInterrupt as exc:
            if interruption is None:
                interruption, cut = exc, None
        if interruption is None:
            return error, None, None
        return error, interruption, interruption_note(interruption, cut)
