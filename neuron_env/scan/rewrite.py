"""The fixes of uses of PyTorch/XLA APIs: one-to-one rewrites that keep what the program does.

Each returns an :class:`~.model.Edit` or None (no safe rewrite: the finding then says what to do).

* ``xm.xla_device()`` → ``torch.device("neuron")``;
* ``xm.mark_step()`` / ``torch_xla.sync()`` as a statement → removed (eager execution has no
  graph to cut); the planner leaves ``pass`` where a block would become empty;
* ``xm.get_ordinal()`` / ``xr.global_ordinal()`` → the rank, ``xm.xrt_world_size()`` /
  ``xr.world_size()`` → the world size, from torch.distributed, and 0 / 1 when no process group is
  initialised (what PyTorch/XLA answers in a single process, where torch.distributed would raise);
* ``xm.master_print(...)`` / ``xm.save(obj, path)`` as statements → ``print(...)`` /
  ``torch.save(obj, path)`` under ``if`` rank 0 (or no process group).

The torch name is the one the module imports torch as; where torch is not imported the fix uses
``torch`` and asks the planner to add ``import torch`` (``needs_torch``).
"""

from __future__ import annotations

import ast

from neuron_env.scan.model import Edit, FixKind, Span
from neuron_env.scan.source import SourceFile
from neuron_env.scan.uses import Reference

EXPRESSIONS = {
    "get-rank": "({dist}.get_rank() if {dist}.is_initialized() else 0)",
    "get-world-size": "({dist}.get_world_size() if {dist}.is_initialized() else 1)",
}
RANK_ZERO = "if not {dist}.is_initialized() or {dist}.get_rank() == 0:"


def reference_fix(kind: FixKind | None, ref: Reference, source: SourceFile) -> Edit | None:
    """The fix of ``kind`` for this use, when it is safe here."""
    if kind is None or ref.call is None or ref.call.func is not ref.node:
        return None
    torch = _torch_name(ref)
    if torch is None:
        return None
    call = ref.call
    plain = not call.args and not call.keywords
    if kind == "neuron-device-call" and plain:
        return _replace(source, call, f'{torch[0]}.device("neuron")', torch[1])
    if kind in EXPRESSIONS and plain:
        return _replace(source, call, EXPRESSIONS[kind].format(dist=_dist(ref, torch[0])), torch[1])
    if kind == "remove-statement" and ref.statement is not None:
        span = source.span(ref.statement)
        if not _stands_alone(source, span):
            return None  # `a(); xm.mark_step()`: leave it to a person
        return Edit(span, source.segment(span), "", remove=True)
    if kind in ("rank-0-print", "rank-0-save") and ref.statement is not None:
        return _rank_zero(kind, ref, ref.statement, source, torch)
    return None


def _stands_alone(source: SourceFile, span: Span) -> bool:
    """Nothing else on the statement's lines but indentation, a comment, or a `...:` header."""
    before = source.lines[span.line - 1][: span.column - 1].strip()
    after = source.lines[span.end_line - 1][span.end_column - 1 :].strip()
    return (not before or before.endswith(":")) and (not after or after.startswith("#"))


def _torch_name(ref: Reference) -> tuple[str, bool] | None:
    """(the name torch is bound to here, whether ``import torch`` must be added)."""
    name = ref.scope.name_for("torch")
    if name is not None:
        return name, False
    if ref.scope.lookup("torch"):
        return None  # `torch` is something else here
    return "torch", True


def _dist(ref: Reference, torch: str) -> str:
    return ref.scope.name_for("torch.distributed") or f"{torch}.distributed"


def _replace(source: SourceFile, node: ast.expr, new: str, needs_torch: bool) -> Edit:
    span = source.span(node)
    return Edit(span, source.segment(span), new, needs_torch=needs_torch)


def _rank_zero(
    kind: FixKind, ref: Reference, statement: ast.Expr, source: SourceFile, torch: tuple[str, bool]
) -> Edit | None:
    call = ref.call
    assert call is not None
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None  # fd=, finalize=, master_only=, *args: not one-to-one
    if kind == "rank-0-save" and len(call.args) != 2:
        return None
    span = source.span(statement)
    indent = source.lines[span.line - 1][: span.column - 1]
    if indent.strip() or span.line != span.end_line:
        return None  # not alone at the start of its line: leave it to a person
    args = source.segment(Span(*_start(source, call.args[0]), *_end(source, call.args[-1])))
    args = args if call.args else ""
    callee = "print" if kind == "rank-0-print" else f"{torch[0]}.save"
    unit = "\t" if "\t" in indent else "    "
    newline = "\r\n" if source.lines[span.line - 1].endswith("\r\n") else "\n"
    guard = RANK_ZERO.format(dist=_dist(ref, torch[0]))
    new = f"{guard}{newline}{indent}{unit}{callee}({args})"
    return Edit(span, source.segment(span), new, needs_torch=torch[1])


def _start(source: SourceFile, node: ast.expr) -> tuple[int, int]:
    span = source.span(node)
    return span.line, span.column


def _end(source: SourceFile, node: ast.expr) -> tuple[int, int]:
    span = source.span(node)
    return span.end_line, span.end_column
