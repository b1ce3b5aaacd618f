"""CSV exports: every raw sample (one row each), and a one-row-per-series summary.

``pairbench report R.json --format csv -o samples.csv`` writes the samples to
``samples.csv`` and the summary beside it, to ``samples.summary.csv``
(:func:`summary_path`); ``--table samples|summary`` writes just one of them.

Samples: columns ``benchmark`` (its label, ``sort[n=10]``), ``side`` (its
name), ``label`` (baseline, candidate, self-check or empty), every column of
the result document (``model.SAMPLE_COLUMNS``: wall/user/sys time in ns over
all of the sample's iterations, max RSS in KiB, voluntary/involuntary context
switches, status, start_ns, seq, pair, slot, iterations, warmup), then one
column per float metric any series of the run has (empty where a series lacks
it), in execution order (``seq``). Warmup and failed samples are included and
marked (``warmup`` = 1, ``status`` != 0), as stored.

Summary: ``benchmark``, ``side``, ``label``, ``command``, every number of
``analysis.Summary`` (values per operation in the benchmark's unit), ``unit``,
``notes`` (the series' notes in words, ``; ``-joined), then, for a candidate,
its comparison with the baseline (change in percent). Values are written
exactly (integers as integers, floats as Python's shortest round-trip repr),
empty where undefined. Text (names, commands, notes) is shown as every report
shows it, with control characters made visible (``safe.visible``), quoted per
RFC 4180, and, following OWASP's guidance on CSV injection, a text cell that
a spreadsheet would run as a formula (one starting with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return) is prefixed with ``'``. Number cells are
never prefixed: ``-3.2`` stays a number.

Reference: OWASP, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection
"""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path

import numpy as np

from pairbench.analysis import Analysis, Comparison, Summary
from pairbench.model import SAMPLE_COLUMNS, Run
from pairbench.report.safe import visible
from pairbench.report.wording import word

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula
SAMPLE_HEADER = ("benchmark", "side", "label", *SAMPLE_COLUMNS)
_SUMMARY_FIELDS = tuple(f.name for f in dataclasses.fields(Summary)
                        if f.name not in ("benchmark", "side", "label", "command", "notes"))
COMPARISON_HEADER = ("baseline", "verdict", "negligible", "change_pct", "change_low_pct",
                     "change_high_pct", "change_confidence", "pvalue", "rounds", "rounds_needed", "metric")
SUMMARY_HEADER = ("benchmark", "side", "label", "command", *_SUMMARY_FIELDS, "unit", "notes",
                  *COMPARISON_HEADER)


def summary_path(path: str | Path) -> Path:
    """Where the summary goes beside samples written to ``path``: x.csv -> x.summary.csv."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        return path.with_name(path.stem + ".summary.csv")
    return path.with_name(path.name + ".summary.csv")


# --------------------------------------------------------------------------- samples


def metric_names(run: Run) -> tuple[str, ...]:
    """Every float metric any series of ``run`` has, in the order they first appear."""
    names = (name for _, _, samples in run.all_series() for name in samples.metrics)
    return tuple(dict.fromkeys(names))


def render_samples_csv(run: Run) -> str:
    """Every stored sample of ``run`` as CSV, in execution order. O(n log n); 1e6 rows in ~2 s."""
    metrics = metric_names(run)
    buffer = io.StringIO()
    buffer.write(_csv_record((*SAMPLE_HEADER, *_texts(*metrics))))
    series = [(b, s, samples) for b, s, samples in run.all_series() if len(samples)]
    if not series:
        return buffer.getvalue()
    prefixes = [_csv_record(_texts(run.benchmarks[b].label, run.sides[s].name, run.sides[s].label))[:-1] + ","
                for b, s, _ in series]
    owner = np.concatenate([np.full(len(samples), i) for i, (_, _, samples) in enumerate(series)])
    columns = [np.concatenate([samples[c] for _, _, samples in series]) for c in SAMPLE_COLUMNS]
    ranking = np.argsort(columns[list(SAMPLE_COLUMNS).index("seq")], kind="stable")
    lists = [np.asarray(prefixes, dtype=object)[owner[ranking]].tolist()]
    lists += [column[ranking].tolist() for column in columns]
    lists += [_metric_cells(name, [samples for _, _, samples in series])[ranking].tolist() for name in metrics]
    row_format = "%s" + ",".join(["%d"] * len(SAMPLE_COLUMNS) + ["%s"] * len(metrics))  # fastest in Python
    buffer.write("\n".join([row_format % row for row in zip(*lists, strict=True)]))
    buffer.write("\n")
    return buffer.getvalue()


def _metric_cells(name: str, series: list) -> np.ndarray:
    """The cells of metric ``name`` over ``series`` concatenated: exact floats, empty where absent."""
    parts = [np.asarray([repr(v) for v in samples.metrics[name].tolist()], dtype=object)
             if name in samples.metrics else np.full(len(samples), "", dtype=object)
             for samples in series]
    return np.concatenate(parts)


# --------------------------------------------------------------------------- summary


def render_summary_csv(run: Run, analysis: Analysis) -> str:
    """One row per series: its summary, and for a candidate its comparison with the baseline."""
    buffer = io.StringIO()
    buffer.write(_csv_record(SUMMARY_HEADER))
    by_candidate = {(c.benchmark, c.candidate): c for c in analysis.comparisons}
    for s in analysis.summaries:
        row = _texts(s.benchmark.label, s.side, s.label, s.command)
        row += [_cell(getattr(s, name)) for name in _SUMMARY_FIELDS]
        row += _texts(s.unit, "; ".join(word(note, s.unit) for note in s.notes))
        row += _comparison_cells(by_candidate.get((s.benchmark, s.side)))
        buffer.write(_csv_record(row))
    return buffer.getvalue()


def _comparison_cells(c: Comparison | None) -> list[str]:
    if c is None:
        return [""] * len(COMPARISON_HEADER)
    e = c.effect
    change = (e.estimate, e.low, e.high, e.confidence) if e else (None,) * 4
    values = (c.verdict.negligible, *change, c.pvalue, c.rounds, c.rounds_needed)
    return _texts(c.baseline, c.verdict.verdict) + [_cell(v) for v in values] + _texts(c.metric)


def _csv_record(fields) -> str:
    """One CSV record ending in a newline, with RFC 4180 quoting.

    The csv module quotes a field for the characters of its line terminator
    only, so with "\\n" a lone carriage return would go out bare and split
    the record in most readers; writing with "\\r\\n" and swapping the
    terminator quotes both.
    """
    line = io.StringIO()
    csv.writer(line, lineterminator="\r\n").writerow(fields)
    return line.getvalue()[:-2] + "\n"


def _texts(*values: str) -> list[str]:
    """Text cells (names, commands, notes) as shown: control characters visible (``safe.visible``),
    and a ``'`` before one a spreadsheet would run as a formula (see the module docstring)."""
    return [("'" if str(value).startswith(FORMULA_START) else "") + visible(value) for value in values]


def _cell(value) -> str:
    """A value as written: empty for None or a non-finite float, true/false, floats exactly
    (shortest round trip)."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return repr(float(value)) if np.isfinite(value) else ""
    return str(value)
