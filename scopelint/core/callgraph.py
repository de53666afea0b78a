"""The program layer of one module, built once before any walk: its functions, classes
and methods (discovery), which of them a call or an instance runs (resolution), and
the calls by name between them with an order that puts callers first (the call graph).

It knows nothing of recording states or values: ``flow.Analyzer`` walks the functions
it finds, in its order, to a fixpoint, and resolves calls through it; the summaries it
applies at call sites are ``summaries``' and the walk's own. The engine reads the
classes of a module (what it exports) from it without walking anything.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from scopelint.core import frameworks as F
from scopelint.core import roles
from scopelint.core.arguments import CALL_METHODS, requires_grad_off
from scopelint.core.facts import FunctionInfo
from scopelint.core.interfile import NO_CONTEXT, Context
from scopelint.core.names import Names, Scope, dotted, module_chain_base
from scopelint.core.slicing import Whole
from scopelint.core.syntax import child_blocks, is_nested_scope, iter_children, statements, walk

# Decorators that do not change how or when the body runs.
NEUTRAL_DECORATORS = {
    "staticmethod", "classmethod", "property", "abstractmethod", "abc.abstractmethod",
    "functools.wraps", "wraps", "override", "typing.override", "cached_property",
    "functools.cached_property", "functools.lru_cache", "lru_cache", "functools.cache",
}


class CallGraph:
    def __init__(self, module: cst.Module, names: Names, whole: Optional[Whole], context: Optional[Context] = None):
        self.module = module
        self.names = names
        self.whole = whole
        self.context = context or NO_CONTEXT
        # --- discovery (``_collect``)
        self.functions: List[FunctionInfo] = []
        self.module_functions: Dict[str, FunctionInfo] = {}
        self.class_methods: Dict[int, Dict[str, FunctionInfo]] = defaultdict(dict)  # by class node id
        # Functions defined in a function's body, by the enclosing one's id. (Not an
        # attribute of FunctionInfo: with ``parent`` that would be a reference cycle,
        # and a cycle keeps the whole tree alive until the collector runs.)
        self.nested: Dict[int, Dict[str, FunctionInfo]] = defaultdict(dict)
        self.model_classes: Set[str] = set()
        self.framework_bases: Dict[int, Tuple[str, ...]] = {}  # by class node id
        self.subclasses: Dict[str, List[cst.ClassDef]] = defaultdict(list)
        # Module-level classes by name (with their base names), and methods by name.
        self.classes: Dict[str, Tuple[cst.ClassDef, Tuple[str, ...]]] = {}
        self.methods_by_name: Dict[str, List[FunctionInfo]] = defaultdict(list)
        self.multiple_bases = False  # some class of the file has several bases (its MRO is not a chain)
        self._collect(module.body, None, None, names.root)
        self.by_node: Dict[int, FunctionInfo] = {id(info.node): info for info in self.functions}
        self.by_id: Dict[int, FunctionInfo] = {id(info): info for info in self.functions}
        # Functions referenced other than by a direct call: their callers are unknown.
        self.escapes: frozenset = frozenset(
            id(info) for info in self.functions
            if whole is None or whole.escapes(info.name, info.cls is not None and info.parent is None))
        self._names_in: Dict[int, Set[str]] = {}  # names each function's own code reads (``static_callers``)
        self._free_of: Dict[int, Tuple[str, ...]] = {}
        self._attr_tags_of: Dict[int, Dict[str, frozenset]] = {}
        self._fields_of: Dict[str, Optional[tuple]] = {}

    # --- discovery -------------------------------------------------------------
    def _collect(self, body, parent: Optional[FunctionInfo], cls, scope: Scope) -> None:
        for stmt in statements(body):
            if type(stmt) is cst.FunctionDef:
                fscope = self.names.scope_of(stmt, scope)
                bases = tuple(self._class_bases(cls, scope)) if cls is not None else ()
                info = FunctionInfo(stmt, stmt.name.value, cls, parent, fscope, bases)
                if cls is not None:
                    info.framework_bases = self.framework_bases.get(id(cls), ())
                owner = parent
                while owner is not None and owner.parent is not None:
                    owner = owner.parent
                owner_cls = cls if cls is not None else (owner.cls if owner is not None else None)
                info.in_model_class = owner_cls is not None and owner_cls.name.value in self.model_classes
                if cls is not None and parent is None and info.name in CALL_METHODS:  # (what ``roles.is_model_call`` asks)
                    info.stateless = _reads_no_instance(info)
                self._classify_decorators(info, scope)
                self.functions.append(info)
                if cls is not None and parent is None:
                    self.class_methods[id(cls)][info.name] = info
                    self.methods_by_name[info.name].append(info)
                elif parent is not None:
                    self.nested[id(parent)][info.name] = info
                else:
                    self.module_functions[info.name] = info
                self._collect(stmt.body, info, None, fscope)
            elif type(stmt) is cst.ClassDef:
                cscope = self.names.scope_of(stmt, scope)
                bases = list(self._class_bases(stmt, scope))
                if parent is None and any(F.is_model_class(b) or b in self.model_classes or self.context.is_model_class(b) for b in bases):
                    self.model_classes.add(stmt.name.value)
                # The framework's classes it derives from, also through this module's
                # classes and those of the program's other modules.
                # (looked up per base, not a dict of every class so far: a chain of n
                # classes each deriving from the last cost n**2; issue 44)
                def local(b: str) -> Tuple[str, ...]:
                    found = self.classes.get(b)
                    return self.framework_bases.get(id(found[0]), ()) if found is not None else ()

                self.framework_bases[id(stmt)] = tuple(dict.fromkeys(
                    [b for b in bases if F.is_model_class(b)]
                    + [a for b in bases for a in (*local(b), *self.context.framework_bases(b))]))
                if len(bases) > 1:
                    self.multiple_bases = True
                if parent is None and cls is None:
                    self.classes[stmt.name.value] = (stmt, tuple(bases))
                for b in bases:
                    self.subclasses[b].append(stmt)
                self._collect(stmt.body, parent, stmt, cscope)
            else:
                for child in child_blocks(stmt):
                    self._collect(child, parent, cls, scope)

    def _class_bases(self, cls: cst.ClassDef, scope: Scope):
        for arg in cls.bases:
            q = self.names.qualify(arg.value, scope)
            yield q or (dotted(arg.value) or "")

    def _classify_decorators(self, info: FunctionInfo, scope: Scope) -> None:
        for dec in info.node.decorators:
            expr = dec.decorator
            target = expr.func if type(expr) is cst.Call else expr
            q = self.names.qualify(target, scope)
            if q in F.SCOPES and F.SCOPES[q][0] == F.TORCH:
                info.decorator = (q, dec)
                continue
            spelled = dotted(target) or ""
            if spelled in NEUTRAL_DECORATORS or q in NEUTRAL_DECORATORS or spelled.endswith((".setter", ".getter", ".deleter")):
                continue
            info.opaque = True

    # --- classes and instances ---------------------------------------------------
    def instance_tags(self, name: str) -> frozenset:
        """The tags of an instance of the module's class ``name``."""
        return frozenset({"instance:" + name} | ({"model"} if name in self.model_classes else set()))

    def self_tags(self, func: Optional[FunctionInfo]) -> frozenset:
        """In ``func`` (a method of a module-level class of this file, or a function
        nested in one, whose first parameter is ``self``): the tags of ``self``."""
        owner = outermost(func)
        if owner is None or owner.cls is None or not owner.param_names or owner.param_names[0] != "self":
            return frozenset()
        name = owner.cls.name.value
        found = self.classes.get(name)
        if found is None or found[0] is not owner.cls:
            return frozenset()
        return self.instance_tags(name)

    def constructed(self, expr: cst.BaseExpression, scope: Scope) -> Optional[frozenset]:
        """What ``expr`` makes, if it is a constructor call of a framework or local model class
        (also past methods that return the module: ``Net(...).to(device)``)."""
        if type(expr) is not cst.Call:
            return None
        while type(expr.func) is cst.Attribute and expr.func.attr.value in F.RETURNS_SELF and type(expr.func.value) is cst.Call:
            expr = expr.func.value
        if type(expr.func) is cst.Name and expr.func.value in self.classes and scope.resolve_name(expr.func.value) is None:
            return self.instance_tags(expr.func.value)
        qname = self.names.qualify(expr.func, scope)
        if qname is not None and F.framework_of(qname) and roles.is_class_name(qname.rsplit(".", 1)[-1]):
            return frozenset({"ctor:" + qname})
        return None

    def attribute_tags(self, cls: cst.ClassDef, attr: str) -> frozenset:
        """What every ``self.<attr> = C(...)`` of class ``cls`` makes
        (``ctor:torch.nn.CrossEntropyLoss``; the instance tags of a class of this file),
        with ``leaf`` where a method makes it a leaf (``self.W.attach_grad()``)."""
        tags = self._attr_tags_of.get(id(cls))
        if tags is None:
            tags = self._attr_tags_of[id(cls)] = self._class_attribute_tags(cls)
        return tags.get(attr, frozenset())

    def _class_attribute_tags(self, cls: cst.ClassDef) -> Dict[str, frozenset]:
        made: Dict[str, Set[Optional[frozenset]]] = defaultdict(set)
        leaves: Set[str] = set()
        for method in self.class_methods[id(cls)].values():
            for n in _simple_statements(method.node.body):  # statements only: expressions are many
                if type(n) is cst.Expr:
                    n = n.value
                if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in F.MAKE_LEAF_METHODS:
                    owner = n.func.value  # ``self.W.attach_grad()``: a leaf whoever reads it
                    if type(owner) is cst.Attribute and dotted(owner.value) == "self" and not requires_grad_off(n):
                        leaves.add(owner.attr.value)
                if type(n) is not cst.Assign:
                    continue
                for t in n.targets:
                    target = t.target
                    if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
                        if type(n.value) is cst.Call and module_chain_base(n.value) == f"self.{target.attr.value}":
                            continue  # (``self.net = self.net.cuda()``: the same module)
                        made[target.attr.value].add(self.constructed(n.value, method.scope))
                    elif type(target) in (cst.Tuple, cst.List):
                        for el in target.elements:  # ``self.a, self.b = ...``: nothing known
                            if type(el.value) is cst.Attribute and dotted(el.value.value) == "self":
                                made[el.value.attr.value].add(None)
        tags = {name: next(iter(kinds)) for name, kinds in made.items() if len(kinds) == 1 and None not in kinds}
        for name in leaves:
            tags[name] = tags.get(name, frozenset()) | {"leaf"}
        return tags

    @property
    def module_constants(self) -> FrozenSet[str]:
        """Module-level names bound once, to a Python constant (``alpha = 0.5``,
        ``T = 4``, ``NAME = "x"``), that no function declares ``global``: what a function
        reads of them is that number, no tensor (RULES.md, "Values and gradient paths")."""
        found = self.__dict__.get("_module_constants")
        if found is not None:
            return found
        counts: Dict[str, int] = defaultdict(int)
        constant: Set[str] = set()
        declared: Set[str] = set()
        for info in self.functions:
            declared |= info.scope.globals
        for n in walk(self.module, is_nested_scope):
            t = type(n)
            if t is cst.Assign:
                for tg in n.targets:
                    for name in _bound_names(tg.target):
                        counts[name] += 1
                    if type(tg.target) is cst.Name and _python_constant(n.value):
                        constant.add(tg.target.value)
            elif t in (cst.AugAssign, cst.AnnAssign):
                for name in _bound_names(n.target):
                    counts[name] += 2 if t is cst.AugAssign else 1
            elif t in (cst.For, cst.CompFor):
                for name in _bound_names(n.target):
                    counts[name] += 2
            elif t is cst.AsName:
                for name in _bound_names(n.name):
                    counts[name] += 2
            elif t in (cst.FunctionDef, cst.ClassDef):
                counts[n.name.value] += 2
            elif t is cst.NamedExpr:
                for name in _bound_names(n.target):
                    counts[name] += 2
        found = frozenset(n for n in constant if counts[n] == 1 and n not in declared)
        self.__dict__["_module_constants"] = found
        return found

    def fields(self, name: str) -> Optional[Tuple[Tuple[str, str], ...]]:
        """The fields a call of the module's class ``name`` fills from its arguments, as
        (parameter, field or None) in the order of the parameters: a dataclass's or a
        ``NamedTuple``'s annotated fields, or what ``__init__`` stores as it is handed
        (``self.loss = loss``). None: not known (a class with a base of the file that
        has its own ``__init__``, ``*args``...)."""
        if name in self._fields_of:
            return self._fields_of[name]
        found = self.classes.get(name)
        out = None
        if found is not None:
            cls, bases = found
            decorated = any(dotted(d.decorator.func if type(d.decorator) is cst.Call else d.decorator) in ("dataclass", "dataclasses.dataclass")
                            for d in cls.decorators)
            if decorated or any(b.rsplit(".", 1)[-1] == "NamedTuple" for b in bases):
                names = [st.body[0].target.value for st in cls.body.body if type(st) is cst.SimpleStatementLine
                         and type(st.body[0]) is cst.AnnAssign and type(st.body[0].target) is cst.Name]
                out = tuple((n, n) for n in names)
            else:
                init = self.class_methods[id(cls)].get("__init__")
                if init is not None and not any(b in self.classes for b in bases):
                    params = set(init.param_names[1:])
                    stored = []
                    for n in _simple_statements(init.node.body):
                        if type(n) is cst.Assign and len(n.targets) == 1 and type(n.value) is cst.Name and n.value.value in params:
                            target = n.targets[0].target
                            if type(target) is cst.Attribute and dotted(target.value) == "self":
                                stored.append((n.value.value, target.attr.value))
                    field = dict(stored)
                    out = tuple((p, field.get(p)) for p in init.param_names[1:]) if stored else None
        self._fields_of[name] = out
        return out

    def init_value(self, cls_name: str, attr: str) -> Optional[Tuple[cst.BaseExpression, FunctionInfo]]:
        """What ``__init__`` of the local class ``cls_name`` (or of its local bases) stores
        in ``self.<attr>``, with that ``__init__``: the one expression it assigns there
        (``self.encoder = Encoder(...)``). None: no ``__init__``, or not one assignment."""
        init = self.method_of(cls_name, "__init__")
        me = init.param_names[0] if init is not None and init.param_names else None
        if me is None:
            return None
        made = [n.value for n in walk(init.node.body, is_nested_scope)
                if type(n) is cst.Assign and any(
                    type(t.target) is cst.Attribute and type(t.target.value) is cst.Name and t.target.value.value == me
                    and t.target.attr.value == attr for t in n.targets)]
        return (made[0], init) if len(made) == 1 else None

    # --- resolution ------------------------------------------------------------
    def method_of(self, cls_name: str, name: str) -> Optional[FunctionInfo]:
        """Method ``name`` of the local class ``cls_name`` or of its local bases (in order)."""
        todo, seen = [cls_name], set()
        while todo:
            c = todo.pop(0)
            if c in seen or c not in self.classes:
                continue
            seen.add(c)
            cls, bases = self.classes[c]
            found = self.class_methods[id(cls)].get(name)
            if found is not None:
                return found
            todo.extend(bases)
        return None

    def called_method(self, cls_name: str) -> Optional[FunctionInfo]:
        """What calling an instance of the local class ``cls_name`` runs (``net(x)``:
        its ``forward``, ``hybrid_forward`` or ``__call__``, its own or a local base's)."""
        for method in CALL_METHODS:
            found = self.method_of(cls_name, method)
            if found is not None:
                return found
        return None

    def function_in(self, info: FunctionInfo, func: cst.BaseExpression) -> Optional[FunctionInfo]:
        """The function of this file that ``func`` (a name) calls in the body of ``info``:
        one nested in it (or in a function enclosing it), or a module-level one."""
        if type(func) is not cst.Name:
            return None
        owner: Optional[FunctionInfo] = info
        while owner is not None:
            nested = self.nested.get(id(owner))
            if nested is not None and func.value in nested:
                return nested[func.value]
            if func.value in owner.scope.bound:
                return None
            owner = owner.parent
        return self.module_functions.get(func.value) if info.scope.resolve_name(func.value) is None else None

    def local_target(self, func: cst.BaseExpression, info: Optional[FunctionInfo], scope: Scope) -> Optional[FunctionInfo]:
        """The function of this file a call of ``func`` made in ``info`` (None: at module
        level; ``scope``: where it is) runs, by its name: a nested or module-level
        function, or ``self.m``/``cls.m`` of the method's class or its local bases."""
        if type(func) is cst.Name:
            owner = info
            while owner is not None:
                nested = self.nested.get(id(owner))
                if nested is not None and func.value in nested:
                    return nested[func.value]
                owner = owner.parent
            if scope.resolve_name(func.value) is None:
                return self.module_functions.get(func.value)
            return None
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value in ("self", "cls") and info is not None:
            owner = outermost(info)
            if owner.cls is not None:
                found = self.class_methods[id(owner.cls)].get(func.attr.value)
                if found is None and self.classes.get(owner.cls.name.value, (None,))[0] is owner.cls:
                    found = self.method_of(owner.cls.name.value, func.attr.value)  # a local base's
                return found
        return None

    def super_target(self, info: Optional[FunctionInfo], name: str) -> Optional[List[FunctionInfo]]:
        """For ``super().name(...)`` in a method of a module-level class C of this file,
        where every class of the file has one base at most: the method it runs, the
        first ``name`` up C's bases while they are this file's classes ([] when a base
        of another module comes first). None where that cannot be told (another base
        than a local class on the way, several classes of one name, several bases)."""
        if self.multiple_bases:
            return None
        owner = outermost(info)
        if owner is None or owner.cls is None or self.classes.get(owner.cls.name.value, (None,))[0] is not owner.cls:
            return None
        seen = set()
        bases = self.classes[owner.cls.name.value][1]
        while bases:
            if len(bases) > 1:
                return None
            base = bases[0]
            found = self.classes.get(base)
            if found is None or base in seen:
                return [] if found is None and F.is_model_class(base) else None
            seen.add(base)
            method = self.class_methods[id(found[0])].get(name)
            if method is not None:
                return [method]
            bases = found[1]
        return []

    def overrides(self, func: cst.BaseExpression, info: Optional[FunctionInfo]) -> List[FunctionInfo]:
        """For ``self.m(...)`` in ``info``: the methods ``m`` of subclasses defined in this file."""
        if not (type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self"):
            return []
        owner = outermost(info)
        if owner is None or owner.cls is None:
            return []
        found, todo, seen = [], [owner.cls.name.value], set()
        while todo:
            name = todo.pop()
            for sub in self.subclasses.get(name, ()):
                if id(sub) in seen:
                    continue
                seen.add(id(sub))
                method = self.class_methods[id(sub)].get(func.attr.value)
                if method is not None:
                    found.append(method)
                todo.append(sub.name.value)
        return found

    # --- names and references --------------------------------------------------
    def value_references(self, info: FunctionInfo) -> int:
        """How often ``info``'s name is used other than called: in its enclosing
        function's body for a nested function (several may share a name), in the file
        for a module-level one (``Whole``'s counts)."""
        if info.parent is None:
            if self.whole is None:
                return 1 << 30
            refs = self.whole.name_refs.get(info.name, 0) - self.whole.name_calls.get(info.name, 0)
            # (not the uses of a parameter that shares the name, as runners' ``closure``
            # parameter does: ``if closure is not None: closure()``)
            for other in self.functions:
                if info.name in other.param_names:
                    refs -= sum(1 for n in walk(other.node.body, is_nested_scope)
                                if type(n) is cst.Name and n.value == info.name) - sum(
                        1 for n in walk(other.node.body, is_nested_scope)
                        if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == info.name)
            return refs
        called = set()
        refs = []
        for n in walk(info.parent.node.body):
            if type(n) is cst.Call and type(n.func) is cst.Name and n.func.value == info.name:
                called.add(id(n.func))
            elif type(n) in (cst.FunctionDef, cst.ClassDef):
                called.add(id(n.name))  # (a definition's own name is no use of it)
            elif type(n) is cst.Name and n.value == info.name:
                refs.append(n)
        return sum(1 for n in refs if id(n) not in called)

    def free_names(self, info: FunctionInfo) -> Tuple[str, ...]:
        """The names ``info`` reads but does not bind (its enclosing function's or the
        module's, read when it runs)."""
        found = self._free_of.get(id(info))
        if found is None:
            bound = info.scope.bound
            read = self._names_in.get(id(info))  # (from ``static_callers``' walk)
            if read is None:
                read = {n.value for n in walk(info.node.body, is_nested_scope) if type(n) is cst.Name}
            params = set(info.param_names)
            found = self._free_of[id(info)] = tuple(sorted(n for n in read if n not in bound and n not in params))
        return found

    # --- the call graph ----------------------------------------------------------
    def static_callers(self) -> Dict[int, Optional[Set[int]]]:
        """For each function, the units (``id(None)`` for the module) whose code calls it
        by its name: all that can call it, or None where that is not known (its name used
        other than as what a call calls: handed over, stored, a property; ``forward`` and
        other methods called by the framework; a dunder). An over-approximation by name."""
        called: Dict[str, Set[int]] = defaultdict(set)
        referenced: Set[str] = set()
        for info in [None, *self.functions]:
            root = self.module.body if info is None else info.node.body
            own = _scan_names(root if isinstance(root, (list, tuple)) else [root], id(info), called, referenced)
            if info is not None:
                self._names_in[id(info)] = own
        out: Dict[int, Optional[Set[int]]] = {}
        for info in self.functions:
            name = info.name
            if name in referenced or name in CALL_METHODS or name.startswith("__") or info.opaque:
                out[id(info)] = None
            else:
                out[id(info)] = called.get(name, set())
        return out

    @staticmethod
    def callers_first(units: List[Optional[FunctionInfo]], callers: Dict[int, Optional[Set[int]]]) -> List[Optional[FunctionInfo]]:
        """``units`` with callers before their callees where the calls by name say so (the
        module first; a cycle, or a function of unknown callers, where the file has it)."""
        index = {id(u): i for i, u in enumerate(units)}
        waiting: Dict[int, int] = {}  # unit -> callers not yet placed
        dependents: Dict[int, List[int]] = defaultdict(list)
        for u in units:
            found = callers.get(id(u)) if u is not None else None
            if found is None:
                continue
            known = {c for c in found if c in index and c != id(u)}
            waiting[id(u)] = len(known)
            for c in known:
                dependents[c].append(id(u))
        ready = [i for i, u in enumerate(units) if not waiting.get(id(u))]
        heapq.heapify(ready)
        order: List[Optional[FunctionInfo]] = []
        placed: Set[int] = set()
        while ready:
            i = heapq.heappop(ready)
            u = units[i]
            if id(u) in placed:
                continue
            order.append(u)
            placed.add(id(u))
            for d in dependents.get(id(u), ()):
                waiting[d] -= 1
                if waiting[d] == 0:
                    heapq.heappush(ready, index[d])
        order.extend(u for u in units if id(u) not in placed)  # (a cycle: in the file's order)
        return order


def _bound_names(target) -> List[str]:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [n for el in target.elements for n in _bound_names(el.value)]
    if type(target) is cst.StarredElement:
        return _bound_names(target.value)
    return []


_NUMBERS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)


