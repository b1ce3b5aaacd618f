"""The machine metadata a file holds, for ``pairbench doctor --environment FILE``.

A result document (format ``/2``, or ``/1`` of pairbench 0.1) and its journal
keep the metadata of the machine they were measured on under ``environment``;
``doctor --json`` output keeps it there too (under ``machine`` when a
benchmark was validated); a bare object with a ``load_average`` is metadata
itself. Files are read as every result file is (``store.files``: size limit,
UTF-8, JSON without NaN, bounded nesting), a journal through the result reader.
"""

from __future__ import annotations

import os
from pathlib import Path

from pairbench.environment.activity import without_process_details
from pairbench.errors import ResultFileError, UsageError
from pairbench.store import checks
from pairbench.store.files import parse_json_text, read_text_file
from pairbench.store.journal import is_journal_text
from pairbench.store.resultfile import LEGACY_FORMAT, RESULT_FORMAT, read_result

MAX_METADATA_DEPTH = 64  # collected metadata nests 4 levels; deeper is not ours


def stored_environment(path: str | os.PathLike) -> dict:
    """The machine metadata in the file at ``path``.

    A file that cannot be read, is not JSON, holds NaN or is nested too deeply
    raises ``ResultFileError`` (exit 4), as for any result file. Only the
    metadata of a result document is needed, so the rest of it is not
    validated; values of the wrong type in the metadata make their checks
    ``unknown``. A file without metadata is a ``UsageError``. Busy processes
    are read as a result keeps them, a name and a CPU share: no PID or command
    line from a file is shown, nor named as one to pause.
    """
    path = Path(path)
    try:
        return dict(without_process_details(_environment_in(path)))
    except MemoryError:
        raise ResultFileError(f"{path}: not enough memory to read it") from None


def _environment_in(path: Path) -> dict:
    text = read_text_file(path)
    if is_journal_text(text):  # a run that did not finish: its journal
        return read_result(path).metadata()["environment"]
    document = _parse_json(path, text)
    if isinstance(document, dict) and document.get("format") in (RESULT_FORMAT, LEGACY_FORMAT):
        environment, executor = checks.environment(document.get("environment", {}), str(path))
        return {**environment, **({"executor": executor.to_dict()} if executor else {})}
    if not isinstance(document, dict):
        raise UsageError(f"{str(path)!r} holds no machine metadata (expected a JSON object)")
    machine = document.get("machine")
    for candidate in (document.get("environment"),
                      machine.get("environment") if isinstance(machine, dict) else None, document):
        if isinstance(candidate, dict) and "load_average" in candidate:
            return candidate
    raise UsageError(f"{str(path)!r} holds no machine metadata: no 'environment' with a 'load_average'")


def _parse_json(path: Path, text: str) -> object:
    """The JSON value of ``text`` as a result file is read, nested at most MAX_METADATA_DEPTH deep."""
    document = parse_json_text(path, text)
    if _depth(document) > MAX_METADATA_DEPTH:
        raise ResultFileError(f"{path}: nested more than {MAX_METADATA_DEPTH} levels deep")
    return document


def _depth(value) -> int:
    """How deeply ``value`` nests lists and objects (iterative: no recursion limit to hit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack += [(child, depth + 1) for child in children if isinstance(child, (dict, list))]
    return deepest
