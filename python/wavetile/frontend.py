"""Builds tile IR from a Python kernel by walking its syntax tree.

Python values (ints, floats, tuples, dtypes) are compile-time constants and compute as
Python; tile values (``Value``) build IR. ``range`` loops and ``if`` statements on tile
values become kernel control flow: the names a loop body or a branch reassigns are carried
through it. Every operation records the file, line and column of the expression it comes
from, so IR dumps and diagnostics point at the kernel's source.
"""
import ast
import builtins
import inspect
import operator
import textwrap

from . import _wavetile as _C
from . import language


class CompilationError(Exception):
    """A kernel that cannot be built; the message starts with ``file:line:col:``."""


_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Mod: operator.mod, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.FloorDiv: operator.floordiv,
           ast.Pow: operator.pow}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne}


def _is_tile(value):
    return isinstance(value, _C.Value)


def _assigned_names(statements):
    """Names that `statements` assign (not inside nested functions), in first-seen order."""
    names = []
    for statement in statements:
        for node in ast.walk(statement):
            targets = []
            if isinstance(node, (ast.Assign,)):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.For):
                targets = [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name) and leaf.id not in names:
                        names.append(leaf.id)
    return names


class KernelSource:
    """A kernel function's syntax tree and where it sits in its file."""

    def __init__(self, fn):
        self.fn = fn
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        try:
            lines, first_line = inspect.getsourcelines(fn)
        except OSError:
            raise CompilationError(f"the source of kernel '{fn.__name__}' is not available: kernels are read "
                                   "from their file (not from `python -c` or an interactive prompt)") from None
        self.column_offset = len(lines[0]) - len(lines[0].lstrip())  # what dedent removes
        self.line_offset = first_line - 1
        module = ast.parse(textwrap.dedent("".join(lines)))
        self.tree = next(node for node in module.body if isinstance(node, (ast.FunctionDef,)))

    def where(self, node):
        line = getattr(node, "lineno", 1) + self.line_offset
        column = getattr(node, "col_offset", 0) + 1 + self.column_offset
        return line, column


