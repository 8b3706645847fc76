"""`$(eval EXPR)` without Python's eval: a small expression evaluator over the AST.

launch's PythonExpression runs arbitrary Python; here only expressions are allowed: literals
(numbers, strings, True/False/None, lists, tuples), arithmetic, comparisons, `and`/`or`/`not`,
`x if c else y`, indexing, and calls of a few pure functions (abs, min, max, round, int, float, str,
bool, len, and everything in `math`, as `math.pi` or `pi`). Anything else raises UnsafeExpression.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
}
_CMP = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_FUNCS = {
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "len": len,
}
_MATH = {k: getattr(math, k) for k in dir(math) if not k.startswith("_")}


class UnsafeExpression(ValueError):
    """The expression uses something outside the supported subset, or fails to evaluate."""


def _eval(node: ast.AST):
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_eval(e) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(right, (int, float)) and abs(right) > 1000:
            raise UnsafeExpression("exponent too large")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            result = True
            for v in node.values:
                result = _eval(v)
                if not result:
                    return result
            return result
        result = False
        for v in node.values:
            result = _eval(v)
            if result:
                return result
        return result
    if isinstance(node, ast.Compare):
        left = _eval(node.left)
        for op, comp in zip(node.ops, node.comparators):
            if type(op) not in _CMP:
                raise UnsafeExpression(f"comparison {type(op).__name__} is not supported")
            right = _eval(comp)
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body) if _eval(node.test) else _eval(node.orelse)
    if isinstance(node, ast.Subscript):
        return _eval(node.value)[_eval(node.slice)]
    if isinstance(node, ast.Name):
        if node.id in _MATH:
            return _MATH[node.id]
        if node.id in _FUNCS:
            return _FUNCS[node.id]
        raise UnsafeExpression(f"name '{node.id}' is not available")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math":
        if node.attr in _MATH:
            return _MATH[node.attr]
        raise UnsafeExpression(f"math.{node.attr} does not exist")
    if isinstance(node, ast.Call) and not node.keywords:
        func = _eval(node.func)
        if func not in _FUNCS.values() and func not in _MATH.values():
            raise UnsafeExpression(
                "only abs, min, max, round, int, float, str, bool, len and math functions can be called"
            )
        return func(*[_eval(a) for a in node.args])
    raise UnsafeExpression(f"{type(node).__name__} is outside the supported expression subset")


def safe_eval(expression: str):
    """Evaluate `expression` (see module docstring). Raises UnsafeExpression."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise UnsafeExpression(f"invalid expression: {exc.msg}") from None
    try:
        return _eval(tree)
    except UnsafeExpression:
        raise
    except Exception as exc:  # ZeroDivisionError, TypeError, ... from the user's expression
        raise UnsafeExpression(f"{type(exc).__name__}: {exc}") from None
