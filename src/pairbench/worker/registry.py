"""The ``@pairbench.benchmark`` decorator, the benchmarks it declares, and how they are named.

A *declaration* is what the decorator records while a benchmark file is
imported: the function, its options, and where it was written. :func:`resolve`
turns every declaration of a collection into :class:`Benchmark` records, one
per combination of parameters, with their final names:

- a benchmark is named by ``name=``, else by its function's ``__name__``;
- a default name that another collected file also declares (by either rule) is
  prefixed with its own file's stem, ``bench_sort.sort``, so that both can run;
  a name given with ``name=`` is kept as written;
- with ``params``, each combination is named ``base[k=v,k2=v2]`` (keys sorted,
  values rendered with ``str``), the protocol's parameter syntax;
- names still equal after that are an error (:class:`HarnessError`).

Standard library and ``pairbench.worker.protocol`` only: a worker must start fast.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from collections.abc import Callable, Iterator, Mapping

from pairbench.frozen import frozen
from pairbench.worker.protocol import MAX_BENCHMARKS, ProtocolError, check_name

_PARAM_VALUE = re.compile(r"[^\s\x00-\x1f\x7f\[\],=]+")
"""A rendered parameter value: no whitespace, control character, bracket, comma or ``=``."""


class HarnessError(Exception):
    """A benchmark that cannot be declared, collected or named; the message says which and why."""


@frozen
class Declaration:
    """One ``@pairbench.benchmark`` use, before naming and parameter expansion.

    ``params`` holds each key (sorted) with its values in the order given; ``file``,
    ``line`` and ``module`` say where the function was written and imported.
    """

    function: Callable
    name: str | None
    setup: Callable | None
    teardown: Callable | None
    params: tuple[tuple[str, tuple], ...]
    file: str
    line: int
    module: str

    @property
    def base_name(self) -> str:
        """The name before any file prefix and parameters: ``name=``, else the function's name."""
        return self.name if self.name is not None else _function_name(self.function)

    @property
    def where(self) -> str:
        """``qualname (file:line)``, for messages."""
        return f"{_qualname(self.function)} ({self.file}:{self.line})"

    def same_source(self, other: Declaration) -> bool:
        """Whether ``other`` is this declaration's source run again: the same file, line, function
        and name, imported under another module name (a benchmark file imported by another)."""
        return (self.file, self.line, _qualname(self.function), self.name) == (
            other.file, other.line, _qualname(other.function), other.name) and self.module != other.module


@frozen
class Benchmark:
    """A benchmark a worker serves: its protocol name, body, setup, teardown and parameters.

    The calling convention: with ``setup``, each sample calls ``setup(**params)``
    (untimed), the body ``function(argument)`` with what it returned, then
    ``teardown(argument)``; without ``setup``, the body is ``function(**params)``
    and the teardown ``teardown()``. With ``fresh_setup`` (pytest-benchmark's
    ``pedantic(setup=...)``), ``setup()`` prepares every call of the body
    afresh, untimed, and each call is timed on its own (``serve.timed_fresh_calls``).
    """

    name: str
    function: Callable
    setup: Callable | None = None
    teardown: Callable | None = None
    params: tuple[tuple[str, object], ...] = ()
    file: str = ""
    line: int = 0
    fresh_setup: bool = False

    @property
    def kwargs(self) -> dict[str, object]:
        """The parameters as keyword arguments."""
        return dict(self.params)


class Registry:
    """The declarations the decorator made, in order; a source imported twice declares once."""

    def __init__(self) -> None:
        self._declarations: list[Declaration] = []

    def add(self, declaration: Declaration) -> None:
        if not any(d.same_source(declaration) for d in self._declarations):
            self._declarations.append(declaration)

    def declarations(self) -> list[Declaration]:
        return list(self._declarations)


_registry = Registry()


@contextlib.contextmanager
def recording() -> Iterator[Registry]:
    """A fresh registry that receives every declaration made inside the ``with`` block."""
    global _registry
    previous, _registry = _registry, Registry()
    try:
        yield _registry
    finally:
        _registry = previous


# --------------------------------------------------------------------------- the decorator


def benchmark(function: Callable | None = None, /, *, name: str | None = None,
              params: Mapping[str, object] | None = None, setup: Callable | None = None,
              teardown: Callable | None = None):
    """Declare ``function`` a benchmark; usable bare (``@benchmark``) or with options.

    ``name`` replaces the function's name; ``params`` maps each parameter to a
    list of values (one benchmark per combination); ``setup(**params)`` runs
    before each sample, untimed, and its result is the body's one argument;
    ``teardown(argument)`` runs after it. The function is returned unchanged.
    How the benchmark is named: this module's docstring.
    """
    if function is None:
        return lambda f: benchmark(f, name=name, params=params, setup=setup, teardown=teardown)
    if not callable(function):
        raise HarnessError(f"@pairbench.benchmark takes options by keyword, got {function!r}: write "
                           f"@pairbench.benchmark(name={function!r}) to name a benchmark")
    _registry.add(declare(function, name=name, params=params, setup=setup, teardown=teardown))
    return function