class KernelBuilder:
    """Walks one kernel's body with the arguments bound, building its IR."""

    def __init__(self, source, build, arguments):
        self.source = source
        self.build = build
        self.env = dict(arguments)
        self.globals = source.fn.__globals__

    # Errors and locations ------------------------------------------------------------------

    def error(self, node, message):
        line, column = self.source.where(node)
        return CompilationError(f"{self.source.file}:{line}:{column}: error: {message}")

    def located(self, node, build):
        line, column = self.source.where(node)
        _C.push_location(self.source.file, line, column)
        try:
            return build()
        except (TypeError, ValueError, _C.CompilationError) as e:
            if isinstance(e, CompilationError):
                raise
            raise self.error(node, str(e)) from None
        finally:
            _C.pop_location()

    # Statements -----------------------------------------------------------------------------

    def run(self, statements):
        for statement in statements:
            self.statement(statement)

    def statement(self, node):
        handler = getattr(self, "stmt_" + type(node).__name__, None)
        if handler is None:
            raise self.error(node, f"'{type(node).__name__}' statements are not supported in kernels")
        handler(node)

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        self.expr(node.value)

    def stmt_Pass(self, node):
        pass

    def stmt_Return(self, node):
        if node.value is not None:
            raise self.error(node, "kernels return nothing; write results through pointers")

    def stmt_Assign(self, node):
        value = self.expr(node.value)
        for target in node.targets:
            self.bind(target, value)

    def stmt_AnnAssign(self, node):
        if node.value is not None:
            self.bind(node.target, self.expr(node.value))

    def stmt_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "augmented assignment needs a plain name")
        current = self.lookup(node.target)
        operand = self.expr(node.value)
        self.env[node.target.id] = self.located(node, lambda: self.apply_binary(node, node.op, current, operand))

    def bind(self, target, value):
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value) if isinstance(value, (tuple, list)) else None
            if values is None or len(values) != len(target.elts):
                raise self.error(target, "cannot unpack this value into these names")
            for element, item in zip(target.elts, values):
                self.bind(element, item)
        else:
            raise self.error(target, "only names (and tuples of names) can be assigned in kernels")

    def carried(self, node, statements):
        """The names `statements` reassign that exist before them: the values carried through
        a loop or a branch. Python numbers among them become tile scalars (i32 or f32)."""
        names = [n for n in _assigned_names(statements) if n in self.env]
        for name in names:
            value = self.env[name]
            if isinstance(value, bool) or not isinstance(value, (int, float, _C.Value)):
                raise self.error(node, f"'{name}' holds {type(value).__name__}, which cannot change inside "
                                       "kernel control flow")
            if not _is_tile(value):
                dtype = language.i32 if isinstance(value, int) else language.f32
                self.env[name] = self.located(node, lambda v=value, d=dtype: _C.constant(float(v), d))
        return names

    def scoped(self, names, statements):
        """Runs `statements` on a copy of the environment; returns the values of `names`."""
        saved = dict(self.env)
        try:
            self.run(statements)
            results = []
            for name in names:
                value = self.env[name]
                if not _is_tile(value):
                    raise CompilationError(f"{self.source.file}: error: '{name}' must stay a tile value")
                results.append(value)
            return results
        finally:
            self.env = saved

    def stmt_If(self, node):
        condition = self.expr(node.test)
        if not _is_tile(condition):
            self.run(node.body if condition else node.orelse)
            return
        names = self.carried(node, node.body + node.orelse)
        before = [self.env[n] for n in names]
        results = self.located(node, lambda: _C.if_then_else(
            condition, lambda: self.scoped(names, node.body), lambda: self.scoped(names, node.orelse), before))
        self.env.update(zip(names, results))  # names first bound inside the branches end with them

    def stmt_For(self, node):
        if node.orelse:
            raise self.error(node, "for-else is not supported in kernels")
        if not (isinstance(node.iter, ast.Call)):
            raise self.error(node.iter, "kernel loops iterate over range(...) or static_range(...)")
        iterator = self.expr(node.iter.func)
        arguments = [self.expr(a) for a in node.iter.args]
        if iterator is language.static_range:
            for i in range(*arguments):
                self.bind(node.target, i)
                self.run(node.body)
            return
        if iterator is not builtins.range:
            raise self.error(node.iter, "kernel loops iterate over range(...) or static_range(...)")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "a range loop binds one name")
        if len(arguments) == 1:
            arguments = [0] + arguments
        lo, hi, step = (arguments + [1])[:3]
        names = self.carried(node, node.body)
        before = [self.env[n] for n in names]

        def body(i, values):
            saved = dict(self.env)
            try:
                self.env.update(zip(names, values))
                self.env[node.target.id] = i
                self.run(node.body)
                return [self.env[n] for n in names]
            finally:
                self.env = saved

        self.reject_jumps(node)
        results = self.located(node, lambda: _C.for_range(lo, hi, step, before, body))
        self.env.update(zip(names, results))

    def stmt_While(self, node):
        if node.orelse:
            raise self.error(node, "while-else is not supported in kernels")
        self.reject_jumps(node)
        names = self.carried(node, node.body)
        before = [self.env[n] for n in names]

        def bound(values, evaluate):
            saved = dict(self.env)
            try:
                self.env.update(zip(names, values))
                return evaluate()
            finally:
                self.env = saved

        def condition(values):
            test = bound(values, lambda: self.expr(node.test))
            if not _is_tile(test):
                raise self.error(node.test, "a kernel while loop needs a condition on tile values "
                                            "(use static_range for loops counted at build time)")
            return test

        def body(values):
            return bound(values, lambda: (self.run(node.body), [self.env[n] for n in names])[1])

        results = self.located(node, lambda: _C.while_loop(before, condition, body))
        self.env.update(zip(names, results))

    def reject_jumps(self, loop):
        for statement in loop.body:
            for inner in ast.walk(statement):
                if isinstance(inner, (ast.Break, ast.Continue)):
                    raise self.error(inner, "break and continue are not supported in kernel loops")

    # Expressions ----------------------------------------------------------------------------

    def expr(self, node):
        handler = getattr(self, "expr_" + type(node).__name__, None)
        if handler is None:
            raise self.error(node, f"'{type(node).__name__}' expressions are not supported in kernels")
        return handler(node)

    def lookup(self, node):
        name = node.id
        if name in self.env:
            return self.env[name]
        if name in self.globals:
            return self.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise self.error(node, f"name '{name}' is not defined")

    def expr_Name(self, node):
        return self.lookup(node)

    def expr_Constant(self, node):
        return node.value

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def expr_List(self, node):
        return [self.expr(e) for e in node.elts]

    def expr_Attribute(self, node):
        value = self.expr(node.value)
        try:
            return getattr(value, node.attr)
        except AttributeError:
            raise self.error(node, f"{type(value).__name__} has no attribute '{node.attr}'") from None

    def apply_binary(self, node, op, left, right):
        if type(op) not in _BINARY:
            raise self.error(node, f"operator {type(op).__name__} is not supported")
        if (_is_tile(left) or _is_tile(right)) and isinstance(op, (ast.FloorDiv, ast.Pow)):
            raise self.error(node, "'//' and '**' apply to Python numbers; tiles divide with '/' "
                                   "(integers toward zero)")
        return _BINARY[type(op)](left, right)

    def expr_BinOp(self, node):
        left, right = self.expr(node.left), self.expr(node.right)
        return self.located(node, lambda: self.apply_binary(node, node.op, left, right))

    def expr_UnaryOp(self, node):
        value = self.expr(node.operand)
        if isinstance(node.op, ast.USub):
            return self.located(node, lambda: -value)
        if isinstance(node.op, ast.UAdd):
            return value
        if isinstance(node.op, ast.Not):
            if _is_tile(value):
                return self.located(node, lambda: value == 0)
            return not value
        if isinstance(node.op, ast.Invert):
            return self.located(node, lambda: value ^ -1 if _is_tile(value) else ~value)
        raise self.error(node, "unsupported unary operator")

    def expr_Compare(self, node):
        if len(node.ops) != 1:
            raise self.error(node, "chained comparisons are not supported; combine them with & or and")
        left, right = self.expr(node.left), self.expr(node.comparators[0])
        op = type(node.ops[0])
        if op not in _COMPARE:
            raise self.error(node, f"comparison {op.__name__} is not supported")
        return self.located(node, lambda: _COMPARE[op](left, right))

    def expr_BoolOp(self, node):
        values = [self.expr(v) for v in node.values]
        if not any(_is_tile(v) for v in values):
            result = values[0]
            for v in values[1:]:
                result = (result and v) if isinstance(node.op, ast.And) else (result or v)
            return result
        combine = operator.and_ if isinstance(node.op, ast.And) else operator.or_
        result = values[0]
        for v in values[1:]:
            result = self.located(node, lambda a=result, b=v: combine(a, b))
        return result

    def expr_IfExp(self, node):
        condition = self.expr(node.test)
        if not _is_tile(condition):
            return self.expr(node.body if condition else node.orelse)
        a, b = self.expr(node.body), self.expr(node.orelse)
        return self.located(node, lambda: _C.where(condition, a, b))

    def expr_Subscript(self, node):
        value = self.expr(node.value)
        if not _is_tile(value):
            return value[self.expr(node.slice)]
        # tile[:, None]: a new size-1 axis for every None, the others kept.
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        axis, result = 0, value
        for item in items:
            if isinstance(item, ast.Constant) and item.value is None:
                result = self.located(node, lambda r=result, a=axis: r.expand(a))
                axis += 1
            elif isinstance(item, ast.Slice) and item.lower is None and item.upper is None and item.step is None:
                axis += 1
            else:
                raise self.error(item, "tiles are indexed with ':' and None only (use load/store for memory)")
        return result

    def expr_Call(self, node):
        function = self.expr(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.expr(a.value))
            else:
                args.append(self.expr(a))
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        return self.located(node, lambda: function(*args, **kwargs))


