"""``@frozen`` records behave as ``@dataclass(frozen=True)`` ones: repr, equality, hash, frozenness.

The matrix, the facts and the verdicts are ``@frozen``: their repr shows in messages, their
equality and hash decide what reports group and deduplicate.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import dataclass, field

import pytest

from neuron_env.facts import DriverFacts
from neuron_env.frozen import frozen


@frozen
class Row:
    name: str
    items: tuple[int, ...] = field(default=(), repr=False)
    note: str = field(default="", compare=False)


@dataclass(frozen=True)
class RowDataclass:
    name: str
    items: tuple[int, ...] = field(default=(), repr=False)
    note: str = field(default="", compare=False)


@frozen
class Wider(Row):
    width: int = 3


@frozen
class Empty:
    pass


@frozen
class Single:
    value: tuple[int, ...]


@frozen
class OwnEquality:
    value: int

    def __eq__(self, other: object) -> bool:
        return True


def test_repr_is_the_dataclass_repr() -> None:
    assert repr(Row("a", (1,), "n")) == "Row(name='a', note='n')"
    assert repr(RowDataclass("a", (1,), "n")) == "RowDataclass(name='a', note='n')"
    assert repr(Wider("a")) == "Wider(name='a', note='', width=3)"
    assert repr(Empty()) == "Empty()"
    assert repr(Single((1,))) == "Single(value=(1,))"


def test_equality_compares_the_compared_fields_of_the_same_class_only() -> None:
    assert Row("a", (1,), "x") == Row("a", (1,), "y")  # note: compare=False
    assert Row("a") != Row("b")
    assert Row("a") != Wider("a")  # as dataclasses: another class is never equal
    assert Row("a").__eq__("a") is NotImplemented
    assert Empty() == Empty()
    assert OwnEquality(1) == OwnEquality(2)  # the class's own __eq__ is kept


def test_hash_is_the_dataclass_hash() -> None:
    assert hash(Row("a", note="x")) == hash(RowDataclass("a", note="y")) == hash(("a", ()))
    assert hash(Single((1, 2))) == hash(((1, 2),))
    assert hash(Empty()) == hash(())
    assert hash(OwnEquality(1)) == hash((1,))  # dataclasses adds it beside a class's own __eq__
    assert len({Row("a"), Row("a"), Row("b")}) == 2


def test_records_are_frozen_and_still_dataclasses() -> None:
    row = Row("a")
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'name'"):
        row.name = "b"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del row.name
    assert dataclasses.replace(row, name="b") == Row("b")
    assert dataclasses.asdict(Wider("a", (1,))) == {
        "name": "a",
        "items": (1,),
        "note": "",
        "width": 3,
    }
    assert pickle.loads(pickle.dumps(Wider("a"))) == Wider("a")
    assert copy.deepcopy(Row("a", (1,))) == Row("a", (1,))


def test_a_product_record_keeps_its_repr_and_value_semantics() -> None:
    facts = DriverFacts(module_loaded=False)
    assert repr(facts).startswith("DriverFacts(")
    again = DriverFacts(module_loaded=False)
    assert facts == again and hash(facts) == hash(again)
    assert dataclasses.is_dataclass(facts)
