"""``@frozen``: ``@dataclass(frozen=True)``, built with half the generated code.

``dataclasses`` writes six methods as source for each frozen class (``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) and compiles each one; for the 60-odd
records a ``doctor`` run imports (the matrix, the facts, the verdicts) that compiling is a large
part of the run's CPU time. ``@frozen`` lets ``dataclasses`` write only the three that depend on
the class's own signature or on frozenness (``__init__``, ``__setattr__``, ``__delattr__``) and
gives every class the same ``__repr__``, ``__eq__`` and ``__hash__``, which read the class's
fields through one :func:`operator.attrgetter` each. They behave as the generated ones do: the
same ``repr`` text (``...`` for a record inside itself), equality only between instances of the
same class, compared and hashed as the tuple of the fields with ``compare`` (``hash``) set; a
method the class defines itself is kept, as ``dataclasses`` keeps it.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda decorated: decorated


C = TypeVar("C", bound=type)


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: C) -> C:
    """``cls`` as ``@dataclass(frozen=True)`` makes it (see the module's docstring)."""
    dataclasses.dataclass(frozen=True, repr=False, eq=False)(cls)
    fields = dataclasses.fields(cls)
    own = cls.__dict__
    if "__repr__" not in own:
        cls.__frozen_repr__ = tuple(f.name for f in fields if f.repr)  # type: ignore[attr-defined]
        cls.__repr__ = _repr  # type: ignore[assignment]
    if "__eq__" not in own:
        cls.__frozen_key__ = _getter([f.name for f in fields if f.compare])  # type: ignore[attr-defined]
        cls.__eq__ = _eq  # type: ignore[assignment]
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if not explicit_hash:  # dataclasses' rule for eq=True, frozen=True
        hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
        cls.__frozen_hash_key__ = _getter(hashed)  # type: ignore[attr-defined]
        cls.__hash__ = _hash  # type: ignore[assignment]
    return cls


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of these attributes of an object (as the generated methods build it)."""
    if not names:
        return lambda _: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda instance: (one(instance),)
    return attrgetter(*names)


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__frozen_repr__)
    return f"{self.__class__.__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        key = self.__class__.__frozen_key__
        return key(self) == key(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__class__.__frozen_hash_key__(self))