class KernelFunction:
    """A parsed kernel and how its arguments are declared."""

    def __init__(self, fn):
        self.fn = fn
        self.name = fn.__name__
        self.source = KernelSource(fn)
        signature = inspect.signature(fn)
        self.params = []  # (name, annotation, default)
        for p in signature.parameters.values():
            annotation = p.annotation
            if isinstance(annotation, str):
                annotation = eval(annotation, fn.__globals__)
            if annotation is inspect.Parameter.empty:
                raise CompilationError(f"{self.source.file}: error: kernel argument '{p.name}' of '{self.name}' "
                                       "needs an annotation (pointer[dtype], a scalar dtype, or constexpr)")
            if not (isinstance(annotation, language._PointerType) or annotation is language.constexpr or
                    annotation in language.SCALAR_DTYPES):
                raise CompilationError(f"{self.source.file}: error: kernel argument '{p.name}' of '{self.name}' "
                                       f"has annotation {annotation!r}; use pointer[dtype], i32, i64, f32, f64 "
                                       "or constexpr")
            default = None if p.default is inspect.Parameter.empty else p.default
            self.params.append((p.name, annotation, default))
        self.runtime_params = [(n, a) for n, a, _ in self.params if a is not language.constexpr]
        self.constexpr_params = [(n, d) for n, a, d in self.params if a is language.constexpr]

    def build(self, constants, within_2gib=(), num_warps=4, num_stages=1, facts=None, narrow_rounded_sums=True):
        """The kernel's module for these constexpr values and pointer promises. `facts` maps
        runtime argument names to what the launch's specialization knows: a pointer's
        alignment in bytes, or an integer's power-of-two divisor."""
        facts = facts or {}
        build = _C.KernelBuild(self.name, num_warps=num_warps, num_stages=num_stages,
                               narrow_rounded_sums=narrow_rounded_sums)
        arguments, pointer_index = {}, 0
        line, column = self.source.where(self.source.tree)
        _C.push_location(self.source.file, line, column)
        try:
            for name, annotation, _ in self.params:
                if isinstance(annotation, language._PointerType):
                    within = bool(within_2gib[pointer_index]) if pointer_index < len(within_2gib) else False
                    arguments[name] = build.pointer(name, annotation.dtype, within_2gib=within,
                                                    alignment=facts.get(name, 0))
                    pointer_index += 1
                elif annotation is language.constexpr:
                    value = constants[name]
                    if isinstance(value, (bool, int)):
                        build.param(name, int(value))
                    arguments[name] = value
                else:
                    arguments[name] = build.scalar(name, annotation, divisibility=facts.get(name, 0))
        finally:
            _C.pop_location()
        builder = KernelBuilder(self.source, build, arguments)
        builder.run(self.source.tree.body)
        try:
            return build.finish()
        except _C.CompilationError as e:
            raise CompilationError(str(e).rstrip()) from None
