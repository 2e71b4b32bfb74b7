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

LOCAL = ""  # the name holds something that no import put there

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_NEW_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


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
    """The names a function binds locally, and those it declares ``global``.

    Only statements are read (binding targets, nested bodies), not every expression: that is
    several times faster, and the one binding it misses, an assignment expression (``:=``), is
    still bound when the walk reaches it.
    """
    args = node.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    bound = {a.arg for a in params if a is not None}
    if isinstance(node, ast.Lambda):
        return bound, set()
    global_names: set[str] = set()
    nonlocal_names: set[str] = set()
    stack: list[ast.AST] = list(node.body)
    while stack:
        statement = stack.pop()
        if isinstance(statement, ast.Global):
            global_names.update(statement.names)
        elif isinstance(statement, ast.Nonlocal):
            nonlocal_names.update(statement.names)
        else:
            bound.update(_bound_by(statement))
            if not isinstance(statement, _NEW_SCOPES):
                stack.extend(_nested_statements(statement))
    return bound - global_names - nonlocal_names, global_names


def _nested_statements(node: ast.AST) -> list[ast.AST]:
    """Statements (and except/case clauses) nested in a compound statement."""
    nested: list[ast.AST] = []
    for name in ("body", "orelse", "finalbody", "handlers", "cases"):
        nested.extend(getattr(node, name, None) or ())
    return nested


def _bound_by(node: ast.AST) -> list[str]:
    """The names one statement (or clause) binds in its own scope."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"]
    if isinstance(node, ast.ExceptHandler):
        return [node.name] if node.name else []
    if isinstance(node, ast.match_case):
        return [n for p in ast.walk(node.pattern) for n in _captured(p)]
    return [name for target in _targets(node) for name in _target_names(target)]


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign | ast.Delete):
        return list(node.targets)
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
        return [node.target]
    if isinstance(node, ast.With | ast.AsyncWith):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return []


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in _target_names(element)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []  # attributes and subscripts bind no name


def _captured(pattern: ast.AST) -> list[str]:
    if isinstance(pattern, ast.MatchAs | ast.MatchStar) and pattern.name:
        return [pattern.name]
    if isinstance(pattern, ast.MatchMapping) and pattern.rest:
        return [pattern.rest]
    return []
