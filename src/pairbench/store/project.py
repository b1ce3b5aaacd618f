"""The project's configuration: ``pairbench.toml``, or ``[tool.pairbench]`` in ``pyproject.toml``.

Found by looking from the working directory up to the git working tree's top
(or the file system's root): the first directory holding ``pairbench.toml``,
or a ``pyproject.toml`` with a ``[tool.pairbench]`` table, is the project's
root (``pairbench.toml`` wins when a directory has both). Without either, the
root is the git working tree's top, else the working directory.

    [store]
    url = "sqlite:///.pairbench/history.db"   # or postgresql://...; relative to the root
    machine = "ci-large"                       # name this machine (default: its fingerprint)

    [confirm]                   # how confirm and bisect build and measure a revision
    build = "make bench"        # run through sh -c in each revision's worktree
    bench = "build/bench"       # what pairbench bench measures, relative to the worktree; or
    # command = "build/app data.txt"   a command pairbench compare measures, run in the worktree
    # name = "app"                     the command's name in the history (run --name)
    build_timeout = "20m"

A ``[store]`` table turns storing on for ``run``, ``compare`` and ``bench``;
``--store URL`` and ``PAIRBENCH_STORE`` do too, and ``--no-store`` off. The
file is read defensively (a regular file of at most 1 MiB, TOML); an unknown
key or a value of the wrong type is a ``UsageError`` naming the file and key.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from pairbench.errors import ResultFileError, UsageError
from pairbench.frozen import frozen
from pairbench.store.database import DEFAULT_PATH
from pairbench.store.files import read_text_file
from pairbench.units import parse_duration_ns

CONFIG_NAME = "pairbench.toml"
PYPROJECT = "pyproject.toml"
STORE_VARIABLE = "PAIRBENCH_STORE"
MACHINE_VARIABLE = "PAIRBENCH_MACHINE"
MAX_CONFIG_BYTES = 1 << 20
DEFAULT_BUILD_TIMEOUT_NS = 30 * 60 * 10**9
_KEYS = {"store": {"url": str, "machine": str},
         "confirm": {"build": str, "bench": str, "command": str, "name": str, "build_timeout": str}}


@frozen
class Project:
    """The project: its ``root``, the config ``file`` read (None without one) and its settings."""

    root: Path
    file: Path | None = None
    store: Mapping | None = None  # the [store] table, None when there is none
    confirm: Mapping | None = None

    def store_url(self, given: str | None = None, *, environ: Mapping[str, str] = os.environ,
                  default: bool = False) -> tuple[str, Path] | None:
        """The store to use and the directory a relative SQLite path is relative to: ``given``
        (``--store``), else ``PAIRBENCH_STORE``, else the config's ``[store] url``; when none of
        them names one, the project's ``.pairbench/history.db`` if ``default``, else None (do not
        store)."""
        if given:
            return given, Path.cwd()
        if environ.get(STORE_VARIABLE):
            return environ[STORE_VARIABLE], Path.cwd()
        if self.store is not None or default:
            return (self.store or {}).get("url", DEFAULT_PATH), self.root
        return None

    def machine_name(self, environ: Mapping[str, str] = os.environ) -> str | None:
        """The machine's name the user gave (``PAIRBENCH_MACHINE``, else ``[store] machine``)."""
        from pairbench.environment.fingerprint import check_machine_name

        name = environ.get(MACHINE_VARIABLE) or (self.store or {}).get("machine")
        if not name:
            return None
        try:
            return check_machine_name(name)
        except ValueError as exc:
            where = MACHINE_VARIABLE if environ.get(MACHINE_VARIABLE) else f"{self.file}: [store] machine"
            raise UsageError(f"{where}: {exc}") from None

    def build_timeout_ns(self) -> int:
        text = (self.confirm or {}).get("build_timeout")
        return DEFAULT_BUILD_TIMEOUT_NS if text is None else parse_duration_ns(text, option="build_timeout")


def find_project(start: str | os.PathLike | None = None) -> Project:
    """The project the directory ``start`` (the working directory) is in (see the module docstring).

    The git working tree's top is the first directory up that holds ``.git`` (a
    directory, or a worktree's file): found without running git, since every
    ``run`` and ``compare`` looks for the config.
    """
    here = Path(start or os.getcwd()).resolve()
    for directory in (here, *here.parents):
        found = _config_in(directory)
        if found is not None:
            return found
        if (directory / ".git").exists():
            return Project(directory)
    return Project(here)


def _config_in(directory: Path) -> Project | None:
    own = directory / CONFIG_NAME
    if own.is_file():
        return _project(directory, own, _parse(own))
    pyproject = directory / PYPROJECT
    if pyproject.is_file():
        tool = _parse(pyproject).get("tool", {})
        if isinstance(tool, Mapping) and "pairbench" in tool:
            return _project(directory, pyproject, tool["pairbench"], prefix="tool.pairbench.")
    return None


def _parse(path: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        text = read_text_file(path, what="a TOML file")
    except ResultFileError as exc:
        raise UsageError(f"cannot read the project config: {exc}") from None
    if len(text) > MAX_CONFIG_BYTES:
        raise UsageError(f"{path}: larger than {MAX_CONFIG_BYTES // 1024} KiB; is it a project config?")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML ({exc}); fix it or remove it") from None
    except (RecursionError, MemoryError):
        raise UsageError(f"{path}: nested too deeply (or too large) to be a project config; fix it or "
                         "remove it") from None


def _project(root: Path, file: Path, table, prefix: str = "") -> Project:
    if not isinstance(table, Mapping):
        raise UsageError(f"{file}: [{prefix.rstrip('.') or 'pairbench'}] must be a table")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise UsageError(f"{file}: unknown section [{prefix}{unknown[0]}]; pairbench reads "
                         f"{', '.join(f'[{prefix}{k}]' for k in _KEYS)}")
    sections = {name: _section(file, prefix + name, table[name], _KEYS[name]) if name in table else None
                for name in _KEYS}
    return Project(root, file, **sections)


def _section(file: Path, name: str, value, keys: Mapping[str, type]) -> dict:
    if not isinstance(value, Mapping):
        raise UsageError(f"{file}: [{name}] must be a table")
    for key, item in value.items():
        if key not in keys:
            raise UsageError(f"{file}: unknown key {key!r} in [{name}]; it takes {', '.join(keys)}")
        if not isinstance(item, keys[key]) or (isinstance(item, str) and not item.strip()):
            raise UsageError(f"{file}: [{name}] {key} must be a non-empty string, got {item!r}")
    return dict(value)
