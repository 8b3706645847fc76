"""YAML launch file -> typed entities, rejecting anything `ros2 launch` would reject or we cannot run.

Attribute types follow launch_yaml (no coercion: `default: 30` is an error there, so it is here too:
write `default: '30'`), so that a file this runner accepts also runs under `ros2 launch` unchanged.
"""

from __future__ import annotations

from typing import Any, Literal, NoReturn, TypedDict, cast, overload

from lerobot_ros.launch_runner import entities as E
from lerobot_ros.launch_runner import substitutions as S
from lerobot_ros.launch_runner.errors import LaunchError
from lerobot_ros.launch_runner.yaml_source import LDict, load_yaml

COMMON = ("if", "unless")
PROCESS_KEYS = (
    "output",
    "respawn",
    "respawn_delay",
    "respawn_max_retries",
    "sigterm_timeout",
    "sigkill_timeout",
    "cwd",
    "launch-prefix",
    "env",
    "on_exit",
    "emulate_tty",
)
KEYS = {
    "arg": ("name", "default", "description", "choice"),
    "let": ("name", "value"),
    "set_env": ("name", "value"),
    "unset_env": ("name",),
    "append_env": ("name", "value", "prepend", "separator"),
    "push-ros-namespace": ("namespace",),
    "push_ros_namespace": ("namespace",),
    "log": ("message", "level"),
    "group": ("children", "scoped", "forwarding", "keep"),
    "include": ("file", "arg"),
    "node": ("pkg", "exec", "name", "namespace", "exec_name", "args", "ros_args", "param", "remap") + PROCESS_KEYS,
    "executable": ("cmd", "name", "shell") + PROCESS_KEYS,
}
TAGS = tuple(KEYS)


class _Base(TypedDict):
    """The `Entity` fields every tag has."""

    file: str
    line: int
    tag: str
    if_: S.Parts | None
    unless: S.Parts | None


class _ProcessFields(TypedDict):
    """The `Process` fields `node` and `executable` share (see `_process_fields`)."""

    output: S.Parts | None
    respawn: S.Parts | None
    respawn_delay: float
    respawn_max_retries: int
    sigterm_timeout: float
    sigkill_timeout: float
    cwd: S.Parts | None
    launch_prefix: S.Parts | None
    env: list[tuple]
    on_exit_shutdown: bool


class _Attrs:
    """Typed access to one entity's mapping, with errors that name file, line and tag."""

    def __init__(self, data: LDict, tag: str, file: str, allowed: tuple):
        self.data, self.tag, self.file = data, tag, file
        for key in data:
            if key not in allowed:
                self.fail(f"unknown attribute '{key}' (supported: {', '.join(allowed)})", key)

    def fail(self, message: str, key: str | None = None) -> NoReturn:
        line = self.data.line_of(key) if key is not None else self.data.line
        raise LaunchError(message, self.file, line, self.tag)

    def raw(self, key: str, required: bool = False):
        if key not in self.data:
            if required:
                self.fail(f"missing required attribute '{key}'")
            return None
        return self.data[key]

    # required=True: the key is present (else fail()). An explicit YAML null (`name: ~`) still passes raw()'s
    # presence check and comes back as None; the Literal[True] overloads do not model that edge case.
    @overload
    def string(self, key: str, required: Literal[True]) -> str: ...
    @overload
    def string(self, key: str, required: bool = False) -> str | None: ...
    def string(self, key: str, required: bool = False) -> str | None:
        value = self.raw(key, required)
        if value is not None and not isinstance(value, str):
            self.fail(
                f"attribute '{key}' must be a string, got {type(value).__name__} {value!r} "
                f"(quote it: '{_yaml_text(value)}')",
                key,
            )
        return value

    @overload
    def parts(self, key: str, required: Literal[True]) -> S.Parts: ...
    @overload
    def parts(self, key: str, required: bool = False) -> S.Parts | None: ...
    def parts(self, key: str, required: bool = False) -> S.Parts | None:
        value = self.string(key, required)
        return None if value is None else self.subst(value, key)

    def subst(self, text: str, key: str) -> S.Parts:
        try:
            return S.parse(text)
        except S.SubstitutionError as exc:
            self.fail(f"attribute '{key}': {exc}", key)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
            return value.strip().lower() in ("true", "1")
        self.fail(f"attribute '{key}' must be true or false, got {value!r}", key)

    def number(self, key: str, default: float, kind: type[int] | type[float] = float, minimum: float | None = 0.0):
        value = self.raw(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, kind):
            hint = " (write it with a decimal point, e.g. 2.0)" if kind is float and isinstance(value, int) else ""
            self.fail(
                f"attribute '{key}' must be a{'n integer' if kind is int else ' float'}, got {value!r}{hint}", key
            )
        if minimum is not None and value < minimum:
            self.fail(f"attribute '{key}' must be >= {minimum}, got {value}", key)
        return value

    def mappings(self, key: str) -> list[LDict]:
        value = self.raw(key)
        if value is None:
            return []
        if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
            self.fail(f"attribute '{key}' must be a list of mappings (e.g. - {{name: x, value: y}})", key)
        return value


