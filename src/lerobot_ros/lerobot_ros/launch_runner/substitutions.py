"""`$(name arg ...)` substitutions of ROS 2 launch files: parse a string into parts, evaluate parts.

The syntax follows launch's frontend grammar (launch/frontend/grammar.lark): text with embedded
`$(name args)`; arguments are separated by single spaces, may be quoted ('..' or "..", which may hold
spaces and nested substitutions) and may nest (`$(var $(var which))`); a backslash escapes the next
character. Unknown substitutions and wrong argument counts are rejected at parse time, like launch does.
"""

from __future__ import annotations

import math
import os
import random
import shlex
import socket
import subprocess
from dataclasses import dataclass, field
from typing import Callable, Protocol

from lerobot_ros.launch_runner import ament
from lerobot_ros.launch_runner.safe_eval import UnsafeExpression, safe_eval


class SubstitutionError(ValueError):
    """A substitution string is malformed or cannot be evaluated (the caller adds file/line/tag)."""


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Sub:
    name: str
    args: tuple  # tuple of values; a value is a tuple of parts (Text | Sub)


Parts = tuple  # tuple[Text | Sub, ...]

# name -> (min args, max args); None = no upper bound
ARITY = {
    "var": (1, 1), "env": (1, 2), "optenv": (1, 2), "find-pkg-share": (1, 1), "find-pkg-prefix": (1, 1),
    "eval": (1, 1), "not": (1, 1), "and": (2, 2), "or": (2, 2), "any": (1, None), "all": (1, None),
    "equals": (2, 2), "not-equals": (2, 2), "dirname": (0, 0), "filename": (0, 0), "anon": (1, 1),
    "command": (1, 2),
}


class _Scanner:
    def __init__(self, s: str):
        self.s, self.i = s, 0

    def peek(self, n: int = 1) -> str:
        return self.s[self.i:self.i + n]

    def error(self, what: str) -> SubstitutionError:
        return SubstitutionError(f"{what} at character {self.i + 1} of '{self.s}'")

    def escaped(self) -> str:
        """At a backslash: return the escaped character."""
        if self.i + 1 >= len(self.s):
            raise self.error("dangling backslash")
        ch = self.s[self.i + 1]
        self.i += 2
        return ch

    def substitution(self) -> Sub:
        self.i += 2  # "$("
        start = self.i
        while self.i < len(self.s) and (self.s[self.i].isalnum() or self.s[self.i] in "_-"):
            self.i += 1
        name = self.s[start:self.i]
        if not name or not name[0].isalpha():
            raise self.error("expected a substitution name after '$('")
        args: list[Parts] = []
        while self.peek() == " ":
            self.i += 1
            args.append(self.value())
        if self.peek() != ")":
            raise self.error(f"expected ')' to close '$({name}'")
        self.i += 1
        if name not in ARITY:
            raise SubstitutionError(f"unknown substitution '$({name} ...)'; supported: {', '.join(sorted(ARITY))}")
        lo, hi = ARITY[name]
        if len(args) < lo or (hi is not None and len(args) > hi):
            want = str(lo) if lo == hi else (f"{lo} or {hi}" if hi is not None else f"at least {lo}")
            raise SubstitutionError(f"substitution '$({name})' takes {want} argument(s), got {len(args)}")
        return Sub(name, tuple(args))

    def value(self) -> Parts:
        ch = self.peek()
        if ch in ("'", '"'):
            return self.quoted(ch)
        parts: list = []
        buf = ""
        while self.i < len(self.s):
            ch = self.peek()
            if ch == "\\":
                buf += self.escaped()
            elif self.peek(2) == "$(":
                if buf:
                    parts.append(Text(buf))
                    buf = ""
                parts.append(self.substitution())
            elif ch in " )":
                break
            elif ch in "('\"":
                raise self.error(f"unexpected {ch!r} in a substitution argument (quote the argument)")
            else:
                buf += ch
                self.i += 1
        if buf:
            parts.append(Text(buf))
        if not parts:
            raise self.error("empty substitution argument")
        return tuple(parts)

    def quoted(self, quote: str) -> Parts:
        self.i += 1
        parts: list = []
        buf = ""
        while True:
            if self.i >= len(self.s):
                raise self.error(f"unterminated {quote}-quoted argument")
            ch = self.peek()
            if ch == quote:
                self.i += 1
                break
            if ch == "\\":
                buf += self.escaped()
            elif self.peek(2) == "$(":
                if buf:
                    parts.append(Text(buf))
                    buf = ""
                parts.append(self.substitution())
            else:
                buf += ch
                self.i += 1
        if buf:
            parts.append(Text(buf))
        if self.peek() not in ("", " ", ")"):
            raise self.error("a quoted argument must be followed by a space or ')'")
        return tuple(parts) or (Text(""),)


def parse(s: str) -> Parts:
    """Split `s` into Text and Sub parts. Raises SubstitutionError."""
    sc = _Scanner(s)
    parts: list = []
    buf = ""
    while sc.i < len(s):
        if sc.peek() == "\\":
            buf += sc.escaped()
        elif sc.peek(2) == "$(":
            if buf:
                parts.append(Text(buf))
                buf = ""
            parts.append(sc.substitution())
        else:
            buf += sc.peek()
            sc.i += 1
    if buf or not parts:
        parts.append(Text(buf))
    return tuple(parts)