def _python_constant(expr) -> bool:
    """A literal number or string, a tuple of them, or arithmetic on them (``1e-3``,
    ``-1``, ``2 ** 10``, ``(0.5, 0.5)``)."""
    t = type(expr)
    if t in _NUMBERS or (t is cst.Name and expr.value in ("True", "False", "None")):
        return True
    if t is cst.UnaryOperation:
        return _python_constant(expr.expression)
    if t is cst.BinaryOperation:
        return _python_constant(expr.left) and _python_constant(expr.right)
    if t is cst.Tuple:
        return all(type(el) is cst.Element and _python_constant(el.value) for el in expr.elements)
    return False


def outermost(info: Optional[FunctionInfo]) -> Optional[FunctionInfo]:
    """The module-level function or method ``info`` is (or is nested in)."""
    while info is not None and info.parent is not None:
        info = info.parent
    return info


def _reads_no_instance(info: FunctionInfo) -> bool:
    """A plain ``forward``/``__call__`` (no decorator) whose body never names its first
    parameter nor reaches the instance through ``super()`` or ``__class__``. (Not
    Gluon's ``hybrid_forward``: a block's parameters arrive as its keyword arguments.)"""
    params = info.param_names
    if info.name == "hybrid_forward" or info.node.decorators or not params or params[0] != "self":
        return False
    for n in walk(info.node.body):
        if type(n) is cst.Name and n.value in ("self", "super", "__class__"):
            return False
    return True


