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


# --- __init__, __setattr__, __delattr__: built without compiling, as dataclasses builds them ------


@frozen
class Defaults:
    """A record with every kind of field ``__init__`` handles."""

    name: str
    items: list[int] = field(default_factory=list)
    count: int = 0
    hidden: dict[str, int] = field(default_factory=dict, init=False)
    fixed: str = field(default="x", init=False)
    flag: bool = field(default=False, kw_only=True)
    must: str = field(kw_only=True, default="m")


@dataclass(frozen=True)
class DefaultsDataclass:
    """A record with every kind of field ``__init__`` handles."""

    name: str
    items: list[int] = field(default_factory=list)
    count: int = 0
    hidden: dict[str, int] = field(default_factory=dict, init=False)
    fixed: str = field(default="x", init=False)
    flag: bool = field(default=False, kw_only=True)
    must: str = field(kw_only=True, default="m")


@frozen
class Checked:
    value: int

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError("negative")
        object.__setattr__(self, "seen", True)


def test_init_takes_what_the_dataclass_init_takes() -> None:
    import inspect

    ours, theirs = inspect.signature(Defaults), inspect.signature(DefaultsDataclass)
    assert (
        str(ours)
        == str(theirs)
        == (
            "(name: 'str', items: 'list[int]' = <factory>, count: 'int' = 0, *, "
            "flag: 'bool' = False, must: 'str' = 'm') -> None"
        )
    )
    record = Defaults("a", count=2, flag=True)
    assert dataclasses.astuple(record) == ("a", [], 2, {}, "x", True, "m")
    assert Defaults("a").items is not Defaults("a").items  # a fresh list each time
    assert Defaults("a", [1]).items == [1]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'name'"):
        Defaults()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes from 2 to 4 positional arguments"):
        Defaults("a", [], 1, True)  # type: ignore[call-arg]
    assert Defaults.__init__.__qualname__ == "Defaults.__init__"


def test_post_init_runs_and_may_set_what_it_must() -> None:
    assert Checked(1).seen is True  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_frozen_refuses_what_dataclasses_refuses() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @frozen
        class _Late:
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__ in class _Own"):

        @frozen
        class _Own:
            a: int

            def __setattr__(self, name: str, value: object) -> None:
                pass

    record = Defaults("a")
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'count'"):
        del record.count
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'other'"):
        record.other = 1  # type: ignore[attr-defined]
    assert Defaults.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_a_dataclass_may_inherit_from_a_frozen_record_and_stays_frozen() -> None:
    @dataclass(frozen=True)
    class Child(Defaults):
        extra: int = 1

    child = Child("a")
    assert (child.name, child.extra) == ("a", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.extra = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):

        @dataclass
        class _Thawed(Defaults):  # type: ignore[misc]
            pass


def test_a_record_without_a_docstring_gets_the_dataclass_one() -> None:
    @frozen
    class Bare:
        a: int

    @dataclass(frozen=True)
    class BareDataclass:
        a: int

    assert Bare.__doc__ == "Bare(a: 'int') -> None".replace(" -> None", "")
    assert BareDataclass.__doc__ == "BareDataclass(a: 'int')"


def test_init_is_the_records_whoever_asks_for_it_first() -> None:
    """``__init__`` is compiled when first looked up: by an instance of a plain subclass, by the
    class itself, or by a pickle's copy (which needs none)."""

    @frozen
    class Base:
        a: int
        b: int = 2

    class Sub(Base):
        pass

    assert (Sub(1).a, Sub(1).b) == (1, 2)
    assert Base(3) == Base(3, 2) != Base(3, 4)
    assert Base.__init__.__qualname__.endswith("Base.__init__")

    @frozen
    class Unmade:
        a: int

    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        Unmade()  # type: ignore[call-arg]


@frozen(kw_only=True)
class Request:
    name: str
    count: int = 0
    items: tuple[int, ...] = field(default=(), repr=False)


@dataclass(frozen=True, kw_only=True)
class RequestDataclass:
    name: str
    count: int = 0
    items: tuple[int, ...] = field(default=(), repr=False)


def test_kw_only_records_take_keywords_only_as_the_dataclass_does() -> None:
    """The commands' requests are ``@frozen(kw_only=True)``: built by keyword, never by
    position, as ``@dataclass(frozen=True, kw_only=True)`` builds them."""
    import inspect

    ours, theirs = inspect.signature(Request), inspect.signature(RequestDataclass)
    assert (
        str(ours)
        == str(theirs)
        == ("(*, name: 'str', count: 'int' = 0, items: 'tuple[int, ...]' = ()) -> None")
    )
    record = Request(name="a", count=2)
    assert repr(record) == repr(RequestDataclass(name="a", count=2)).replace("Dataclass", "")
    assert record == Request(name="a", count=2) != Request(name="a")
    assert hash(record) == hash(RequestDataclass(name="a", count=2))
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        Request("a")  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'count'"):
        record.count = 3  # type: ignore[misc]
    assert dataclasses.replace(record, count=5) == Request(name="a", count=5)
    assert pickle.loads(pickle.dumps(record)) == record
    assert [f.kw_only for f in dataclasses.fields(Request)] == [True, True, True]
