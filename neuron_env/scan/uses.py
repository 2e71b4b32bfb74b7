"""One walk over a module's syntax tree: what it imports, uses and passes as a device.

The walk resolves names through import aliases (:mod:`.scopes`): ``xm.mark_step()`` after
``import torch_xla.core.xla_model as xm`` is a use of ``torch_xla.core.xla_model.mark_step``,
while a variable called ``sparse`` or a user module imported as ``xm`` resolves to nothing.
Function bodies are walked after the module's top level (as pyflakes does), so they see the names
the module ends up with. Nothing here knows about rules: detectors match these uses against them.
"""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass, field

from neuron_env.frozen import frozen
from neuron_env.scan.placement import (
    FACTORIES,
    host_statements,
    makes_on_host,
    moved_name,
    places_on_device,
    shows_host,
    statement_names,
)
from neuron_env.scan.positions import (
    COMPARED,
    DEVICE_FIRST_ARG_CALLS,
    DEVICE_KEYWORDS,
    KEY,
    ON_CPU,
    creates_on_cpu,
    is_cpu,
    is_device_target,
    is_device_test,
)
from neuron_env.scan.scopes import LOCAL, FunctionNode, Scope, local_names

_DEVICE = re.compile(r"([a-z_]+)(?::\d+)?")
_DEVICE_PREFIX = re.compile(r"([a-z_]+):")


@frozen
class ImportUse:
    """``import a.b`` or ``from a import b``: the qualified name ``a.b``."""

    name: str
    node: ast.alias


@frozen
class Reference:
    """A name or attribute chain that resolves through imports to ``name``."""

    name: str
    node: ast.expr
    scope: Scope
    call: ast.Call | None = None  # the call, when the reference is what is called
    decorator: bool = False
    role: str = ""  # COMPARED, KEY or ON_CPU when the value is not computed with on the device
    statement: ast.Expr | None = None  # the statement, when the call is one on its own
    argument_of: ast.Call | None = None  # the call it is an argument of: zeros(3, dtype=...)


@frozen
class MethodCall:
    """``x.method(...)`` on something that is not an imported module."""

    method: str
    node: ast.Call
    on_cpu: bool = False  # called on `.cpu()` or on a tensor created with device="cpu"


@frozen
class DeviceString:
    """A string in a device position; ``literal`` when it is one plain string constant."""

    device: str
    node: ast.expr
    literal: bool
    compared: bool = False  # `t.device.type == "xla"`: a test of the device, not a choice


@frozen
class StringConstant:
    value: str
    node: ast.Constant


@dataclass
class ModuleUses:
    imports: list[ImportUse] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    method_calls: list[MethodCall] = field(default_factory=list)
    device_strings: list[DeviceString] = field(default_factory=list)
    strings: list[StringConstant] = field(default_factory=list)
    call_results: dict[str, set[str]] = field(default_factory=dict)
    """``traced = torch_neuronx.trace(...)``: name → the qualified calls assigned to it."""
    moved: set[str] = field(default_factory=set)
    """Names moved to a device somewhere in the module: ``x.to(device)``, ``model.cuda()``."""
    default_device: bool = False  # torch.set_default_device(<not the CPU>) in the module
    factories: set[int] = field(default_factory=set)  # ids of calls of torch's factories
    tree: ast.Module | None = None
    _statements: dict[int, ast.stmt] | None = None  # id(node) → its innermost statement
    _host: set[int] | None = None  # ids of the statements of data loading

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The innermost statement holding ``node`` (worked out on first use: only the
        float64 rule asks, so a module without float64 never pays for it)."""
        if self._statements is None:
            self._statements = _innermost_statements(self.tree)
        return self._statements.get(id(node))

    def reaches_device(self, node: ast.AST, made_by: ast.Call | None) -> bool:
        """Whether a tensor that ``made_by`` makes (or converts) at ``node`` reaches a device
        (see :mod:`.placement`)."""
        if self.default_device:
            return True
        statement = self.statement_of(node)
        if statement is None:
            return False
        if places_on_device(statement) or statement_names(statement) & self.moved:
            return True
        if self._host is None:
            self._host = host_statements(self.tree) if self.tree else set()
        if id(statement) in self._host or shows_host(statement):
            return False
        return made_by is None or not makes_on_host(made_by, self.factories)

    @property
    def imports_torch(self) -> bool:
        return any(u.name == "torch" or u.name.startswith("torch.") for u in self.imports)


def collect_uses(tree: ast.Module) -> ModuleUses:
    """Walk ``tree`` once and return everything the detectors need."""
    walker = _Walker()
    walker.uses.tree = tree
    walker.visit(tree)
    walker.walk_deferred()
    return walker.uses


def _innermost_statements(tree: ast.Module | None) -> dict[int, ast.stmt]:
    found: dict[int, ast.stmt] = {}
    stack: list[tuple[ast.AST, ast.stmt | None]] = [(tree, None)] if tree is not None else []
    while stack:  # no recursion: as deep as the parser allows
        node, statement = stack.pop()
        for child in ast.iter_child_nodes(node):
            holder = child if isinstance(child, ast.stmt) else statement
            if holder is not None:
                found[id(child)] = holder
            stack.append((child, holder))
    return found


def attribute_chain(node: ast.expr) -> tuple[str, list[str]] | None:
    """``a.b.c`` → ("a", ["b", "c"]); None when the chain does not start at a plain name."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return (node.id, attrs[::-1]) if isinstance(node, ast.Name) else None