def declare(function: Callable, *, name: str | None = None, params: Mapping[str, object] | None = None,
            setup: Callable | None = None, teardown: Callable | None = None) -> Declaration:
    """The declaration of ``function`` with these options, checked (``HarnessError`` naming it)."""
    file, line = _source(function)
    where = f"@pairbench.benchmark on {_qualname(function)} ({file}:{line})"
    for option, value in (("setup", setup), ("teardown", teardown)):
        if value is not None and not callable(value):
            raise HarnessError(f"{where}: `{option}` must be a function, got {value!r}")
    checked = _checked_params(params, where)
    if name is not None:
        _check_explicit_name(name, bool(checked), where)
    return Declaration(function, name, setup, teardown, checked, file, line,
                       getattr(function, "__module__", None) or "")


def _checked_params(params: Mapping[str, object] | None, where: str) -> tuple[tuple[str, tuple], ...]:
    """``params`` as sorted ``(key, values)`` pairs, each key an identifier and each value rendering
    to a valid, distinct name part."""
    if params is None:
        return ()
    if not isinstance(params, Mapping) or not params:
        raise HarnessError(f"{where}: `params` must be a non-empty dict of name -> list of values, "
                           f"got {params!r}")
    checked = []
    for key in sorted(params, key=str):
        if not isinstance(key, str) or not key.isidentifier():
            raise HarnessError(f"{where}: the parameter name {key!r} is not a Python identifier")
        checked.append((key, _checked_values(key, params[key], where)))
    return tuple(checked)


def _checked_values(key: str, values: object, where: str) -> tuple:
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, range)) or not values:
        raise HarnessError(f"{where}: `params[{key!r}]` must be a non-empty list of values, got {values!r}")
    rendered = [str(value) for value in values]
    for text, value in zip(rendered, values, strict=True):
        if not _PARAM_VALUE.fullmatch(text):
            raise HarnessError(f"{where}: the value {value!r} of parameter {key!r} renders as {text!r}, "
                               "which a benchmark name cannot hold (no whitespace, brackets, commas or '='); "
                               "use values whose str() is a plain word or number")
    duplicates = sorted({text for text in rendered if rendered.count(text) > 1})
    if duplicates:
        raise HarnessError(f"{where}: parameter {key!r} has values that render alike: {', '.join(duplicates)}")
    return tuple(values)


def _check_explicit_name(name: object, has_params: bool, where: str) -> None:
    if not isinstance(name, str):
        raise HarnessError(f"{where}: `name` must be a string, got {name!r}")
    try:
        check_name(name)
    except ProtocolError as exc:
        raise HarnessError(f"{where}: the name {name!r} is invalid: {exc}") from None
    if has_params and ("[" in name or "]" in name):
        raise HarnessError(f"{where}: the name {name!r} holds brackets, which `params` adds: "
                           "give the base name only")


# --------------------------------------------------------------------------- naming


def resolve(declarations: list[Declaration]) -> list[Benchmark]:
    """The benchmarks of ``declarations``, named by the rules in this module's docstring, in
    declaration order; ``HarnessError`` for an invalid or duplicate name, or too many."""
    files_of: dict[str, set[str]] = {}
    for declaration in declarations:
        files_of.setdefault(declaration.base_name, set()).add(declaration.file)
    benchmarks = []
    for declaration in declarations:
        base = declaration.base_name
        if declaration.name is None and len(files_of[base]) > 1:
            base = f"{_stem(declaration.file)}.{base}"
        benchmarks.extend(_expanded(declaration, base))
    _check_unique(benchmarks)
    if len(benchmarks) > MAX_BENCHMARKS:
        raise HarnessError(f"{len(benchmarks)} benchmarks were collected, more than a worker may serve "
                           f"({MAX_BENCHMARKS}): collect fewer files or fewer parameter values")
    return benchmarks


def _expanded(declaration: Declaration, base: str) -> list[Benchmark]:
    """One benchmark per combination of ``declaration``'s parameters (one without any)."""
    keys = [key for key, _ in declaration.params]
    result = []
    for values in itertools.product(*(values for _, values in declaration.params)):
        params = tuple(zip(keys, values, strict=True))
        name = base + (f"[{','.join(f'{k}={v}' for k, v in params)}]" if params else "")
        try:
            check_name(name)
        except ProtocolError as exc:
            raise HarnessError(f"{declaration.where}: the benchmark name {name[:80]!r} is invalid: {exc}; "
                               "give it a shorter name with @pairbench.benchmark(name=...)") from None
        result.append(Benchmark(name, declaration.function, declaration.setup, declaration.teardown,
                                params, declaration.file, declaration.line))
    return result


def _check_unique(benchmarks: list[Benchmark]) -> None:
    seen: dict[str, Benchmark] = {}
    for bench in benchmarks:
        first = seen.setdefault(bench.name, bench)
        if first is not bench:
            raise HarnessError(
                f"two benchmarks are named {bench.name!r}: {_qualname(first.function)} ({first.file}:"
                f"{first.line}) and {_qualname(bench.function)} ({bench.file}:{bench.line}); give one of "
                "them another name with @pairbench.benchmark(name=...)")


# --------------------------------------------------------------------------- helpers


def _source(function: Callable) -> tuple[str, int]:
    """The file and first line where ``function`` was written (``"<unknown>", 0`` if not Python code)."""
    code = getattr(function, "__code__", None)
    if code is not None:
        return code.co_filename, code.co_firstlineno
    return "<unknown>", 0


def _function_name(function: Callable) -> str:
    return getattr(function, "__name__", None) or type(function).__name__


def _qualname(function: Callable) -> str:
    return getattr(function, "__qualname__", None) or _function_name(function)


def _stem(file: str) -> str:
    return os.path.splitext(os.path.basename(file))[0]
