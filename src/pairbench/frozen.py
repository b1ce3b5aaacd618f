"""Frozen records: ``@frozen`` makes a class a frozen dataclass at half the cost of
``@dataclass(frozen=True)``, with the same behaviour.

Python before 3.13 compiles each method a dataclass generates with an ``exec`` of its own: six for a
frozen class (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``,
``__delattr__``), 85% of the 0.55 ms a class takes to make. pairbench defines some 170 such
records, and a compare makes about 70 of them before its first sample (benchmarks/results/startup.md).
``@frozen`` lets ``dataclasses`` generate only what must differ from class to class (``__init__``
and the frozen ``__setattr__`` and ``__delattr__``) and gives every record the same three functions
below instead, which read the fields from the class. They behave as the generated ones: ``repr``
shows the fields that have ``repr=True`` in order (``...`` for a record inside itself), equality
compares the fields that have ``compare=True`` with an instance of the very same class only, and
the hash is that of those fields' values (or of the fields ``field(hash=...)`` names), unless the
class defines its own. ``dataclasses.fields``, ``replace`` and ``asdict`` see a frozen dataclass.

Standard library only: the spawners and keepers import records made with it.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable

__all__ = ["frozen"]


def frozen(cls: type) -> type:
    """``cls`` as a frozen dataclass (``@dataclass(frozen=True)``), its ``repr``, equality and hash
    shared with every other record (see the module's docstring)."""
    own = cls.__dict__
    own_hash = own.get("__hash__", dataclasses.MISSING)
    # as dataclasses decides: a class that defines __eq__ gets __hash__ = None, which is not its own
    keeps_hash = not (own_hash is dataclasses.MISSING or (own_hash is None and "__eq__" in own))
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
