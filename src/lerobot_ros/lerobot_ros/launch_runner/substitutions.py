r"""`$(name arg ...)` substitutions of ROS 2 launch files: parse a string into parts, evaluate parts.

The syntax is that of launch's frontend grammar (launch/share/launch/frontend/grammar.lark, read by
launch/frontend/parse_substitution.py), including the corners where it is not what one would guess:

- text with embedded `$(name args)`; arguments are separated by single spaces;
- a backslash escapes the next character (`\x` -> `x`), except a space, a newline or the end of the
  text (the backslash then stays); a `$`, `(` or `)` right after a backslash is never special, even when
  that backslash is itself escaped (`\\$(var a)` is the text `\$(var a)`);
- an argument may be quoted ('..' or "..", holding spaces and substitutions); inside quotes, the
  arguments of a nested substitution cannot be quoted again: there the other quote character is a plain
  character (in `$(not '$(equals "a" a)')` the inner one compares the three characters `"a"` with `a`);
- an empty quoted argument (`''`) is an empty list of substitutions, not an empty string: `equals` /
  `not-equals` turn it into the text `[]` (so `$(equals '' '')` is true but `$(equals '' $(var empty))`
  is false), boolean substitutions reject it. Such an argument is parsed as `()` here (EMPTY_QUOTED).

Unknown substitutions and wrong argument counts are rejected at parse time, as launch does.
"""

from __future__ import annotations

import math
import os
import random
import re
import shlex
import shutil
import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import yaml

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
    args: tuple  # tuple of values; a value is a tuple of parts (Text | Sub); () is an empty quoted argument


Parts = tuple  # tuple[Text | Sub, ...]
EMPTY_QUOTED: Parts = ()

# name -> (min args, max args); None = no upper bound. The names launch 3.x and launch_ros expose,
# less `param` and `log_dir` / `launch_log_dir` (they need launch's runtime state).
ARITY = {
    "var": (1, 2),
    "env": (1, 2),
    "find-pkg-share": (1, 1),
    "find-pkg-prefix": (1, 1),
    "exec-in-pkg": (2, 2),
    "find-exec": (1, 1),
    "file-content": (1, 1),
    "eval": (1, 1),
    "not": (1, 1),
    "and": (2, 2),
    "or": (2, 2),
    "any": (1, None),
    "all": (1, None),
    "equals": (2, 2),
    "not-equals": (2, 2),
    "if": (2, 3),
    "dirname": (0, 0),
    "filename": (0, 0),
    "anon": (1, 1),
    "command": (1, 2),
}
# Names other launchers accept that ros2 launch does not: a parse error with the replacement.
NOT_IN_ROS2_LAUNCH = {
    "optenv": "ros2 launch has no $(optenv); write $(env NAME '') or $(env NAME DEFAULT)",
    "arg": "ros2 launch has no $(arg) (that is ROS 1 roslaunch); write $(var NAME)",
    "find": "ros2 launch has no $(find) (ROS 1); write $(find-pkg-share PKG)",
}
_ESCAPE = re.compile(r"\\(.)")


def unescape(raw: str) -> str:
    r"""launch's replace_escaped_characters: `\x` -> `x` for any x but a newline; a lone `\` stays."""
    return _ESCAPE.sub(r"\1", raw)