class _Walker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.uses = ModuleUses()
        self.scope = Scope()
        self.depth = 0  # > 0 inside a branch, loop, try or with body of the current scope
        self.deferred: list[tuple[FunctionNode, Scope]] = []
        self.calls: dict[int, ast.Call] = {}  # id(call.func) → call
        self.decorators: set[int] = set()
        self.roles: dict[int, str] = {}  # id(node) → COMPARED, KEY or ON_CPU
        self.statements: dict[int, ast.Expr] = {}  # id(call) → its expression statement
        self.arguments: dict[int, ast.Call] = {}  # id(argument) → the call it is passed to

    # --- scopes and bindings -------------------------------------------------------------------

    def bind(self, name: str, target: str = LOCAL) -> None:
        self.scope.bind(name, target, conditional=self.depth > 0)

    def walk_deferred(self) -> None:
        while self.deferred:
            node, parent = self.deferred.pop(0)
            self._walk_function(node, parent)

    def _walk_function(self, node: FunctionNode, parent: Scope) -> None:
        scope = Scope(parent)
        bound, declared = local_names(node)
        scope.bindings = {name: {LOCAL: None} for name in bound}
        scope.global_names = declared
        saved = self.scope, self.depth
        self.scope, self.depth = scope, 0
        for statement in node.body if isinstance(node.body, list) else [node.body]:
            self.visit(statement)
        self.scope, self.depth = saved

    def _conditional(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_If = visit_For = visit_AsyncFor = visit_While = _conditional
    visit_Try = visit_With = visit_AsyncWith = visit_Match = _conditional
    visit_TryStar = _conditional

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.uses.imports.append(ImportUse(alias.name, alias))
            if alias.asname:
                self.bind(alias.asname, alias.name)
            else:
                top = alias.name.split(".")[0]
                self.bind(top, top)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                continue
            local = alias.asname or alias.name
            if node.level or not node.module:  # a relative import: the user's own code
                self.bind(local)
                continue
            qualified = f"{node.module}.{alias.name}"
            self.uses.imports.append(ImportUse(qualified, alias))
            self.bind(local, qualified)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.decorators.add(id(decorator))
            self.visit(decorator)
        self._visit_signature(node.args)
        if node.returns:
            self.visit(node.returns)
        self.bind(node.name)
        self.deferred.append((node, self.scope))

    visit_AsyncFunctionDef = visit_FunctionDef

    def _visit_signature(self, args: ast.arguments) -> None:
        positional = [*args.posonlyargs, *args.args]
        with_defaults = positional[len(positional) - len(args.defaults) :]
        pairs = [
            *zip(with_defaults, args.defaults, strict=True),
            *zip(args.kwonlyargs, args.kw_defaults, strict=True),
        ]
        for arg, default in pairs:
            if default is None:
                continue
            self.visit(default)
            if is_device_target(ast.Name(id=arg.arg)):
                self._device_value(default)
        for each in [*positional, *args.kwonlyargs, args.vararg, args.kwarg]:
            if each is not None and each.annotation is not None:
                self.visit(each.annotation)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_signature(node.args)
        self._walk_function(node, self.scope)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for child in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(child)
        saved = self.scope, self.depth
        self.scope, self.depth = Scope(self.scope, is_class=True), 0
        for statement in node.body:
            self.visit(statement)
        self.scope, self.depth = saved
        self.bind(node.name)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:
        saved = self.scope
        self.scope = Scope(saved)
        self._generators(node.generators)
        self.visit(node.elt)
        self.scope = saved

    visit_ListComp = visit_SetComp = visit_GeneratorExp = _comprehension

    def visit_DictComp(self, node: ast.DictComp) -> None:
        saved = self.scope
        self.scope = Scope(saved)
        self._generators(node.generators)
        self.visit(node.key)
        self.visit(node.value)
        self.scope = saved

    def _generators(self, generators: list[ast.comprehension]) -> None:
        for generator in generators:
            self.visit(generator.iter)
            self.visit(generator.target)
            for condition in generator.ifs:
                self.visit(condition)

    def visit_Global(self, node: ast.Global) -> None:
        if self.scope.parent is not None:  # `global` at module level changes nothing
            self.scope.global_names.update(node.names)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bind(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs | ast.MatchStar) -> None:
        if node.name:
            self.bind(node.name)
        self.generic_visit(node)

    visit_MatchStar = visit_MatchAs

    # --- statements with device positions ------------------------------------------------------

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        called = self.resolve(node.value.func) if isinstance(node.value, ast.Call) else None
        for target in node.targets:
            if called is not None and isinstance(target, ast.Name):
                self.uses.call_results.setdefault(target.id, set()).add(called)
            if is_device_target(target):
                self._device_value(node.value)
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            if is_device_target(node.target):
                self._device_value(node.value)
        self.visit(node.annotation)
        self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self.visit(node.target)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and key.value in DEVICE_KEYWORDS:
                self._device_value(value)
            if key is not None:
                self.roles.setdefault(id(key), KEY)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        operands = [node.left, *node.comparators]
        for operand in operands:
            self.roles.setdefault(id(operand), COMPARED)
            if isinstance(operand, ast.Tuple | ast.List | ast.Set):
                for element in operand.elts:
                    self.roles.setdefault(id(element), COMPARED)
        for left, right in itertools.pairwise(operands):
            self._compared_device(left, right)
            self._compared_device(right, left)
        self.generic_visit(node)

    def _compared_device(self, value: ast.expr, other: ast.expr) -> None:
        if (
            isinstance(value, ast.Constant)
            and isinstance(value.value, str)
            and is_device_test(other)
        ):
            match = _DEVICE.fullmatch(value.value)
            if match:
                self.uses.device_strings.append(DeviceString(match.group(1), value, True, True))

    def visit_Expr(self, node: ast.Expr) -> None:
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return  # a docstring (or a bare string statement): prose, not code
        if isinstance(value, ast.Call):
            self.statements[id(value)] = node
        self.generic_visit(node)

    # --- expressions ---------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._reference(node, self.scope.resolve(node.id))
        else:
            self.bind(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            resolved = self.resolve(node)
            if resolved is not None:
                self._reference(node, resolved)
                return
        self.generic_visit(node)

    def resolve(self, node: ast.expr) -> str | None:
        """The qualified name an expression refers to through imports, if any."""
        chain = attribute_chain(node)
        if chain is None:
            return None
        root = self.scope.resolve(chain[0])
        return ".".join([root, *chain[1]]) if root is not None else None

    def _reference(self, node: ast.expr, resolved: str | None) -> None:
        if resolved is None:
            return
        call = self.calls.get(id(node))
        decorator = id(node) in self.decorators
        role = self.roles.get(id(node), "")
        statement = self.statements.get(id(call)) if call is not None else None
        reference = Reference(
            resolved,
            node,
            self.scope,
            call,
            decorator,
            role,
            statement,
            self.arguments.get(id(node)),
        )
        self.uses.references.append(reference)

    def visit_Call(self, node: ast.Call) -> None:
        self.calls[id(node.func)] = node
        for value in [*node.args, *(k.value for k in node.keywords)]:
            self.arguments[id(value)] = node
        if id(node) in self.decorators:
            self.decorators.add(id(node.func))
        resolved = self.resolve(node.func)
        if resolved in DEVICE_FIRST_ARG_CALLS and node.args:
            self._device_value(node.args[0])
        if creates_on_cpu(node):
            for value in [*node.args, *(k.value for k in node.keywords)]:
                self.roles.setdefault(id(value), ON_CPU)
        if isinstance(node.func, ast.Attribute) and resolved is None:
            on_cpu = creates_on_cpu(node.func.value)
            self.uses.method_calls.append(MethodCall(node.func.attr, node, on_cpu))
            if node.func.attr == "to" and node.args:
                self._device_value(node.args[0])
        if resolved in FACTORIES:
            self.uses.factories.add(id(node))
        moved = moved_name(node)
        if moved is not None:
            self.uses.moved.add(moved)
        if resolved == "torch.set_default_device" and node.args and not is_cpu(node.args[0]):
            self.uses.default_device = True
        for keyword in node.keywords:
            if keyword.arg in DEVICE_KEYWORDS:
                self._device_value(keyword.value)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self.uses.strings.append(StringConstant(node.value, node))

    def _device_value(self, node: ast.expr) -> None:
        """Record the device type(s) a device-position expression names."""
        if isinstance(node, ast.IfExp):
            self._device_value(node.body)
            self._device_value(node.orelse)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _DEVICE.fullmatch(node.value)
            if match:
                self.uses.device_strings.append(DeviceString(match.group(1), node, True))
        elif isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                match = _DEVICE_PREFIX.match(first.value)
                if match:
                    self.uses.device_strings.append(DeviceString(match.group(1), node, False))