def _yaml_text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _pairs(attrs: _Attrs, key: str, first: str, second: str) -> list[tuple]:
    out = []
    for item in attrs.mappings(key):
        sub = _Attrs(item, key, attrs.file, (first, second))
        out.append((sub.parts(first, True), sub.parts(second, True)))
    return out


def _entity_list(items: Any, file: str, where_line: int, context: str) -> list[E.Entity]:
    if not isinstance(items, list):
        raise LaunchError(
            f"{context} must be a list of entities (each a one-key mapping like `- node: {{...}}`)",
            file,
            getattr(items, "line", where_line),
        )
    out = []
    for item in items:
        line = getattr(item, "line", getattr(items, "line", where_line))
        if not isinstance(item, dict) or len(item) != 1:
            raise LaunchError(
                f"each entity must be a mapping with exactly one key, its tag (one of: {', '.join(TAGS)})", file, line
            )
        ((tag, body),) = item.items()
        # load_yaml builds every mapping as an LDict
        out.append(parse_entity(tag, body, file, cast(LDict, item).line_of(tag)))
    return out


def parse_entity(tag: str, body: Any, file: str, line: int) -> E.Entity:
    if tag not in KEYS:
        raise LaunchError(f"unsupported tag '{tag}' (supported: {', '.join(TAGS)})", file, line, tag)
    if tag == "group" and isinstance(body, list):
        body_map = LDict(children=body)
        body_map.line, body_map.key_lines = line, {}
        body = body_map
    if not isinstance(body, dict):
        raise LaunchError(f"the body of '{tag}' must be a mapping of attributes", file, line, tag)
    attrs = _Attrs(cast(LDict, body), tag, file, KEYS[tag] + COMMON)  # load_yaml builds every mapping as an LDict
    base = _Base(file=file, line=line, tag=tag, if_=attrs.parts("if"), unless=attrs.parts("unless"))
    if tag == "arg":
        name = attrs.string("name", True)
        choices = None
        if attrs.raw("choice") is not None:
            choices = [_Attrs(c, "choice", file, ("value",)).string("value", True) for c in attrs.mappings("choice")]
        return E.Arg(
            **base, name=name, default=attrs.parts("default"), description=attrs.string("description"), choices=choices
        )
    if tag == "let":
        return E.Let(**base, name=attrs.parts("name", True), value=attrs.parts("value", True))
    if tag == "set_env":
        return E.SetEnv(**base, name=attrs.parts("name", True), value=attrs.parts("value", True))
    if tag == "unset_env":
        return E.UnsetEnv(**base, name=attrs.parts("name", True))
    if tag in ("push-ros-namespace", "push_ros_namespace"):
        return E.PushNamespace(**base, namespace=attrs.parts("namespace", True))
    if tag == "append_env":
        return E.AppendEnv(
            **base,
            name=attrs.parts("name", True),
            value=attrs.parts("value", True),
            prepend=attrs.boolean("prepend", False),
            separator=attrs.parts("separator"),
        )
    if tag == "log":
        return E.Log(**base, message=attrs.parts("message", True), level=attrs.parts("level"))
    if tag == "group":
        children = attrs.raw("children", True)
        return E.Group(
            **base,
            children=_entity_list(children, file, line, "group children"),
            scoped=attrs.boolean("scoped", True),
            forwarding=attrs.boolean("forwarding", True),
            keep=_pairs(attrs, "keep", "name", "value"),
        )
    if tag == "include":
        return E.Include(**base, file_=attrs.parts("file", True), args=_pairs(attrs, "arg", "name", "value"))
    process = _process_fields(attrs)
    if tag == "executable":
        return E.Executable(
            **base,
            **process,
            cmd=attrs.parts("cmd", True),
            shell=attrs.boolean("shell", False),
            label=attrs.parts("name"),
        )
    return E.Node(
        **base,
        **process,
        pkg=attrs.parts("pkg"),
        exec_=attrs.parts("exec", True),
        name=attrs.parts("name"),
        namespace=attrs.parts("namespace"),
        args=attrs.parts("args"),
        ros_args=attrs.parts("ros_args"),
        params=[_param(p, file) for p in attrs.mappings("param")],
        remaps=_pairs(attrs, "remap", "from", "to"),
        label=attrs.parts("exec_name"),
    )