class _Scanner:
    """Recursive descent over the grammar; `quote` is the enclosing quote character of a template, if any."""

    def __init__(self, s: str):
        self.s, self.i = s, 0
        self.notes: list[str] = []  # grammar corners met (see grammar_notes)

    def peek(self, n: int = 1) -> str:
        return self.s[self.i : self.i + n]

    def after_backslash(self) -> bool:
        return self.i > 0 and self.s[self.i - 1] == "\\"

    def starts_substitution(self) -> bool:
        return self.peek(2) == "$(" and not self.after_backslash()

    def error(self, what: str) -> SubstitutionError:
        return SubstitutionError(f"{what} at character {self.i + 1} of '{self.s}'")

    def substitution(self, quote: str | None) -> Sub:
        self.i += 2  # "$("
        start = self.i
        while self.i < len(self.s) and (self.s[self.i].isalnum() or self.s[self.i] in "_-"):
            self.i += 1
        name = self.s[start : self.i]
        if not name or not name[0].isalpha():
            raise self.error("expected a substitution name after '$('")
        args: list[Parts] = []
        while self.peek() == " ":
            self.i += 1
            args.append(self.argument(quote))
        if self.peek() != ")":
            raise self.error(f"expected ')' to close '$({name}'")
        self.i += 1
        if name in NOT_IN_ROS2_LAUNCH:
            raise SubstitutionError(f"unknown substitution '$({name} ...)': {NOT_IN_ROS2_LAUNCH[name]}")
        if name not in ARITY:
            raise SubstitutionError(f"unknown substitution '$({name} ...)'; supported: {', '.join(sorted(ARITY))}")
        lo, hi = ARITY[name]
        if len(args) < lo or (hi is not None and len(args) > hi):
            want = (
                str(lo)
                if lo == hi
                else (f"{lo} or {hi}" if hi == lo + 1 else (f"{lo} to {hi}" if hi is not None else f"at least {lo}"))
            )
            raise SubstitutionError(f"substitution '$({name})' takes {want} argument(s), got {len(args)}")
        return Sub(name, tuple(args))

    def argument(self, quote: str | None) -> Parts:
        r"""One argument: a quoted template (only outside quotes), or text and substitutions up to ' ' or ')'."""
        ch = self.peek()
        if quote is None and ch in ("'", '"'):
            return self.template(ch)
        parts: list = []
        raw = ""
        while self.i < len(self.s):
            ch = self.peek()
            if self.starts_substitution():
                if raw:
                    parts.append(Text(unescape(raw)))
                    raw = ""
                parts.append(self.substitution(quote))
                continue
            if ch == " ":
                break
            if ch in "()$" and not self.after_backslash():
                if ch == ")":
                    break
                if ch == "(":
                    raise self.error("unexpected '(' in a substitution argument (quote the argument or write \\()")
            if ch in "'\"" and not self.after_backslash() and (quote is None or ch == quote):
                where = (
                    "inside a quoted argument, nested arguments cannot be quoted"
                    if quote
                    else "quote the whole argument"
                )
                raise self.error(f"unexpected {ch!r} in a substitution argument ({where})")
            if ch in "'\"" and quote is not None and not self.after_backslash():
                self.notes.append(
                    f"the {ch} in '{self.s}' is a plain character: inside a quoted argument, the "
                    "arguments of a nested substitution cannot be quoted"
                )
            raw += ch
            self.i += 1
        if raw:
            parts.append(Text(unescape(raw)))
        if not parts:
            raise self.error("empty substitution argument (arguments are separated by exactly one space)")
        return tuple(parts)

    def template(self, quote: str) -> Parts:
        self.i += 1
        parts: list = []
        raw = ""
        while True:
            if self.i >= len(self.s):
                raise self.error(f"unterminated {quote}-quoted argument")
            ch = self.peek()
            if ch == quote and not self.after_backslash():
                self.i += 1
                break
            if self.starts_substitution():
                if raw:
                    parts.append(Text(unescape(raw)))
                    raw = ""
                parts.append(self.substitution(quote))
                continue
            raw += ch
            self.i += 1
        if raw:
            parts.append(Text(unescape(raw)))
        if self.peek() not in ("", " ", ")"):
            raise self.error("a quoted argument must be followed by a space or ')'")
        return tuple(parts)  # () for '' or "": launch's empty list of substitutions


def parse(s: str) -> Parts:
    """Split `s` into Text and Sub parts. Raises SubstitutionError."""
    return _parse(s)[0]


def grammar_notes(s: str) -> list[str]:
    """Corners of launch's grammar that `s` runs into, which a reader may not expect (for --check)."""
    return _parse(s)[1]


def _parse(s: str) -> tuple[Parts, list[str]]:
    sc = _Scanner(s)
    parts: list = []
    raw = ""
    while sc.i < len(s):
        if sc.starts_substitution():
            if raw:
                parts.append(Text(unescape(raw)))
                raw = ""
            parts.append(sc.substitution(None))
        else:
            raw += sc.peek()
            sc.i += 1
    if raw or not parts:
        parts.append(Text(unescape(raw)))
    return tuple(parts), list(dict.fromkeys(sc.notes))


def source(parts: Parts, quote: str = "'") -> str:
    """Write `parts` back as launch-file text (for messages): `$(name arg ...)`, empty arguments as ''."""
    out = []
    for p in parts:
        if isinstance(p, Text):
            out.append(p.text)
        else:
            out.append("$(" + " ".join([p.name, *((source(a) if a else quote * 2) for a in p.args)]) + ")")
    return "".join(out)


def walk(parts: Parts):
    """Every Sub in `parts`, outermost first, with its arguments' Subs."""
    for p in parts:
        if isinstance(p, Sub):
            yield p
            for a in p.args:
                yield from walk(a)


def has_substitutions(parts: Parts) -> bool:
    return any(isinstance(p, Sub) for p in parts)


class Scope(Protocol):
    """What evaluating a substitution needs from the launch context."""

    configs: dict
    environ: dict
    file: str
    anon_names: dict


def to_bool(text: str, what: str) -> bool:
    """launch's rule for `if` / `unless` (and respawn): stripped, any case, true|1 / false|0."""
    value = text.strip().lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise SubstitutionError(f"{what} must be true, false, 1 or 0, got '{text}'")


