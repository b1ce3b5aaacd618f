"""``@frozen`` records behave as ``@dataclass(frozen=True)`` ones: the standard library's own
dataclass is the reference every behaviour here is held against."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import threading

import pytest

from pairbench import frozen as records
from pairbench.frozen import frozen


def twins(body: dict, bases: tuple = ()) -> tuple[type, type]:
    """The same class body made a record with ``@frozen`` and with the standard library."""
    def make(decorate, suffix):
        return decorate(type("Point" + suffix, bases, {"__module__": __name__, **body}))
    return make(frozen, ""), make(dataclasses.dataclass(frozen=True), "")


POINT = {"__annotations__": {"x": "int", "y": "float", "label": "str"}, "label": "p"}


@pytest.mark.parametrize("values", [(1, 2.0), (0, float("nan"), "q"), (-3, 1e300, "a\nb")])
def test_repr_equality_and_hash_match_the_standard_dataclass(values):
    ours, reference = twins(POINT)
    a, b = ours(*values), reference(*values)
    assert repr(a) == repr(b)
    assert (a == ours(*values)) == (b == reference(*values))  # NaN: one object, so equal in both (tuples compare identity first)
    assert hash(a) == hash(b)
    assert dataclasses.astuple(a) == dataclasses.astuple(b)


def test_equality_needs_the_very_same_class():
    ours, _ = twins(POINT)
    child = frozen(type("Child", (ours,), {"__module__": __name__}))
    assert ours(1, 2.0) == ours(1, 2.0)
    assert ours(1, 2.0) != ours(1, 3.0)
    assert ours(1, 2.0) != child(1, 2.0)
    assert ours(1, 2.0) != (1, 2.0, "p")
    assert ours(1, 2.0).__eq__((1, 2.0, "p")) is NotImplemented


def test_fields_left_out_of_repr_or_comparison_are_left_out_as_the_dataclass_does():
    body = {"__annotations__": {"name": "str", "secret": "str", "cache": "int", "key": "int"},
            "secret": dataclasses.field(default="s", repr=False),
            "cache": dataclasses.field(default=0, compare=False),
            "key": dataclasses.field(default=1, hash=False)}
    ours, reference = twins(body)
    for args in [("a",), ("a", "t", 5, 2)]:
        assert repr(ours(*args)) == repr(reference(*args))
        assert hash(ours(*args)) == hash(reference(*args))
    assert ours("a", cache=1) == ours("a", cache=2)
    assert ours("a", key=1) != ours("a", key=2)


def test_a_record_without_fields_or_with_one_compares_and_hashes_as_the_dataclass():
    for body in ({"__annotations__": {}}, {"__annotations__": {"only": "int"}}):
        ours, reference = twins(body)
        args = (7,) * len(body["__annotations__"])
        assert ours(*args) == ours(*args)
        assert hash(ours(*args)) == hash(reference(*args))
        assert repr(ours(*args)) == repr(reference(*args))


def _refusals(point) -> list[str]:
    """What changing ``point`` raises, twice each (the first call may compile the method)."""
    said = []
    for change in [lambda: setattr(point, "x", 2), lambda: delattr(point, "y"),
                   lambda: setattr(point, "other", 1)] * 2:
        with pytest.raises(dataclasses.FrozenInstanceError) as refused:
            change()
        said.append(str(refused.value))
    return said


def test_a_record_is_frozen():
    ours, reference = twins(POINT)
    point = ours(1, 2.0)
    assert _refusals(point) == _refusals(reference(1, 2.0))
    assert dataclasses.is_dataclass(point) and dataclasses.fields(point)[0].name == "x"
    assert dataclasses.replace(point, x=5) == ours(5, 2.0)


def test_a_plain_subclass_may_add_attributes_but_not_change_fields_as_with_the_dataclass():
    for base in twins(POINT):
        child = type("Plain", (base,), {"__module__": __name__})(1, 2.0)
        child.extra = 3
        del child.extra
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
            child.x = 5


def test_making_a_record_compiles_only_its_init_until_something_tries_to_change_it(monkeypatch):
    if records._create_fn is None:
        pytest.skip("this Python's dataclasses compile a class's methods in one exec (3.13 on)")
    compiled = []
    real = records._create_fn
    monkeypatch.setattr(records, "_create_fn", lambda name, *a, **k: compiled.append(name) or real(name, *a, **k))
    point = frozen(type("Point", (), {"__module__": __name__, **POINT}))(1, 2.0)
    assert compiled == ["__init__"]
    _refusals(point)
    assert compiled == ["__init__", "__setattr__", "__delattr__"]  # each once


def test_other_dataclasses_made_meanwhile_are_made_as_usual():
    original = dataclasses._create_fn if hasattr(dataclasses, "_create_fn") else None
    made = []

    def make_plain():
        made.append(dataclasses.dataclass(frozen=True)(type("Plain", (), {"__module__": __name__,
                                                                       "__annotations__": {"a": "int"}})))

    threads = [threading.Thread(target=make_plain) for _ in range(4)]
    for thread in threads:
        thread.start()
    for _ in range(20):
        twins(POINT)
    for thread in threads:
        thread.join()
    assert (dataclasses._create_fn if original else None) is original
    for plain in made:
        assert plain.__setattr__.__code__.co_filename == "<string>"  # generated by exec, no stand-in
        with pytest.raises(dataclasses.FrozenInstanceError):
            plain(1).a = 2


def test_methods_the_class_defines_are_kept():
    body = {**POINT, "__repr__": lambda self: "mine", "__eq__": lambda self, other: True,
            "__hash__": lambda self: 42}
    ours, reference = twins(body)
    for cls in (ours, reference):
        point = cls(1, 2.0)
        assert (repr(point), point == 3, hash(point)) == ("mine", True, 42)


def test_a_class_that_defines_only_eq_still_gets_the_field_hash():
    body = {**POINT, "__eq__": lambda self, other: True}
    ours, reference = twins(body)
    assert hash(ours(1, 2.0)) == hash(reference(1, 2.0)) == hash((1, 2.0, "p"))


def test_a_subclass_adds_its_fields_to_repr_equality_and_hash():
    ours, reference = twins(POINT)
    extra = {"__annotations__": {"z": "int"}, "z": 0, "__module__": __name__}
    our_child = frozen(type("Child", (ours,), dict(extra)))
    reference_child = dataclasses.dataclass(frozen=True)(type("Child", (reference,), dict(extra)))
    assert repr(our_child(1, 2.0, "p", 3)) == repr(reference_child(1, 2.0, "p", 3))
    assert hash(our_child(1, 2.0, "p", 3)) == hash(reference_child(1, 2.0, "p", 3))
    assert our_child(1, 2.0, "p", 3) != our_child(1, 2.0, "p", 4)


def test_a_record_that_holds_itself_shows_dots_as_the_dataclass_does():
    body = {"__annotations__": {"items": "list"}}
    ours, reference = twins(body)
    a, b = ours([]), reference([])
    a.items.append(a)
    b.items.append(b)
    assert repr(a) == repr(b) == "Point(items=[...])"


def test_a_record_survives_pickle_and_copy():
    point = Pickled(1, (2, 3))
    assert pickle.loads(pickle.dumps(point)) == point
    assert copy.deepcopy(point) == point and hash(copy.copy(point)) == hash(point)


@frozen
class Pickled:
    """A module-level record, so that pickle can find its class."""

    a: int
    b: tuple
