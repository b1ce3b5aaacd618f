"""Reading format /1 (pairbench 0.1): the one migration to today's model.

A /1 document holds one *variant* per command: its name, label and command,
and its samples columnar. It becomes a run of one benchmark, ``command``,
measured on one side per variant (same name, label and command, samples
unchanged). Its ``options`` become settings through the options' own parsers
(only the ones that shaped the measurement; where it wrote files is not
kept). Its ``warnings`` were text. Those pairbench 0.1 derived from the stored
machine metadata and samples (:func:`derived_in_v1`) are left out, because the
analysis derives them again, as typed notes; the others (what was noticed
while measuring: a renamed command, processes left running) become
``recorded`` notes holding their text. Its stored ``summaries`` and ``comparisons``
are not read: the analysis recomputes them from the samples, as ``show`` always
did. The /1 journal (``pairbench.journal/1``) holds the same header and one
line per sample, ``{"v": variant, "s": [the 13 columns]}``.
"""

from __future__ import annotations

from pairbench.command import ExecutorInfo
from pairbench.errors import ResultFileError
from pairbench.model import Run, Sample
from pairbench.notes import Note
from pairbench.settings import KINDS
from pairbench.store import checks
from pairbench.store.checks import expect, expect_str_list
from pairbench.store.document import build_run, sides_of, stored_settings

# /1 option -> the settings group it belongs to; the rest (json_path, exports, quiet, names) was where
# that invocation wrote, or is held by the sides
_SAMPLING_OPTIONS = {"warmup": "warmup", "runs": "runs", "min_runs": "min_runs", "max_runs": "max_runs",
                     "max_time": "max_time_ns", "timeout": "timeout_ns", "prepare": "prepare",
                     "setup": "setup", "cleanup": "cleanup", "shell": "shell", "output": "output",
                     "ignore_failure": "ignore_failure", "seed": "seed"}
_DECISION_OPTIONS = ("alpha", "threshold", "fail_on", "self_check")


def run_from_v1(doc: dict, source: str) -> Run:
    """A /1 result document as a run (see the module docstring)."""
    run = header_from_v1(doc, source)
    variants = expect(doc.get("variants"), list, source, "variants")
    samples = {}
    for i, variant in enumerate(variants):
        where = f"variants[{i}].samples"
        columns = expect(expect(variant, dict, source, f"variants[{i}]").get("samples"), dict, source, where)
        samples[(0, i)] = checks.samples_from_columns(columns, {}, source, where)
    return run.replace(samples=samples)


def header_from_v1(doc: dict, source: str) -> Run:
    """A /1 document's (or journal header's) run, without samples."""
    kind = doc.get("kind", "run")
    if kind not in KINDS:
        raise ResultFileError(f"{source}: unknown kind {kind!r}")
    sides = sides_of(doc.get("variants"), source, "variants")
    options = expect(doc.get("options", {}), dict, source, "options")
    stored = {"sampling": {new: options[old] for old, new in _SAMPLING_OPTIONS.items() if old in options},
              "decision": {key: options[key] for key in _DECISION_OPTIONS if key in options}}
    notes = tuple(Note("recorded", {"text": text})
                  for text in expect_str_list(doc.get("warnings", []), source, "warnings")
                  if not derived_in_v1(text))
    run = build_run(doc, source, kind=kind, sides=sides, settings=stored_settings(kind, sides, stored, source),
                    notes=notes)
    return run if run.executor else run.replace(executor=_executor_of_v1(run.environment))


def _executor_of_v1(environment) -> ExecutorInfo | None:
    """The first /1 documents kept the executor's RSS floor at ``environment.rss_floor_kib``; anything
    but a positive integer there counts as absent (those files were not checked when written)."""
    floor = environment.get("rss_floor_kib")
    return ExecutorInfo("", floor) if checks.is_int(floor) and floor > 0 else None


# how pairbench 0.1 ended the machine notes it derived at measuring time (its footnotes module)
_V1_MACHINE_ENDINGS = (
    "; compare's interleaved rounds cancel what the variants share, but its intervals widen",
    "; the commands were interleaved, so they shared it alike, but each summary absorbs it",
    "; a single command's summary absorbs all of it (compare's interleaving would cancel what variants share)",
)


def derived_in_v1(text: str) -> bool:
    """Whether a /1 warning is one pairbench 0.1 derived from the machine metadata or the samples
    (its words are fixed: they ended each machine note with what noise does to the numbers, and
    worded the untuned machine, the involuntary switches and the RSS floor as below)."""
    return (text.endswith(_V1_MACHINE_ENDINGS)
            or text.startswith("this machine is not set up for benchmarking (")
            or "involuntary context switches beyond its quietest sample's, in " in text
            or (text.startswith("max RSS of ") and "is at the smallest value the executor can report" in text))


def journal_sample_v1(record: dict, shape: tuple[int, int], path, number: int,
                      ) -> tuple[tuple[int, int], Sample, dict]:
    """One line of a /1 journal, ``{"v": variant, "s": [13 integers]}``, as (series, sample, metrics);
    ``shape`` is the run's (benchmarks, sides)."""
    index, values = record.get("v"), record.get("s")
    if not checks.is_int(index) or not isinstance(values, list):
        raise ResultFileError(f"{path}:{number}: a journal line must be {{\"v\": int, \"s\": [...]}}")
    if not 0 <= index < shape[1]:
        raise ResultFileError(f"{path}:{number}: variant index {index} out of range")
    return (0, index), checks.sample_row(values, f"{path}:{number}"), {}
