"""The analysis' LibCST tree, built from the stdlib ``ast`` tree the gate already has.

LibCST's parser costs ~45 us a line here, most of a cold run; building from ``ast``
the nodes the analysis reads (with ``N``: no validation, no per-node whitespace) costs
about a seventh of that (the gate's slices of the torch tree, 283 k lines: 1.8 s
against 13.4 s). The tree has LibCST's node classes and
every field the analysis reads (not whitespace, parentheses or comments:
``tests/test_lower.py`` compares it with LibCST's parse on every fixture and test
program, and it matched on every file of the torch and mxnet trees); its code is not
the file's, so positions, ``# noqa`` and fixes come from LibCST's own parse: the engine
parses a file with LibCST only where the analysis of its lowered slice reports
something (``engine._lowered_finds``).

What ``ast`` does not keep is read from the source: the text of number and string
literals (``0x10``, ``r"\\d"``), implicit concatenation (``"a" "b"``), ``elif`` versus
``else: if``, a body on its header's line. f-strings keep their expressions, not their
text (the analysis reads only the expressions). Identifiers are NFKC-normalised by
``ast`` and kept as written by LibCST: a character that is not ASCII outside plain
string literals and comments is ``Unsupported``, as are the two constructs Python
accepts and LibCST's parser does not (``(x): T = v``, ``class A(k=v, *b)``: there
LibCST's error is the finding), an f-string's expressions before Python 3.10 (``ast``'s
columns there are wrong) and Python 3.12 or later (not verified: new f-string
tokenization, type parameters; the analysis then reads LibCST's parse, as for any
``Unsupported``, with the same findings: ``tests/test_interpreters.py`` on 3.13).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
from typing import Callable, Dict, List, Optional, Sequence

import libcst as cst

from scopelint.core.slicing import CONTINUED_LINE, split_lines



_CONTINUATION = re.compile(CONTINUED_LINE.pattern.encode())  # (on the bytes of lines)
_TRY_STAR = getattr(ast, "TryStar", None)  # (Python 3.11)
_MATCH = getattr(ast, "Match", None)  # (Python 3.10)
# Before 3.10, ``ast`` places an f-string's expressions at wrong columns (bpo-35212): the
# text read there (a number's, a string's) would be another's. Such f-strings are not lowered.
_FSTRING_COLUMNS_EXACT = sys.version_info >= (3, 10)


class _Builders:
    """``N.Call(func, args)`` builds what ``cst.Call(func, args)`` does (the same class,
    fields and signature) for a tree that is only analysed: without LibCST's validation
    (``__post_init__``) and with one shared node for each default that LibCST's classes
    make anew per node (whitespace): in a lowered tree, most of its nodes. Half the cost
    of lowering. Built for a class on first use."""

    def __getattr__(self, name: str) -> Callable[..., cst.CSTNode]:
        build = _builder(getattr(cst, name))
        setattr(self, name, build)
        return build


def _builder(cls: type) -> Callable[..., cst.CSTNode]:
    params, lines = [], []
    scope: Dict[str, object] = {"__new": object.__new__, "__cls": cls}
    for i, f in enumerate(dataclasses.fields(cls)):
        assert not f.name.startswith("__"), f.name
        if f.default is not dataclasses.MISSING:
            scope[f"__d{i}"] = f.default
            params.append(f"{f.name}=__d{i}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"__d{i}"] = f.default_factory()
            params.append(f"{f.name}=__d{i}")
        else:
            params.append(f.name)
        scope[f"__s{i}"] = cls.__dict__[f.name].__set__  # (the slot's: a frozen class)
        lines.append(f"    __s{i}(__o, {f.name})\n")
    exec(f"def build({', '.join(params)}):\n    __o = __new(__cls)\n{''.join(lines)}    return __o\n", scope)
    return scope["build"]  # type: ignore[return-value]


N = _Builders()
_DEFAULT = cst.MaybeSentinel.DEFAULT


class Unsupported(Exception):
    """Something this module does not lower (yet): parse the file with LibCST."""


_BINARY = {
    ast.Add: N.Add, ast.Sub: N.Subtract, ast.Mult: N.Multiply, ast.Div: N.Divide,
    ast.MatMult: N.MatrixMultiply, ast.FloorDiv: N.FloorDivide, ast.Mod: N.Modulo, ast.Pow: N.Power,
    ast.LShift: N.LeftShift, ast.RShift: N.RightShift, ast.BitOr: N.BitOr, ast.BitAnd: N.BitAnd,
    ast.BitXor: N.BitXor,
}
_AUGMENTED = {
    ast.Add: N.AddAssign, ast.Sub: N.SubtractAssign, ast.Mult: N.MultiplyAssign, ast.Div: N.DivideAssign,
    ast.MatMult: N.MatrixMultiplyAssign, ast.FloorDiv: N.FloorDivideAssign, ast.Mod: N.ModuloAssign,
    ast.Pow: N.PowerAssign, ast.LShift: N.LeftShiftAssign, ast.RShift: N.RightShiftAssign,
    ast.BitOr: N.BitOrAssign, ast.BitAnd: N.BitAndAssign, ast.BitXor: N.BitXorAssign,
}
_UNARY = {ast.UAdd: N.Plus, ast.USub: N.Minus, ast.Invert: N.BitInvert, ast.Not: N.Not}
_BOOLEAN = {ast.And: N.And, ast.Or: N.Or}
_COMPARE = {
    ast.Eq: N.Equal, ast.NotEq: N.NotEqual, ast.Lt: N.LessThan, ast.LtE: N.LessThanEqual,
    ast.Gt: N.GreaterThan, ast.GtE: N.GreaterThanEqual, ast.Is: N.Is, ast.IsNot: N.IsNot,
    ast.In: N.In, ast.NotIn: N.NotIn,
}
_SIMPLE_STATEMENTS = (
    ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Assert, ast.Delete, ast.Pass,
    ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom,
)


def lower_module(body: Sequence[ast.stmt], source: str, lines: Optional[List[str]] = None) -> cst.Module:
    """The module of the statements ``body`` of ``ast.parse(source)`` (all of them, or
    a plan's: ``slicing.Plan.body``); ``lines``: ``split_lines(source)``, when known."""
    if sys.version_info >= (3, 12):
        # Tried on 3.13 without this: every test program lowers exactly, but type
        # parameters (``def f[T]``) are dropped and an f-string that reuses its quotes
        # inside (PEP 701: ``f"{d["a"]}"``) raises SyntaxError where it is re-parsed.
        raise Unsupported("Python 3.12 or later")
    if not source.isascii():
        _check_identifiers(source)
    return N.Module(body=_Lowerer(source, lines).block(body))


def _check_identifiers(source: str) -> None:
    """``ast`` reads identifiers NFKC-normalised, LibCST as written: lowering is exact
    only when every character that is not ASCII is in a string literal or a comment."""
    if not _LITERAL_OR_COMMENT.sub(_unless_formatted, source).isascii():
        raise Unsupported("an identifier that is not ASCII")


def _unless_formatted(m: "re.Match[str]") -> str:
    """Nothing for a comment or a plain literal; an f-string stays (its expressions
    hold identifiers)."""
    text = m.group()
    prefix = text[:len(text) - len(text.lstrip("bBrRuUfF"))]
    return text if "f" in prefix.lower() else ""


class _Lowerer:
    def __init__(self, source: str, lines: Optional[List[str]] = None):
        # Lines as ``ast`` counts them, as bytes: its columns are UTF-8 offsets.
        lines = split_lines(source) if lines is None else lines
        self.lines: List[bytes] = [line.encode("utf-8", "surrogatepass") for line in lines]

    # --- source text --------------------------------------------------------------------
    def text(self, node: ast.AST) -> str:
        first, last = node.lineno, node.end_lineno
        if first == last:
            return self.lines[first - 1][node.col_offset:node.end_col_offset].decode("utf-8", "surrogatepass")
        parts = [self.lines[first - 1][node.col_offset:]]
        parts.extend(self.lines[first:last - 1])
        parts.append(self.lines[last - 1][:node.end_col_offset])
        return b"".join(parts).decode("utf-8", "surrogatepass")

    def before_on_line(self, node: ast.AST) -> bytes:
        return self.lines[node.lineno - 1][:node.col_offset]

    # --- statements ---------------------------------------------------------------------
    def block(self, stmts: Sequence[ast.stmt]) -> List[cst.BaseStatement]:
        """Statements; simple ones sharing a line (``a; b``) make one line."""
        out: List[cst.BaseStatement] = []
        line: List[cst.BaseSmallStatement] = []
        previous: Optional[ast.stmt] = None
        for stmt in stmts:
            if isinstance(stmt, _SIMPLE_STATEMENTS):
                small = self.small(stmt)
                if line and self.same_line(previous, stmt):
                    line.append(small)
                else:
                    if line:
                        out.append(N.SimpleStatementLine(body=line))
                    line = [small]
                previous = stmt
                continue
            if line:
                out.append(N.SimpleStatementLine(body=line))
                line = []
            out.append(self.compound(stmt))
        if line:
            out.append(N.SimpleStatementLine(body=line))
        return out

    def between(self, line: int, col: int, end_line: int, end_col: int) -> bytes:
        if line == end_line:
            return self.lines[line - 1][col:end_col]
        return b"".join([self.lines[line - 1][col:], *self.lines[line:end_line - 1], self.lines[end_line - 1][:end_col]])

    def same_line(self, a: ast.stmt, b: ast.stmt) -> bool:
        """``b`` follows ``a`` after a ``;`` on the same logical line (backslashes may
        end physical lines; ``a;`` then a new line is not that)."""
        text = _CONTINUATION.sub(b"", self.between(a.end_lineno, a.end_col_offset, b.lineno, b.col_offset))
        return b";" in text and b"\n" not in text and b"\r" not in text

    def suite(self, stmts: Sequence[ast.stmt]) -> cst.BaseSuite:
        """An indented block, or the simple statements on the header's logical line
        (``if x: a``, also after a backslash)."""
        first = stmts[0]
        above = self.lines[first.lineno - 2].rstrip(b"\r\n") if first.lineno > 1 else b""
        if above.endswith(b"\\") and b"#" in above:
            raise Unsupported("a backslash after a '#': a comment's, or a continuation?")
        if self.before_on_line(first).strip() or above.endswith(b"\\"):
            return N.SimpleStatementSuite(body=[self.small(s) for s in stmts])
        return N.IndentedBlock(body=self.block(stmts))

    def orelse(self, stmts: Sequence[ast.stmt]):
        if not stmts:
            return None
        first = stmts[0]
        if len(stmts) == 1 and type(first) is ast.If and self.lines[first.lineno - 1][first.col_offset:].startswith(b"elif"):
            return self.if_(first)
        return N.Else(body=self.suite(stmts))

    def small(self, s: ast.stmt) -> cst.BaseSmallStatement:
        t = type(s)
        E = self.expr
        if t is ast.Expr:
            return N.Expr(value=E(s.value))
        if t is ast.Assign:
            return N.Assign(targets=[N.AssignTarget(target=E(x)) for x in s.targets], value=E(s.value))
        if t is ast.AugAssign:
            return N.AugAssign(target=E(s.target), operator=_AUGMENTED[type(s.op)](), value=E(s.value))
        if t is ast.AnnAssign:
            if not s.simple and type(s.target) is ast.Name:
                raise Unsupported("(x): T = v, which LibCST does not parse")
            return N.AnnAssign(target=E(s.target), annotation=N.Annotation(E(s.annotation)),
                                 value=E(s.value) if s.value is not None else None)
        if t is ast.Return:
            return N.Return(value=E(s.value) if s.value is not None else None)
        if t is ast.Raise:
            return N.Raise(exc=E(s.exc) if s.exc is not None else None,
                             cause=N.From(E(s.cause)) if s.cause is not None else None)
        if t is ast.Assert:
            return N.Assert(test=E(s.test), msg=E(s.msg) if s.msg is not None else None)
        if t is ast.Delete:
            last = s.targets[-1]
            if len(s.targets) == 1 and b"," not in self.between(last.end_lineno, last.end_col_offset, s.end_lineno, s.end_col_offset):
                target = E(last)
            else:  # ``del a, b``, ``del a,``
                target = N.Tuple([N.Element(E(x)) for x in s.targets])
            return N.Del(target=target)
        if t is ast.Pass:
            return N.Pass()
        if t is ast.Break:
            return N.Break()
        if t is ast.Continue:
            return N.Continue()
        if t is ast.Global:
            return N.Global(names=[N.NameItem(N.Name(n)) for n in s.names])
        if t is ast.Nonlocal:
            return N.Nonlocal(names=[N.NameItem(N.Name(n)) for n in s.names])
        if t is ast.Import:
            return N.Import(names=[self.alias(a) for a in s.names])
        if t is ast.ImportFrom:
            names = N.ImportStar() if s.names[0].name == "*" else [self.alias(a) for a in s.names]
            return N.ImportFrom(module=_dotted(s.module) if s.module else None, names=names,
                                  relative=[N.Dot()] * (s.level or 0))
        raise Unsupported(t.__name__)

    def alias(self, a: ast.alias) -> cst.ImportAlias:
        return N.ImportAlias(name=_dotted(a.name), asname=N.AsName(N.Name(a.asname)) if a.asname else None)

    def compound(self, s: ast.stmt) -> cst.BaseCompoundStatement:
        t = type(s)
        E = self.expr
        if t is ast.If:
            return self.if_(s)
        if t is ast.For or t is ast.AsyncFor:
            return N.For(target=E(s.target), iter=E(s.iter), body=self.suite(s.body), orelse=self.else_(s.orelse),
                           asynchronous=N.Asynchronous() if t is ast.AsyncFor else None)
        if t is ast.While:
            return N.While(test=E(s.test), body=self.suite(s.body), orelse=self.else_(s.orelse))
        if t is ast.With or t is ast.AsyncWith:
            items = [N.WithItem(item=E(i.context_expr), asname=N.AsName(E(i.optional_vars)) if i.optional_vars else None)
                     for i in s.items]
            return N.With(items=items, body=self.suite(s.body), asynchronous=N.Asynchronous() if t is ast.AsyncWith else None)
        if t is ast.Try or t is _TRY_STAR:
            handler = cst.ExceptHandler if t is ast.Try else cst.ExceptStarHandler
            handlers = [handler(body=self.suite(h.body), type=E(h.type) if h.type is not None else None,
                                name=N.AsName(N.Name(h.name)) if h.name else None) for h in s.handlers]
            node = cst.Try if t is ast.Try else cst.TryStar
            return node(body=self.suite(s.body), handlers=handlers, orelse=self.else_(s.orelse),
                        finalbody=N.Finally(self.suite(s.finalbody)) if s.finalbody else None)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            return N.FunctionDef(
                name=N.Name(s.name), params=self.parameters(s.args), body=self.suite(s.body),
                decorators=[N.Decorator(E(d)) for d in s.decorator_list],
                returns=N.Annotation(E(s.returns)) if s.returns is not None else None,
                asynchronous=N.Asynchronous() if t is ast.AsyncFunctionDef else None,
            )
        if t is _MATCH:
            cases = [N.MatchCase(pattern=self.pattern(c.pattern), body=self.suite(c.body),
                                   guard=E(c.guard) if c.guard is not None else None) for c in s.cases]
            return N.Match(subject=E(s.subject), cases=cases)
        if t is ast.ClassDef:
            if s.keywords and any(type(b) is ast.Starred and (b.lineno, b.col_offset) > (s.keywords[0].lineno, s.keywords[0].col_offset)
                                  for b in s.bases):
                raise Unsupported("class A(k=v, *b), which LibCST does not parse")
            return N.ClassDef(
                name=N.Name(s.name), body=self.suite(s.body), bases=[self.arg(b) for b in s.bases],
                keywords=[self.keyword(k) for k in s.keywords], decorators=[N.Decorator(E(d)) for d in s.decorator_list],
            )
        raise Unsupported(t.__name__)

    def pattern(self, p: ast.pattern) -> cst.MatchPattern:
        t = type(p)
        if t is ast.MatchValue:
            return N.MatchValue(self.expr(p.value))
        if t is ast.MatchSingleton:
            return N.MatchSingleton(N.Name(str(p.value)))
        if t is ast.MatchAs:
            return N.MatchAs(pattern=self.pattern(p.pattern) if p.pattern is not None else None,
                               name=N.Name(p.name) if p.name is not None else None)
        if t is ast.MatchOr:
            return N.MatchOr([N.MatchOrElement(self.pattern(x)) for x in p.patterns])
        if t is ast.MatchSequence:
            elements = [self.sequence_element(x) for x in p.patterns]
            if _wrapped(self.text(p)):  # (LibCST reads ``case a, b:`` as a list)
                return N.MatchTuple(elements)
            return N.MatchList(elements)
        if t is ast.MatchMapping:
            return N.MatchMapping(
                elements=[N.MatchMappingElement(key=self.expr(k), pattern=self.pattern(x)) for k, x in zip(p.keys, p.patterns)],
                rest=N.Name(p.rest) if p.rest is not None else None,
            )
        if t is ast.MatchClass:
            return N.MatchClass(
                cls=self.expr(p.cls), patterns=[N.MatchSequenceElement(self.pattern(x)) for x in p.patterns],
                kwds=[N.MatchKeywordElement(key=N.Name(k), pattern=self.pattern(x)) for k, x in zip(p.kwd_attrs, p.kwd_patterns)],
            )
        raise Unsupported(t.__name__)

    def sequence_element(self, p: ast.pattern):
        if type(p) is ast.MatchStar:
            return N.MatchStar(name=N.Name(p.name) if p.name is not None else None)
        return N.MatchSequenceElement(self.pattern(p))

    def if_(self, s: ast.If) -> cst.If:
        return N.If(test=self.expr(s.test), body=self.suite(s.body), orelse=self.orelse(s.orelse))

    def else_(self, stmts: Sequence[ast.stmt]) -> Optional[cst.Else]:
        return N.Else(body=self.suite(stmts)) if stmts else None

    def parameters(self, a: ast.arguments) -> cst.Parameters:
        positional = [*a.posonlyargs, *a.args]
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        params = [self.param(p, d) for p, d in zip(positional, defaults)]
        kwonly = [self.param(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
        if a.vararg is not None:
            star_arg = self.param(a.vararg, None, "*")
        elif kwonly:
            star_arg = N.ParamStar()
        else:
            star_arg = _DEFAULT
        n = len(a.posonlyargs)
        return N.Parameters(
            params=params[n:], posonly_params=params[:n], star_arg=star_arg, kwonly_params=kwonly,
            star_kwarg=self.param(a.kwarg, None, "**") if a.kwarg is not None else None,
            posonly_ind=N.ParamSlash() if n else _DEFAULT,
        )

    def param(self, p: ast.arg, default, star: str = "") -> cst.Param:
        return N.Param(
            name=N.Name(p.arg), annotation=N.Annotation(self.expr(p.annotation)) if p.annotation is not None else None,
            default=self.expr(default) if default is not None else None, star=star,
        )

    # --- expressions --------------------------------------------------------------------
    def expr(self, e: ast.AST) -> cst.BaseExpression:
        f = _EXPRESSIONS.get(type(e))
        if f is None:
            raise Unsupported(type(e).__name__)
        return f(self, e)

    def name(self, e: ast.Name) -> cst.Name:
        return N.Name(e.id)

    def attribute(self, e: ast.Attribute) -> cst.Attribute:
        return N.Attribute(value=self.expr(e.value), attr=N.Name(e.attr))

    def arg(self, e: ast.AST) -> cst.Arg:
        if type(e) is ast.Starred:
            return N.Arg(value=self.expr(e.value), star="*")
        return N.Arg(value=self.expr(e))

    def keyword(self, k: ast.keyword) -> cst.Arg:
        if k.arg is None:
            return N.Arg(value=self.expr(k.value), star="**")
        return N.Arg(value=self.expr(k.value), keyword=N.Name(k.arg))

    def call(self, e: ast.Call) -> cst.Call:
        parts = [(a.lineno, a.col_offset, 0, a) for a in e.args] + [(k.lineno, k.col_offset, 1, k) for k in e.keywords]
        if e.keywords and e.args:
            parts.sort(key=lambda p: (p[0], p[1]))
        args = [self.arg(n) if kind == 0 else self.keyword(n) for _, _, kind, n in parts]
        return N.Call(func=self.expr(e.func), args=args)

    def constant(self, e: ast.Constant) -> cst.BaseExpression:
        v = e.value
        if v is None or v is True or v is False:
            return N.Name(str(v))
        if v is ...:
            return N.Ellipsis()
        t = type(v)
        if t is int:
            return N.Integer(self.text(e))
        if t is float:
            return N.Float(self.text(e))
        if t is complex:
            return N.Imaginary(self.text(e))
        if t is str or t is bytes:
            return _strings(self.text(e))
        raise Unsupported(t.__name__)

    def joinedstr(self, e: ast.JoinedStr) -> cst.BaseExpression:
        """Parts: the expressions in order (their text is not kept; see the module
        docstring). Concatenated with other literals, each f-string is lowered from
        its own parse."""
        pieces = _split_literals(self.text(e))
        if len(pieces) == 1:
            return N.FormattedString(parts=self.fstring_parts(e))
        lowered: List[cst.BaseExpression] = []
        for piece in pieces:
            if "f" in piece[:len(piece) - len(piece.lstrip("bBrRuUfF"))].lower():
                inner = ast.parse(piece, mode="eval").body
                lowered.append(N.FormattedString(parts=_Lowerer(piece).fstring_parts(inner)))
            else:
                lowered.append(N.SimpleString(piece))
        node = lowered[-1]
        for piece in reversed(lowered[:-1]):
            node = N.ConcatenatedString(left=piece, right=node)
        return node

    def fstring_parts(self, e: ast.JoinedStr) -> List[cst.BaseFormattedStringContent]:
        parts: List[cst.BaseFormattedStringContent] = []
        for v in e.values:
            if type(v) is ast.FormattedValue:
                if not _FSTRING_COLUMNS_EXACT:
                    raise Unsupported("an f-string's expression before Python 3.10")
                spec = self.fstring_parts(v.format_spec) if v.format_spec is not None else None
                parts.append(N.FormattedStringExpression(expression=self.expr(v.value), format_spec=spec))
        return parts

    def binop(self, e: ast.BinOp) -> cst.BinaryOperation:
        return N.BinaryOperation(left=self.expr(e.left), operator=_BINARY[type(e.op)](), right=self.expr(e.right))

    def unaryop(self, e: ast.UnaryOp) -> cst.UnaryOperation:
        return N.UnaryOperation(operator=_UNARY[type(e.op)](), expression=self.expr(e.operand))

    def boolop(self, e: ast.BoolOp) -> cst.BooleanOperation:
        values = [self.expr(v) for v in e.values]
        node = values[0]
        for v in values[1:]:
            node = N.BooleanOperation(left=node, operator=_BOOLEAN[type(e.op)](), right=v)
        return node

    def compare(self, e: ast.Compare) -> cst.Comparison:
        return N.Comparison(left=self.expr(e.left), comparisons=[
            N.ComparisonTarget(operator=_COMPARE[type(op)](), comparator=self.expr(c)) for op, c in zip(e.ops, e.comparators)
        ])

    def subscript(self, e: ast.Subscript) -> cst.Subscript:
        s = e.slice
        if type(s) is ast.Tuple and not _wrapped(self.text(s)):
            elements = [N.SubscriptElement(self.slice_(x)) for x in s.elts]
        else:
            elements = [N.SubscriptElement(self.slice_(s))]
        return N.Subscript(value=self.expr(e.value), slice=elements)

    def slice_(self, s: ast.AST):
        if type(s) is ast.Slice:
            return N.Slice(
                lower=self.expr(s.lower) if s.lower is not None else None,
                upper=self.expr(s.upper) if s.upper is not None else None,
                step=self.expr(s.step) if s.step is not None else None,
            )
        if type(s) is ast.Starred:
            return N.Index(value=self.expr(s.value), star="*")
        return N.Index(value=self.expr(s))

    def elements(self, elts) -> List[cst.BaseElement]:
        return [N.StarredElement(self.expr(x.value)) if type(x) is ast.Starred else N.Element(self.expr(x)) for x in elts]

    def tuple(self, e: ast.Tuple) -> cst.Tuple:
        return N.Tuple(elements=self.elements(e.elts))

    def list(self, e: ast.List) -> cst.List:
        return N.List(elements=self.elements(e.elts))

    def set(self, e: ast.Set) -> cst.Set:
        return N.Set(elements=self.elements(e.elts))

    def dict(self, e: ast.Dict) -> cst.Dict:
        return N.Dict(elements=[
            N.StarredDictElement(self.expr(v)) if k is None else N.DictElement(key=self.expr(k), value=self.expr(v))
            for k, v in zip(e.keys, e.values)
        ])

    def ifexp(self, e: ast.IfExp) -> cst.IfExp:
        return N.IfExp(test=self.expr(e.test), body=self.expr(e.body), orelse=self.expr(e.orelse))

    def lambda_(self, e: ast.Lambda) -> cst.Lambda:
        return N.Lambda(params=self.parameters(e.args), body=self.expr(e.body))

    def namedexpr(self, e: ast.NamedExpr) -> cst.NamedExpr:
        return N.NamedExpr(target=self.expr(e.target), value=self.expr(e.value))

    def await_(self, e: ast.Await) -> cst.Await:
        return N.Await(expression=self.expr(e.value))

    def yield_(self, e) -> cst.Yield:
        if type(e) is ast.YieldFrom:
            return N.Yield(value=N.From(self.expr(e.value)))
        return N.Yield(value=self.expr(e.value) if e.value is not None else None)

    def starred_expr(self, e: ast.Starred) -> cst.BaseExpression:
        raise Unsupported("a starred expression outside a call, a display or a target")

    def comp_for(self, generators: Sequence[ast.comprehension]) -> cst.CompFor:
        node = None
        for g in reversed(generators):
            node = N.CompFor(
                target=self.expr(g.target), iter=self.expr(g.iter), ifs=[N.CompIf(self.expr(i)) for i in g.ifs],
                inner_for_in=node, asynchronous=N.Asynchronous() if g.is_async else None,
            )
        return node

    def listcomp(self, e: ast.ListComp) -> cst.ListComp:
        return N.ListComp(elt=self.expr(e.elt), for_in=self.comp_for(e.generators))

    def setcomp(self, e: ast.SetComp) -> cst.SetComp:
        return N.SetComp(elt=self.expr(e.elt), for_in=self.comp_for(e.generators))

    def genexp(self, e: ast.GeneratorExp) -> cst.GeneratorExp:
        return N.GeneratorExp(elt=self.expr(e.elt), for_in=self.comp_for(e.generators))

    def dictcomp(self, e: ast.DictComp) -> cst.DictComp:
        return N.DictComp(key=self.expr(e.key), value=self.expr(e.value), for_in=self.comp_for(e.generators))


# (a table of the class's functions: bound methods in an instance would make a cycle)
_EXPRESSIONS: Dict[type, Callable[[_Lowerer, ast.AST], cst.BaseExpression]] = {
    ast.Name: _Lowerer.name, ast.Attribute: _Lowerer.attribute, ast.Call: _Lowerer.call, ast.Constant: _Lowerer.constant,
    ast.BinOp: _Lowerer.binop, ast.UnaryOp: _Lowerer.unaryop, ast.BoolOp: _Lowerer.boolop, ast.Compare: _Lowerer.compare,
    ast.Subscript: _Lowerer.subscript, ast.Tuple: _Lowerer.tuple, ast.List: _Lowerer.list, ast.Set: _Lowerer.set,
    ast.Dict: _Lowerer.dict, ast.IfExp: _Lowerer.ifexp, ast.Lambda: _Lowerer.lambda_, ast.NamedExpr: _Lowerer.namedexpr,
    ast.Await: _Lowerer.await_, ast.Yield: _Lowerer.yield_, ast.YieldFrom: _Lowerer.yield_, ast.ListComp: _Lowerer.listcomp,
    ast.SetComp: _Lowerer.setcomp, ast.GeneratorExp: _Lowerer.genexp, ast.DictComp: _Lowerer.dictcomp,
    ast.JoinedStr: _Lowerer.joinedstr, ast.Starred: _Lowerer.starred_expr,
}


def _dotted(name: str) -> cst.BaseExpression:
    parts = name.split(".")
    node: cst.BaseExpression = N.Name(parts[0])
    for p in parts[1:]:
        node = N.Attribute(value=node, attr=N.Name(p))
    return node


def _strings(text: str) -> cst.BaseExpression:
    """A string literal's text, or the concatenation of several (``"a" "b"``)."""
    pieces = _split_literals(text)
    node: cst.BaseExpression = N.SimpleString(pieces[-1])
    for piece in reversed(pieces[:-1]):
        node = N.ConcatenatedString(left=N.SimpleString(piece), right=node)
    return node


def _wrapped(text: str) -> bool:
    """``text`` is one parenthesised expression: its first "(" closes at its end."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"#":
            m = _LITERAL_OR_COMMENT.match(text, i)
            if m is None:
                raise Unsupported("an unterminated string literal")
            i = m.end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i == n - 1
        i += 1
    return False


def _split_literals(text: str) -> List[str]:
    """The string literals in ``text``, the span of a concatenation of them (with
    whitespace, comments and line continuations between them)."""
    if _LITERAL.fullmatch(text):
        return [text]
    out = []
    i, n = 0, len(text)
    while i < n:
        m = _LITERAL.match(text, i)
        if m is None:
            raise Unsupported("not a string literal")
        out.append(m.group())
        i = _BETWEEN.match(text, m.end()).end()
    return out


# A string literal, as Python's tokenizer reads one (prefix, quotes, escapes; an
# f-string's expressions cannot hold its own quote before Python 3.12), what may sit
# between two concatenated ones, and literals or comments.
_LITERAL = re.compile(
    r"[A-Za-z]{0,3}(?:"
    r"'''(?:[^'\\]|\\.|'(?!''))*'''"  # '''...''' (not across its end: fullmatch)
    r'|"""(?:[^"\\]|\\.|"(?!""))*"""'  # """..."""
    r"|'(?:[^\\'\r\n]|\\.)*'"  # '...'
    r'|"(?:[^\\"\r\n]|\\.)*")',  # "..."
    re.S,
)
_BETWEEN = re.compile(r"(?:[ \t\r\n\x0c]|\\\r?\n|\\\r|#[^\r\n]*)*")
_LITERAL_OR_COMMENT = re.compile(_LITERAL.pattern + r"|#[^\r\n]*", re.S)
