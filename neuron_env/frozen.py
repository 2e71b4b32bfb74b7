"""``@frozen``: ``@dataclass(frozen=True)``, built with a sixth of the generated code.

``dataclasses`` writes six methods as source for each frozen class (``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``) and compiles each one, inside a
wrapper function of its own; for the 70-odd records a ``doctor`` run imports (the matrix, the
facts, the verdicts) that compiling was the largest part of the run's CPU time (~0.6 ms a class).
``@frozen`` lets ``dataclasses`` collect the fields only, and compiles just ``__init__``, the one
method that depends on the class's own signature, as one plain function (~0.1 ms). Every class
gets the same ``__repr__``, ``__eq__`` and ``__hash__``, which read the class's fields through
one :func:`operator.attrgetter` each, and a ``__setattr__`` and ``__delattr__`` made as closures
over the class, never compiled. They behave as the generated ones do: the same ``repr`` text
(``...`` for a record inside itself), equality only between instances of the same class, compared
and hashed as the tuple of the fields with ``compare`` (``hash``) set, ``FrozenInstanceError``
with the same words, the same ``__init__`` signature (defaults, factories, keyword-only fields,
``__post_init__``); a method the class defines itself is kept, as ``dataclasses`` keeps it.

``@frozen(kw_only=True)`` is ``@dataclass(frozen=True, kw_only=True)`` (every field a keyword-only
parameter: the commands' requests). A class that inherits from another dataclass, or declares an
``InitVar``, is left to ``dataclasses``' own frozen path (only its ``__repr__``, ``__eq__`` and
``__hash__`` are shared).
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda decorated: decorated


C = TypeVar("C", bound=type)
MISSING = dataclasses.MISSING


@overload
def frozen(cls: C, /) -> C: ...


@overload
def frozen(*, kw_only: bool = False) -> Callable[[C], C]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen(cls: C | None = None, /, *, kw_only: bool = False) -> C | Callable[[C], C]:
    """``cls`` as ``@dataclass(frozen=True)`` makes it (see the module's docstring);
    ``@frozen(kw_only=True)`` as ``@dataclass(frozen=True, kw_only=True)`` does."""
    if cls is None:
        return lambda decorated: _frozen(decorated, kw_only)
    return _frozen(cls, kw_only)


def _frozen(cls: C, kw_only: bool) -> C:
    if _inherits_a_dataclass(cls) or _declares_init_vars(cls):
        dataclasses.dataclass(frozen=True, repr=False, eq=False, kw_only=kw_only)(cls)
    else:
        _build(cls, kw_only)
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


def _inherits_a_dataclass(cls: type) -> bool:
    return any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:])


def _declares_init_vars(cls: type) -> bool:
    import inspect  # dataclasses imports it: no cost

    annotations = inspect.get_annotations(cls)
    return any("InitVar" in str(annotation) for annotation in annotations.values())


def _build(cls: type, kw_only: bool) -> None:
    """``@dataclass(frozen=True, repr=False, eq=False)`` without compiling what need not be.

    ``dataclasses`` collects the fields (and sets ``__match_args__``, the defaults as class
    attributes, ``__dataclass_fields__``); then the class is made frozen as ``dataclasses``
    makes it: its parameters say ``frozen``, ``__setattr__`` and ``__delattr__`` refuse the
    fields, ``__init__`` sets them with ``object.__setattr__``.
    """
    for name in ("__setattr__", "__delattr__"):
        if name in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    had_doc = bool(cls.__doc__)
    dataclasses.dataclass(init=False, repr=False, eq=False, kw_only=kw_only)(cls)
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.frozen = params.init = True
    names = tuple(f.name for f in dataclasses.fields(cls))
    _set_method(cls, "__setattr__", _frozen_setattr(cls, names))
    _set_method(cls, "__delattr__", _frozen_delattr(cls, names))
    if "__init__" not in cls.__dict__:
        _check_order(cls)
        cls.__init__ = _InitOnFirstUse(cls)  # type: ignore[misc]
    if not had_doc:  # dataclasses' docstring for a class without one: its signature
        import inspect

        cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")


def _set_method(cls: type, name: str, method: Callable[..., Any]) -> None:
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, method)


def _frozen_setattr(cls: type[Any], names: tuple[str, ...]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _frozen_delattr(cls: type[Any], names: tuple[str, ...]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__


class _Factory:
    """The default of a parameter whose field has a ``default_factory`` (``dataclasses``' rule),
    shown as ``dataclasses`` shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


class _InitOnFirstUse:
    """A record's ``__init__`` until something looks it up (an instance is made, or
    ``inspect.signature`` asks): then it is compiled and takes this one's place. A record whose
    instances all come from a pickle (the matrix a run takes from its memo) never compiles it."""

    def __init__(self, owner: type) -> None:
        self._owner = owner

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        init = _init(self._owner)
        _set_method(self._owner, "__init__", init)
        return init if instance is None else init.__get__(instance, owner)


def _check_order(cls: type) -> None:
    """What ``dataclasses`` refuses as it writes ``__init__``: a field without a default after
    one with a default."""
    seen_default = False
    for f in dataclasses.fields(cls):
        if not f.init or f.kw_only:
            continue
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or has_default


def _init(cls: type) -> Callable[..., None]:
    """The ``__init__`` ``dataclasses`` writes for a frozen class, compiled as one function."""
    fields = dataclasses.fields(cls)
    positional = [f for f in fields if f.init and not f.kw_only]
    keywords = [f for f in fields if f.init and f.kw_only]
    namespace: dict[str, Any] = {"__set": object.__setattr__, "__factory": _FACTORY}
    body = []
    for f in fields:
        if f.default_factory is not MISSING:
            namespace[f"__make_{f.name}"] = f.default_factory
            value = f"__make_{f.name}()"
            if f.init:
                value += f" if {f.name} is __factory else {f.name}"
        elif f.init:
            value = f.name
        else:
            continue  # the class attribute holds its default, as dataclasses leaves it
        body.append(f"    __set(self, {f.name!r}, {value})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    params = ["self", *(f.name for f in positional)]
    if keywords:
        params += ["*", *(f.name for f in keywords)]
    source = f"def __init__({', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, namespace)  # noqa: S102 - names are the class's own identifiers
    init: Callable[..., None] = namespace["__init__"]
    defaults = [_default(f) for f in positional]
    init.__defaults__ = tuple(d for d in defaults if d is not MISSING) or None
    init.__kwdefaults__ = {
        f.name: _default(f) for f in keywords if _default(f) is not MISSING
    } or None
    init.__annotations__ = {**{f.name: f.type for f in positional + keywords}, "return": None}
    return init


def _default(f: dataclasses.Field[Any]) -> Any:
    return _FACTORY if f.default_factory is not MISSING else f.default


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
