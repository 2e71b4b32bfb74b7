"""Loading the user's ENTRY and checking what it returns (the protocol
is in docs/commands/evaluate.md).

ENTRY is ``module:function`` or ``path.py:function``: a zero-argument callable that returns
``(model, inputs)``, or a dict (or any object with attributes) holding ``model`` and ``inputs`` and
optionally ``loss_fn``, ``targets``, ``inputs_for``, ``shapes``, ``tolerances``, ``name`` and
``backward``. Anything wrong on the user's side becomes an :class:`EntryError` whose message names
their file and line, never a traceback from this worker.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from .frames import shorten, user_location, where_defined

FIELDS = (
    "model",
    "inputs",
    "loss_fn",
    "targets",
    "inputs_for",
    "shapes",
    "tolerances",
    "name",
    "backward",
)
EXPECTED = "(model, inputs), a dict or an object with 'model' and 'inputs'"
USER_MODULE = "_neuron_env_user_entry"


class EntryError(Exception):
    """The user's entry cannot be imported, raised, or returned something else."""

    def __init__(self, message: str, hint: str = "", trace: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.trace = trace


@dataclass
class Spec:
    """What the entry returned, checked: the model and how to call it."""

    model: Any
    inputs: tuple[Any, ...] | dict[str, Any]
    source: str
    name: str
    loss_fn: Callable[..., Any] | None = None
    targets: Any = None
    inputs_for: Callable[..., Any] | None = None
    shapes: list[tuple[int, ...]] = field(default_factory=list)
    tolerances: dict[str, tuple[float, float]] = field(default_factory=dict)
    backward: bool = True


def load(entry: dict[str, Any], seed: int) -> Spec:
    """Import the entry, call it (after seeding torch) and check what it returned."""
    text = str(entry["text"])
    function = _resolve(entry, text)
    source = where_defined(function)
    torch.manual_seed(seed)
    try:
        made = function()
    except Exception as exc:
        raise _raised(exc, f"{text} raised") from None
    who = _who(text, source)
    return _spec(_fields(made, who), who, source)


def inputs_for(spec: Spec, shape: tuple[int, ...], seed: int) -> tuple[Any, ...] | dict[str, Any]:
    """The inputs the entry's ``inputs_for`` makes for ``shape`` (for ``--shapes``)."""
    assert spec.inputs_for is not None
    torch.manual_seed(seed)
    try:
        made = spec.inputs_for(shape)
    except Exception as exc:
        raise _raised(exc, f"inputs_for({shape}) raised") from None
    return normalise_inputs(made, f"inputs_for({shape}) ({spec.source}) returned")


def _raised(exc: BaseException, what: str) -> EntryError:
    at = user_location(exc)
    said = f"{type(exc).__name__}: {_first_line(exc)}"
    return EntryError(
        f"{what} {said}" + (f" (at {at})" if at else ""),
        "Fix it there, or run with --debug to see the traceback.",
        traceback.format_exc(),
    )


def _resolve(entry: dict[str, Any], text: str) -> Callable[..., Any]:
    module = _import_file(Path(entry["path"])) if entry.get("path") else _import(entry["module"])
    target: Any = module
    for part in str(entry["attr"]).split("."):
        if not hasattr(target, part):
            known = [n for n in dir(target) if not n.startswith("_")]
            near = difflib.get_close_matches(part, known, n=1)
            hint = f"Did you mean '{near[0]}'?" if near else "Check the name after the colon."
            raise EntryError(f"{text}: {_label(module)} has no attribute '{part}'.", hint)
        target = getattr(target, part)
    if not callable(target):
        raise EntryError(f"{text} is a {type(target).__name__}, not a function.", _protocol_hint())
    return target  # type: ignore[no-any-return]


def _label(module: Any) -> str:
    path = getattr(module, "__file__", None)
    return shorten(str(path)) if module.__name__ == USER_MODULE else f"module '{module.__name__}'"


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise EntryError(
                f"Cannot import module '{name}': it is not on the target's sys.path "
                "(the current directory and PYTHONPATH).",
                "Run neuron-env from the directory that holds it, set PYTHONPATH, or give a file: "
                "path/to/file.py:function.",
            ) from None
        raise _import_failed(exc, name) from None
    except Exception as exc:
        raise _import_failed(exc, name) from None


def _import_file(path: Path) -> Any:
    sys.path.insert(0, str(path.parent))  # its sibling modules import as under 'python file.py'
    spec = importlib.util.spec_from_file_location(USER_MODULE, path)
    if spec is None or spec.loader is None:
        raise EntryError(f"{path} cannot be loaded as a Python module.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[USER_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise _import_failed(exc, str(path)) from None
    return module


def _import_failed(exc: Exception, name: str) -> EntryError:
    if isinstance(exc, SyntaxError):
        at = f"{exc.filename}:{exc.lineno}" if exc.filename else name
        return EntryError(
            f"Importing {shorten(name)} failed: SyntaxError at {shorten(at)}: {exc.msg}",
            "Fix the syntax there.",
            traceback.format_exc(),
        )
    error = _raised(exc, f"Importing {shorten(name)} failed:")
    if isinstance(exc, ModuleNotFoundError):
        error.hint = f"Install '{exc.name}' into the target environment (the one --python names)."
    return error


def _who(text: str, source: str) -> str:
    """``file.py:make (line 6)``, or ``pkg.mod:make (pkg/mod.py:6)``: the entry and where it is."""
    file, _, line = source.rpartition(":")
    if text.startswith(file + ":"):
        return f"{text} (line {line})"
    return f"{text} ({source})"


def _fields(made: Any, who: str) -> dict[str, Any]:
    if isinstance(made, tuple | list) and len(made) == 2:
        return {"model": made[0], "inputs": made[1]}
    if isinstance(made, Mapping):
        unknown = [k for k in made if k not in FIELDS]
        if unknown:
            near = difflib.get_close_matches(str(unknown[0]), FIELDS, n=1)
            hint = f"Did you mean '{near[0]}'?" if near else f"Known keys: {', '.join(FIELDS)}."
            raise EntryError(f"{who} returned an unknown key '{unknown[0]}'.", hint)
        return dict(made)
    if hasattr(made, "model") and hasattr(made, "inputs"):
        return {name: getattr(made, name) for name in FIELDS if hasattr(made, name)}
    what = "the model alone" if isinstance(made, torch.nn.Module) else _kind(made)
    raise EntryError(f"{who} returned {what}; expected {EXPECTED}.", _protocol_hint())


def _kind(value: Any) -> str:
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)} items"
    return f"a {type(value).__name__}"


