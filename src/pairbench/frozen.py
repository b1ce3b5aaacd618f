"""Frozen records: ``@frozen`` makes a class a frozen dataclass at under a third of the cost of
``@dataclass(frozen=True)`` (on Python 3.11), with the same behaviour.

Python before 3.13 compiles each method a dataclass generates with an ``exec`` of its own: six for a
frozen class (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``,
``__delattr__``), 85% of the 0.55 ms a class takes to make. pairbench defines some 170 such
records, and a compare makes about 70 of them before its first sample (benchmarks/results/startup.md).
``@frozen`` lets ``dataclasses`` generate only what must differ from class to class (``__init__``
and the frozen ``__setattr__`` and ``__delattr__``, 0.29 ms) and gives every record the same three
functions below instead, which read the fields from the class. They behave as the generated ones: ``repr``
shows the fields that have ``repr=True`` in order (``...`` for a record inside itself), equality
compares the fields that have ``compare=True`` with an instance of the very same class only, and
the hash is that of those fields' values (or of the fields ``field(hash=...)`` names), unless the
class defines its own. ``dataclasses.fields``, ``replace`` and ``asdict`` see a frozen dataclass.

The frozen ``__setattr__`` and ``__delattr__`` are called only when something tries to change a
record, which raises. On Python 3.10 to 3.12 ``@frozen`` has them compiled at that first call
rather than with the class (``_compiled_when_called``): the same functions, made by
``dataclasses`` from the same text, so a record costs one ``exec`` (its ``__init__``) instead of
three, 0.16 ms instead of 0.29. This reaches into ``dataclasses._create_fn``, which those versions
have and 3.13 replaced (it compiles a class's methods in one go), so it is done only where that
function is found with the signature it has there, only for the thread making a record, and is
undone as the record is made; elsewhere ``@frozen`` lets ``dataclasses`` compile them as usual.

Standard library only: the spawners and keepers import records made with it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import operator
import reprlib
import sys
import threading
from collections.abc import Callable

__all__ = ["frozen"]


def frozen(cls: type) -> type:
    """``cls`` as a frozen dataclass (``@dataclass(frozen=True)``), its ``repr``, equality and hash
    shared with every other record (see the module's docstring)."""
    own = cls.__dict__
    own_hash = own.get("__hash__", dataclasses.MISSING)
    # as dataclasses decides: a class that defines __eq__ gets __hash__ = None, which is not its own
    keeps_hash = not (own_hash is dataclasses.MISSING or (own_hash is None and "__eq__" in own))
    with _compiled_when_called():
        cls = dataclasses.dataclass(cls, frozen=True, eq=False, repr=False)
    fields = dataclasses.fields(cls)
    cls.__record_layout__ = _Layout(
        shown=tuple(f.name for f in fields if f.repr),
        compared=_values_of(tuple(f.name for f in fields if f.compare)),
        hashed=_values_of(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))),
    )
    if "__repr__" not in own:
        cls.__repr__ = _repr
    if "__eq__" not in own:
        cls.__eq__ = _eq
    if not keeps_hash:
        cls.__hash__ = _hash
    return cls


class _Layout:
    """What the shared methods read of a record's class: the names ``repr`` shows, and the values
    equality and the hash use (a tuple, as the generated methods build)."""

    __slots__ = ("shown", "compared", "hashed")

    def __init__(self, shown: tuple[str, ...], compared: Callable, hashed: Callable):
        self.shown, self.compared, self.hashed = shown, compared, hashed


def _values_of(names: tuple[str, ...]) -> Callable[[object], tuple]:
    """A function that returns an object's values of ``names`` as a tuple (attrgetter returns a
    bare value for one name and needs at least one)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        value_of = operator.attrgetter(names[0])
        return lambda record: (value_of(record),)
    return lambda record: ()


@reprlib.recursive_repr()
def _repr(self) -> str:
    shown = self.__class__.__record_layout__.shown
    return f"{self.__class__.__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"


def _eq(self, other) -> bool:
    if other.__class__ is self.__class__:
        values = self.__class__.__record_layout__.compared
        return values(self) == values(other)
    return NotImplemented


def _hash(self) -> int:
    return hash(self.__class__.__record_layout__.hashed(self))


_DEFERRED = ("__setattr__", "__delattr__")
_CREATE_FN_PARAMETERS = ["name", "args", "body", "globals", "locals", "return_type"]
_create_fn = getattr(dataclasses, "_create_fn", None)
if (sys.version_info >= (3, 13) or _create_fn is None
        or list(inspect.signature(_create_fn).parameters) != _CREATE_FN_PARAMETERS):
    _create_fn = None  # another dataclasses than the one this was written for: compile as usual
_swap = threading.Lock()
_making = threading.local()


@contextlib.contextmanager
def _compiled_when_called():
    """While a record is made in this thread, ``dataclasses`` makes its ``__setattr__`` and
    ``__delattr__`` as stand-ins that have the real ones compiled at their first call."""
    if _create_fn is None:
        yield
        return
    with _swap:
        previous, dataclasses._create_fn, _making.active = dataclasses._create_fn, _create_or_defer, True
        try:
            yield
        finally:
            dataclasses._create_fn, _making.active = previous, False


def _create_or_defer(name, args, body, **options):
    """``dataclasses._create_fn``, deferred for the frozen methods of a record made in this thread
    (another thread's dataclasses, made meanwhile, get theirs compiled at once)."""
    if name not in _DEFERRED or not getattr(_making, "active", False):
        return _create_fn(name, args, body, **options)
    made: list[Callable] = []

    def compiled() -> Callable:
        if not made:
            made.append(_create_fn(name, args, body, **options))
        return made[0]

    if name == "__setattr__":
        def __setattr__(self, attribute, value):
            return compiled()(self, attribute, value)

        return __setattr__

    def __delattr__(self, attribute):
        return compiled()(self, attribute)

    return __delattr__