def _process_fields(attrs: _Attrs) -> _ProcessFields:
    on_exit = attrs.string("on_exit")
    if on_exit is not None and on_exit != "shutdown":
        attrs.fail(f"attribute 'on_exit' supports only 'shutdown', got '{on_exit}'", "on_exit")
    attrs.boolean("emulate_tty", False)  # accepted for compatibility; output always goes through a pipe here
    return _ProcessFields(
        output=attrs.parts("output"),
        respawn=attrs.parts("respawn"),
        respawn_delay=attrs.number("respawn_delay", 0.0),
        respawn_max_retries=attrs.number("respawn_max_retries", -1, int, None),
        sigterm_timeout=attrs.number("sigterm_timeout", 5.0),
        sigkill_timeout=attrs.number("sigkill_timeout", 5.0),
        cwd=attrs.parts("cwd"),
        launch_prefix=attrs.parts("launch-prefix"),
        env=_pairs(attrs, "env", "name", "value"),
        on_exit_shutdown=on_exit == "shutdown",
    )


PARAM_TYPES = ("str", "int", "float", "bool", "list[str]", "list[int]", "list[float]", "list[bool]")


def _param(item: LDict, file: str) -> E.ParamValue | E.ParamFile:
    attrs = _Attrs(item, "param", file, ("name", "value", "type", "param", "from", "allow_substs"))
    if attrs.raw("from") is not None:
        if attrs.raw("name") is not None or attrs.raw("value") is not None or attrs.raw("param") is not None:
            attrs.fail("'from' cannot be combined with 'name', 'value' or nested 'param'")
        return E.ParamFile(attrs.parts("from", True), item.line, attrs.boolean("allow_substs", False))
    if attrs.raw("allow_substs") is not None:
        attrs.fail("'allow_substs' can only be used together with 'from'", "allow_substs")
    name = attrs.parts("name")
    if name is None:
        attrs.fail("a param needs 'name' (with 'value' or nested 'param') or 'from'")
    ptype = attrs.raw("type")
    if ptype is not None and ptype not in PARAM_TYPES:
        attrs.fail(f"param type must be one of {', '.join(PARAM_TYPES)}, got {ptype!r}", "type")
    value, nested = attrs.raw("value"), attrs.raw("param")
    if value is not None and nested is not None:
        attrs.fail("'value' and nested 'param' are mutually exclusive")
    if nested is not None:
        if ptype is not None:
            attrs.fail("'type' and nested 'param' are mutually exclusive", "type")
        return E.ParamValue(name, item.line, children=[_param(p, file) for p in attrs.mappings("param")])
    if value is None:
        attrs.fail("a param needs either 'value' or nested 'param'")
    return E.ParamValue(name, item.line, value=_param_value(attrs, value), type=ptype)


def _param_value(attrs: _Attrs, value: Any):
    if isinstance(value, list):
        kinds = {type(v) for v in value}
        if len(kinds) > 1:
            attrs.fail("a list parameter must hold values of one type", "value")
        return [_param_value(attrs, v) for v in value]
    if isinstance(value, str):
        return attrs.subst(value, "value")
    if isinstance(value, (bool, int, float)):
        return value
    attrs.fail(f"param value must be a string, number, boolean or a list of those, got {type(value).__name__}", "value")


def parse_file(path: str) -> E.LaunchFile:
    """Parse a `*.launch.yaml` file into typed entities. Raises LaunchError (file, line, tag)."""
    tree = load_yaml(path)
    if not isinstance(tree, dict) or list(tree) != ["launch"]:
        raise LaunchError(
            "the root of a YAML launch file must be a single key 'launch:' holding a list of entities",
            path,
            getattr(tree, "line", 1),
        )
    root = cast(LDict, tree)  # load_yaml builds every mapping as an LDict
    return E.LaunchFile(path, _entity_list(root["launch"], path, root.line_of("launch"), "'launch'"))
