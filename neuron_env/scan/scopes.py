"""Python scopes, just enough to know which names are bound by imports (and to what).

A binding is a small ordered set of what a name may hold: qualified module or attribute names from
``import`` statements, or :data:`LOCAL` for anything else (an assignment, a parameter, a ``def``).
Straight-line code replaces a name's set; a binding inside an ``if``/``try``/loop/``with`` body adds
to it, so ``try: import torch_xla.core.xla_model as xm`` / ``except ImportError: xm = None`` still
resolves ``xm`` to PyTorch/XLA while ``sparse = load()`` at the top level shadows
``from torch import sparse`` for good.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

LOCAL = ""  # the name holds something that no import put there

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_NEW_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class Scope:
    """The names of one module, class, function or comprehension."""

    def __init__(self, parent: Scope | None = None, *, is_class: bool = False) -> None:
        self.parent = parent
        self.is_class = is_class
        self.bindings: dict[str, dict[str, None]] = {}  # name → ordered set of targets
        self.global_names: set[str] = set()

    def bind(self, name: str, target: str, *, conditional: bool) -> None:
        """Bind ``name`` to ``target`` (an import's qualified name, or LOCAL)."""
        if conditional and name in self.bindings:
            self.bindings[name][target] = None
        else:
            self.bindings[name] = {target: None}

    def lookup(self, name: str) -> tuple[str, ...]:
        """What ``name`` may hold here, following Python's rules (class scopes are skipped)."""
        scope: Scope | None = self.module() if name in self.global_names else self
        while scope is not None:
            if name in scope.bindings and (scope is self or not scope.is_class):
                return tuple(scope.bindings[name])
            scope = scope.parent
        return ()

    def resolve(self, name: str) -> str | None:
        """The imported thing ``name`` may refer to, or None for anything else."""
        return next((target for target in self.lookup(name) if target != LOCAL), None)

    def name_for(self, qualified: str) -> str | None:
        """A name that surely refers to ``qualified`` here (``torch`` for ``"torch"``), if any."""
        preferred = qualified.rsplit(".", 1)[-1]
        visible = sorted(self._visible_names(), key=lambda n: (n != preferred, n))
        return next((n for n in visible if self.lookup(n) == (qualified,)), None)

    def module(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def _visible_names(self) -> set[str]:
        names: set[str] = set()
        scope: Scope | None = self
        while scope is not None:
            names.update(scope.bindings)
            scope = scope.parent
        return names


def local_names(node: FunctionNode) -> tuple[set[str], set[str]]:
    """The names a function binds locally, and those it declares ``global``."""
    args = node.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    bound = {a.arg for a in params if a is not None}
    global_names: set[str] = set()
    nonlocal_names: set[str] = set()
    body = node.body if isinstance(node.body, list) else [node.body]
    for child in _walk_same_scope(body):
        if isinstance(child, ast.Global):
            global_names.update(child.names)
        elif isinstance(child, ast.Nonlocal):
            nonlocal_names.update(child.names)
        else:
            bound.update(_bound_by(child))
    return bound - global_names - nonlocal_names, global_names


def _walk_same_scope(nodes: list[ast.stmt] | list[ast.expr]) -> Iterator[ast.AST]:
    """Every node of ``nodes`` that runs in their scope (not inside nested defs or lambdas)."""
    stack: list[ast.AST] = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _NEW_SCOPES):
            continue  # its name is bound here; its body is another scope
        if isinstance(node, _COMPREHENSIONS):
            continue  # comprehension variables do not leak
        stack.extend(ast.iter_child_nodes(node))


def _bound_by(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
        return [node.id]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"]
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.MatchMapping) and node.rest:
        return [node.rest]
    return []