def _protocol_hint() -> str:
    return "See 'neuron-env evaluate --help' for the ENTRY protocol."


def _spec(fields: dict[str, Any], who: str, source: str) -> Spec:
    where = f"{who} returned"
    model = fields.get("model")
    if not isinstance(model, torch.nn.Module):
        raise EntryError(
            f"{where} a model that is {_kind(model)}, not a torch.nn.Module.", _protocol_hint()
        )
    if fields.get("inputs") is None:
        raise EntryError(f"{where} no inputs.", _protocol_hint())
    return Spec(
        model=model,
        inputs=normalise_inputs(fields["inputs"], f"{where} inputs that are"),
        source=source,
        name=_name(fields.get("name"), model, where),
        loss_fn=_callable(fields.get("loss_fn"), "loss_fn", where),
        targets=fields.get("targets"),
        inputs_for=_callable(fields.get("inputs_for"), "inputs_for", where),
        shapes=_shapes(fields.get("shapes"), where),
        tolerances=_tolerances(fields.get("tolerances"), where),
        backward=bool(fields.get("backward", True)),
    )


def normalise_inputs(value: Any, where: str) -> tuple[Any, ...] | dict[str, Any]:
    """A tensor, a tuple/list (positional arguments) or a dict (keyword arguments)."""
    if isinstance(value, torch.Tensor):
        return (value,)
    if isinstance(value, tuple | list):
        return tuple(value)
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return dict(value)
    raise EntryError(
        f"{where} {_kind(value)}; expected a tensor, a tuple of arguments or a dict of keyword "
        "arguments.",
        _protocol_hint(),
    )


def _name(value: Any, model: Any, where: str) -> str:
    if value is None:
        return type(model).__name__
    if not isinstance(value, str):
        raise EntryError(f"{where} a name that is {_kind(value)}, not a string.")
    return value


def _callable(value: Any, key: str, where: str) -> Callable[..., Any] | None:
    if value is not None and not callable(value):
        raise EntryError(f"{where} a {key} that is {_kind(value)}, not a function.")
    return value  # type: ignore[no-any-return]


def _shapes(value: Any, where: str) -> list[tuple[int, ...]]:
    try:
        return [tuple(int(n) for n in shape) for shape in value or ()]
    except (TypeError, ValueError):
        raise EntryError(
            f"{where} shapes that are not a list of shapes, e.g. [(2, 16), (4, 32)]."
        ) from None


def _tolerances(value: Any, where: str) -> dict[str, tuple[float, float]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise EntryError(f"{where} tolerances that are {_kind(value)}, not a dict.")
    return {str(k): _tolerance(v, str(k), where) for k, v in value.items()}


def _tolerance(value: Any, key: str, where: str) -> tuple[float, float]:
    if isinstance(value, Mapping):
        value = (value.get("rtol"), value.get("atol"))
    try:
        rtol, atol = (float(v) for v in value)
    except (TypeError, ValueError):
        raise EntryError(
            f"{where} a tolerance for '{key}' that is not (rtol, atol) or "
            "{'rtol': ..., 'atol': ...}."
        ) from None
    return rtol, atol


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"