def has_substitutions(parts: Parts) -> bool:
    return any(isinstance(p, Sub) for p in parts)


class Scope(Protocol):
    """What evaluating a substitution needs from the launch context."""

    configs: dict
    environ: dict
    file: str
    anon_names: dict


def to_bool(text: str, what: str) -> bool:
    """launch's rule for conditions and boolean substitutions: true|1 / false|0, any case."""
    value = text.strip().lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise SubstitutionError(f"{what} must be true, false, 1 or 0, got '{text}'")


def _is_float(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _equals(left: str, right: str) -> bool:
    bools = ("true", "false", "1", "0")
    if left.lower() in bools and right.lower() in bools:
        return (left.lower() in ("true", "1")) == (right.lower() in ("true", "1"))
    if _is_float(left) and _is_float(right):
        return math.isclose(float(left), float(right))
    return left == right


def _command(cmd: str, on_stderr: str, scope: Scope) -> str:
    try:
        proc = subprocess.run(shlex.split(cmd), capture_output=True, text=True, env=scope.environ, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SubstitutionError(f"$(command {cmd}) failed: {exc}") from None
    if proc.returncode != 0:
        raise SubstitutionError(f"$(command {cmd}) exited with status {proc.returncode}: {proc.stderr.strip()}")
    if proc.stderr and on_stderr in ("fail", "capture"):
        if on_stderr == "fail":
            raise SubstitutionError(f"$(command {cmd}) wrote to stderr: {proc.stderr.strip()}")
        return proc.stdout + proc.stderr
    return proc.stdout


def _anon(name: str, scope: Scope) -> str:
    if name not in scope.anon_names:
        raw = f"{name}_{socket.gethostname()}_{os.getpid()}_{random.randint(0, 2**31)}"
        scope.anon_names[name] = "".join(c if c.isalnum() or c == "_" else "_" for c in raw)
    return scope.anon_names[name]


def evaluate(parts: Parts, scope: Scope) -> str:
    """The string value of `parts` in `scope`. Raises SubstitutionError."""
    return "".join(p.text if isinstance(p, Text) else _perform(p, scope) for p in parts)


def _perform(sub: Sub, scope: Scope) -> str:
    args = [evaluate(a, scope) for a in sub.args]
    handler: Callable[..., str] = _HANDLERS[sub.name]
    return handler(args, scope)


def _var(args, scope):
    if args[0] not in scope.configs:
        raise SubstitutionError(f"launch configuration '{args[0]}' is not set (declare it with an `arg` or `let`)")
    return scope.configs[args[0]]


def _env(args, scope):
    value = scope.environ.get(args[0], args[1] if len(args) > 1 else None)
    if value is None:
        raise SubstitutionError(f"environment variable '{args[0]}' does not exist (give a default: $(env {args[0]} DEFAULT))")
    return value


def _find(args, scope, share: bool):
    prefix = ament.package_prefix(args[0], scope.environ)
    if prefix is None:
        raise SubstitutionError(
            f"package '{args[0]}' not found in the ament index (searched: {', '.join(ament.prefixes(scope.environ))})")
    return os.path.join(prefix, "share", args[0]) if share else prefix


def _eval(args, scope):
    try:
        return str(safe_eval(args[0]))
    except UnsafeExpression as exc:
        raise SubstitutionError(f"$(eval '{args[0]}'): {exc}") from None


_HANDLERS: dict[str, Callable] = {
    "var": _var,
    "env": _env,
    "optenv": lambda a, s: s.environ.get(a[0], a[1] if len(a) > 1 else ""),
    "find-pkg-share": lambda a, s: _find(a, s, True),
    "find-pkg-prefix": lambda a, s: _find(a, s, False),
    "eval": _eval,
    "not": lambda a, s: str(not to_bool(a[0], "$(not) argument")).lower(),
    "and": lambda a, s: str(to_bool(a[0], "$(and) argument") and to_bool(a[1], "$(and) argument")).lower(),
    "or": lambda a, s: str(to_bool(a[0], "$(or) argument") or to_bool(a[1], "$(or) argument")).lower(),
    "any": lambda a, s: str(any([to_bool(x, "$(any) argument") for x in a])).lower(),
    "all": lambda a, s: str(all([to_bool(x, "$(all) argument") for x in a])).lower(),
    "equals": lambda a, s: str(_equals(a[0], a[1])).lower(),
    "not-equals": lambda a, s: str(not _equals(a[0], a[1])).lower(),
    "dirname": lambda a, s: os.path.dirname(os.path.abspath(s.file)),
    "filename": lambda a, s: os.path.abspath(s.file),
    "anon": lambda a, s: _anon(a[0], s),
    "command": lambda a, s: _command(a[0], a[1] if len(a) > 1 else "fail", s),
}


@dataclass
class SimpleScope:
    """A Scope for tests and tools: configurations, environment and the current file."""

    configs: dict = field(default_factory=dict)
    environ: dict = field(default_factory=lambda: dict(os.environ))
    file: str = "<string>"
    anon_names: dict = field(default_factory=dict)