def _simple_statements(body):
    """The small statements of a body and of the blocks nested in it (nested functions
    too, whose ``self`` is the method's; not nested classes)."""
    todo = list(statements(body))
    while todo:
        stmt = todo.pop()
        if type(stmt) is cst.SimpleStatementLine:
            yield from stmt.body
        elif type(stmt) is cst.FunctionDef:
            todo.extend(statements(stmt.body))
        elif type(stmt) is not cst.ClassDef:
            for block in child_blocks(stmt):
                todo.extend(block)


def _scan_names(roots, unit: int, called: Dict[str, Set[int]], referenced: Set[str]) -> Set[str]:
    """For ``CallGraph.static_callers``: the names the unit whose code is ``roots`` reads
    itself (not in a nested class, lambda or function header: ``free_names``); into
    ``called``, the names it calls (a call's function, or its attribute) with ``unit``;
    into ``referenced``, every other name and attribute. Two stacks (the unit's own
    nodes, then the others) instead of (node, flag) pairs: ~0.8 s of CPU on torch's tree."""
    name_t, attr_t, call_t, func_t, arg_t = cst.Name, cst.Attribute, cst.Call, cst.FunctionDef, cst.Arg
    class_t, lambda_t = cst.ClassDef, cst.Lambda
    children = iter_children
    mention = referenced.add
    own: Set[str] = set()
    note = own.add
    other: list = []
    todo = list(roots)
    pop, push, push_all = todo.pop, todo.append, todo.extend
    while todo:
        n = pop()
        t = type(n)
        if t is name_t:
            v = n.value
            mention(v)
            note(v)
        elif t is attr_t:
            v = n.attr.value
            mention(v)
            note(v)
            push(n.value)
        elif t is call_t:
            f = n.func
            tf = type(f)
            if tf is name_t:
                v = f.value
                called[v].add(unit)
                note(v)
            elif tf is attr_t:
                v = f.attr.value
                called[v].add(unit)
                note(v)  # (as ``walk`` yields an attribute's name)
                push(f.value)
            else:
                push(f)
            push_all(n.args)
        elif t is arg_t:
            push(n.value)
            if n.keyword is not None:
                push(n.keyword)
        elif t is func_t:
            # (its decorators, defaults and annotations run here; its body is a unit)
            other.extend(n.decorators)
            other.append(n.params)
            if n.returns is not None:
                other.append(n.returns)
        elif t is class_t or t is lambda_t:
            other.extend(children(n))
        else:
            push_all(children(n))
    pop, push, push_all = other.pop, other.append, other.extend
    while other:
        n = pop()
        t = type(n)
        if t is name_t:
            mention(n.value)
        elif t is attr_t:
            mention(n.attr.value)
            push(n.value)
        elif t is call_t:
            f = n.func
            tf = type(f)
            if tf is name_t:
                called[f.value].add(unit)
            elif tf is attr_t:
                called[f.attr.value].add(unit)
                push(f.value)
            else:
                push(f)
            push_all(n.args)
        elif t is func_t:
            push_all(n.decorators)
            push(n.params)
            if n.returns is not None:
                push(n.returns)
        else:
            push_all(children(n))
    return own