def yaml_bool(text: str, what: str) -> bool:
    """launch's rule for the arguments of not/and/or/any/all: '1' / '0', else a YAML 1.1 boolean
    (true, True, TRUE, yes, on ... but not 'tRuE'), as launch's coerce_to_type reads them."""
    if text in ("1", "0"):
        return text == "1"
    try:
        value = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        value = None
    if isinstance(value, bool):
        return value
    raise SubstitutionError(f"{what} must be a boolean (true/false, 1/0, yes/no, on/off), got '{text}'")


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
    if not cmd.strip():
        raise SubstitutionError("$(command) got an empty command")
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
    """The string value of `parts` in `scope` (an empty quoted argument is ''). Raises SubstitutionError."""
    return "".join(p.text if isinstance(p, Text) else _perform(p, scope) for p in parts)


class _Arg(str):
    """An evaluated argument; `.empty_quoted` marks launch's empty list (written '' or "")."""

    empty_quoted = False


def _arg(parts: Parts, scope: Scope) -> _Arg:
    out = _Arg(evaluate(parts, scope))
    out.empty_quoted = parts == EMPTY_QUOTED
    return out


def _perform(sub: Sub, scope: Scope) -> str:
    if sub.name == "if":  # evaluates only the branch it takes
        branch = 1 if _bool_arg(_arg(sub.args[0], scope), "$(if) condition") else 2
        return evaluate(sub.args[branch], scope) if branch < len(sub.args) else ""
    args = [_arg(a, scope) for a in sub.args]
    handler: Callable[..., str] = _HANDLERS[sub.name]
    return handler(args, scope)


def _bool_arg(value: _Arg, what: str) -> bool:
    if value.empty_quoted:
        raise SubstitutionError(f"{what}: an empty quoted argument ('') is a list, not a boolean, in ros2 launch")
    return yaml_bool(value, what)


def _as_text(value: _Arg) -> str:
    """equals / not-equals: launch's str() of an empty list of substitutions is '[]'."""
    return "[]" if value.empty_quoted else str(value)


def _var(args, scope):
    if args[0] not in scope.configs:
        if len(args) > 1:
            return str(args[1])
        raise SubstitutionError(f"launch configuration '{args[0]}' is not set (declare it with an `arg` or `let`)")
    return scope.configs[args[0]]


def _env(args, scope):
    value = scope.environ.get(args[0], args[1] if len(args) > 1 else None)
    if value is None:
        raise SubstitutionError(
            f"environment variable '{args[0]}' does not exist (give a default: $(env {args[0]} ''))"
        )
    return str(value)


def _find(args, scope, share: bool):
    prefix = ament.package_prefix(args[0], scope.environ)
    if prefix is None:
        raise SubstitutionError(
            f"package '{args[0]}' not found in the ament index (searched: {', '.join(ament.prefixes(scope.environ))})"
        )
    return os.path.join(prefix, "share", args[0]) if share else prefix


def _exec_in_pkg(args, scope):
    try:
        return ament.find_executable(args[1], args[0], scope.environ)
    except LookupError as exc:
        raise SubstitutionError(str(exc)) from None


def _find_exec(args, scope):
    found = shutil.which(args[0], path=scope.environ.get("PATH"))
    if found is None:
        raise SubstitutionError(f"executable '{args[0]}' not found on the PATH")
    return found


def _file_content(args, scope):
    try:
        with open(args[0], encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise SubstitutionError(f"$(file-content {args[0]}): {exc.strerror}") from None


def _eval(args, scope):
    try:
        return str(safe_eval(args[0]))
    except UnsafeExpression as exc:
        raise SubstitutionError(f"$(eval '{args[0]}'): {exc}") from None


def _lower(value: bool) -> str:
    return str(value).lower()


_HANDLERS: dict[str, Callable] = {
    "var": _var,
    "env": _env,
    "find-pkg-share": lambda a, s: _find(a, s, True),
    "find-pkg-prefix": lambda a, s: _find(a, s, False),
    "exec-in-pkg": _exec_in_pkg,
    "find-exec": _find_exec,
    "file-content": _file_content,
    "eval": _eval,
    "not": lambda a, s: _lower(not _bool_arg(a[0], "$(not) argument")),
    "and": lambda a, s: _lower(_bool_arg(a[0], "$(and) argument") and _bool_arg(a[1], "$(and) argument")),
    "or": lambda a, s: _lower(_bool_arg(a[0], "$(or) argument") or _bool_arg(a[1], "$(or) argument")),
    # a list, not a generator: ros2 launch checks every argument, so $(any true '') is an error, not true
    "any": lambda a, s: _lower(any([_bool_arg(x, "$(any) argument") for x in a])),  # noqa: C419
    "all": lambda a, s: _lower(all([_bool_arg(x, "$(all) argument") for x in a])),  # noqa: C419
    "equals": lambda a, s: _lower(_equals(_as_text(a[0]), _as_text(a[1]))),
    "not-equals": lambda a, s: _lower(not _equals(_as_text(a[0]), _as_text(a[1]))),
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
