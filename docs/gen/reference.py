"""The generated pages of the documentation site: every page here is built from the code or the shipped files.

One module so that a renamed flag, parameter or launch argument reaches the site with no edit:
- CLI verbs: `lerobot_ros.cli.main.build_parser()` (the `--help` text itself, and a table of its options);
- nodes: `lerobot_ros.nodes.parameter_tables.node_params()` and `lerobot_ros.configs.markdown_table(cls)`
  (the declared-parameter layer; `ros2 param describe` shows the same), topics from the node's source;
- launch files: parsed and evaluated by `lerobot_ros.launch_runner` (arguments, processes, a Mermaid graph);
- contracts: `config/contracts/*.yaml` through `lerobot_ros.contract.load_contract`;
- messages and services: `msgs/lerobot_ros_msgs/{msg,srv}`;
- Python API: one mkdocstrings page per subpackage;
- the recorder QA picture: `lerobot_ros.record.live_qa.stream_report` on a made-up stream.

`docs/gen/pages.py` writes these pages during `mkdocs build`; tests/e2e/test_docs.py checks them against the CLI.
Each function returns {path under docs/: text} (bytes for pictures).
"""

from __future__ import annotations

import ast
import contextlib
import html
import importlib
import importlib.metadata
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "lerobot_ros" / "lerobot_ros"
LAUNCH = ROOT / "launch"
CONTRACTS = ROOT / "config" / "contracts"
MSGS = ROOT / "msgs" / "lerobot_ros_msgs"
#: `--help` is rendered at this terminal width on the site and in tests/e2e/test_docs.py
HELP_COLUMNS = 100
#: launch arguments switched on for each file's "everything on" graph (where the file declares them)
ALL_ON = {"expert": "true", "record": "true", "viewer": "true", "teleop": "true"}
#: a placeholder policy folder for the graphs (launch files start policy_node only when one is given)
POLICY_PLACEHOLDER = "POLICY_DIR"
#: topics left out of the graphs: every node talks to them
UBIQUITOUS = ("/diagnostics", "/rosout", "/parameter_events")


# ----- small helpers --------------------------------------------------------------------------------
def prose(text: str) -> str:
    """Text from a docstring or a launch file as Markdown: `<`, `>` and `&` escaped outside code spans."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") and p.endswith("`") else html.escape(p, quote=False) for p in parts)


def cell(text: object) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return prose(" ".join(str(text).split())).replace("|", "\\|")


def docstring_of(path: Path) -> str:
    """A module's docstring, read without importing it."""
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


@contextlib.contextmanager
def _columns(n: int):
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(n)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


# ----- CLI ------------------------------------------------------------------------------------------
def cli_parsers():
    """(main parser, {verb: its sub-parser}) from lerobot_ros.cli.main.build_parser()."""
    import argparse

    from lerobot_ros.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return parser, dict(sub.choices)


def help_text(parser) -> str:
    """What `lerobot-ros [VERB] --help` prints at HELP_COLUMNS columns."""
    with _columns(HELP_COLUMNS):
        return parser.format_help()


def _option_rows(parser) -> list[str]:
    import argparse

    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        names = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.metavar or action.dest}`"
        if action.option_strings and action.nargs != 0:
            metavar = action.metavar or (action.dest.upper() if not action.choices else None)
            if metavar:
                names += f" `{metavar}`" if isinstance(metavar, str) else ""
        default = action.default
        shown = "" if default in (None, argparse.SUPPRESS, False) or action.nargs == 0 else f"`{default}`"
        choices = ", ".join(f"`{c}`" for c in action.choices) if action.choices else ""
        required = "yes" if action.required or not action.option_strings else ""
        rows.append(f"| {names} | {required} | {shown} | {choices} | {cell(action.help or '')} |")
    return rows


def cli_pages() -> dict[str, str]:
    """reference/cli/index.md (the verbs) and one page per verb: its `--help` and a table of its options."""
    parser, verbs = cli_parsers()
    index = [
        "# Command line: `lerobot-ros`",
        "",
        "Generated from the parser itself (`lerobot_ros.cli.main.build_parser()`): what each page shows is what",
        f"`lerobot-ros VERB --help` prints (at {HELP_COLUMNS} columns). Exit status: 0 done, 1 an expected failure",
        "(one line saying what and what to do), 2 a bad command line, 130 interrupted.",
        "",
        "| verb | what |",
        "|---|---|",
    ]
    help_of = {a.dest: a.help for a in parser._subparsers._group_actions[0]._choices_actions}
    pages = {}
    for verb, sub in verbs.items():
        index.append(f"| [`{verb}`]({verb}.md) | {cell(help_of.get(verb, ''))} |")
        pages[f"reference/cli/{verb}.md"] = "\n".join(
            [
                f"# `lerobot-ros {verb}`",
                "",
                cell(help_of.get(verb, "")),
                "",
                "## `--help`",
                "",
                "```text",
                help_text(sub).rstrip("\n"),
                "```",
                "",
                "## Options",
                "",
                "| argument | required | default | choices | what |",
                "|---|---|---|---|---|",
                *_option_rows(sub),
                "",
            ]
        )
    index += ["", "## `lerobot-ros --help`", "", "```text", help_text(parser).rstrip("\n"), "```", ""]
    pages["reference/cli/index.md"] = "\n".join(index)
    return pages


# ----- nodes ----------------------------------------------------------------------------------------
def node_executables() -> dict[str, str]:
    """Executable name -> node module (lerobot_ros.nodes.X), from the installed entry points."""
    out = {}
    for ep in importlib.metadata.entry_points(group="console_scripts"):
        module = ep.value.split(":")[0]
        if module.startswith("lerobot_ros.nodes."):
            out[ep.name] = module
    return dict(sorted(out.items()))


def node_param_tables() -> dict[str, tuple[type, str]]:
    """Node module name -> (params dataclass, its Markdown table): the declared-parameter layer, in one place.

    The lead keeps these two functions (they move with the params dataclasses): update only this function.
    """
    from lerobot_ros.configs import markdown_table
    from lerobot_ros.nodes.parameter_tables import node_params

    return {module: (cls, markdown_table(cls)) for module, cls in node_params().items()}


@dataclass
class NodeTopics:
    """Topics a node names in its source (relative names stay relative), and parameters that name topics."""

    publishes: list = field(default_factory=list)  # (message type, topic)
    subscribes: list = field(default_factory=list)
    topic_params: dict = field(default_factory=dict)  # "pub"/"sub" -> [parameter name]
    camera_topics: bool = False  # publishes through lerobot_ros.ros.camera_topics.CameraTopics


def node_topics(module: str) -> NodeTopics:
    """Scan a node module's source for create_publisher / create_subscription calls."""
    path = ROOT / "src" / "lerobot_ros" / (module.replace(".", "/") + ".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = NodeTopics()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "CameraTopics":
            out.camera_topics = True
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        kind = {"create_publisher": "pub", "create_subscription": "sub"}.get(node.func.attr)
        if kind is None or len(node.args) < 2:
            continue
        msg = ast.unparse(node.args[0])
        msg = msg if msg.isidentifier() else "(from the contract)"
        topic = node.args[1]
        if isinstance(topic, ast.Constant) and isinstance(topic.value, str):
            (out.publishes if kind == "pub" else out.subscribes).append((msg, topic.value))
        elif isinstance(topic, ast.Attribute) and topic.attr.endswith("_topic"):
            out.topic_params.setdefault(kind, []).append(topic.attr)
    return out


def _first_paragraph(doc: str) -> str:
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")


# ----- launch files ---------------------------------------------------------------------------------
def launch_files() -> list[Path]:
    return sorted(LAUNCH.glob("*.launch.yaml"))


def declared_args(path: Path) -> list:
    """Every `arg` of a file, its groups and its includes (whatever their conditions), first declaration wins."""
    from lerobot_ros.launch_runner import entities as E
    from lerobot_ros.launch_runner import substitutions as S
    from lerobot_ros.launch_runner.parser import parse_file

    def walk(items, seen):
        for ent in items:
            if isinstance(ent, E.Arg):
                yield ent
            elif isinstance(ent, E.Group):
                yield from walk(ent.children, seen)
            elif isinstance(ent, E.Include):
                try:
                    inc = os.path.abspath(S.evaluate(ent.file_, S.SimpleScope(configs={}, file=ent.file)))
                except S.SubstitutionError:
                    continue
                if inc not in seen and os.path.isfile(inc) and inc.endswith((".yaml", ".yml")):
                    seen.add(inc)
                    yield from walk(parse_file(inc).entities, seen)

    out, names = [], set()
    for arg in walk(parse_file(str(path)).entities, {str(path.resolve())}):
        if arg.name not in names:
            names.add(arg.name)
            out.append(arg)
    return out


def includes(path: Path) -> list[str]:
    """Launch files this one includes (by file name), in order."""
    from lerobot_ros.launch_runner import entities as E
    from lerobot_ros.launch_runner import substitutions as S
    from lerobot_ros.launch_runner.parser import parse_file

    found = []

    def walk(items):
        for ent in items:
            if isinstance(ent, E.Group):
                walk(ent.children)
            elif isinstance(ent, E.Include):
                name = os.path.basename(S.source(ent.file_))
                if name not in found:
                    found.append(name)

    walk(parse_file(str(path)).entities)
    return found


def header_comment(path: Path) -> tuple[str, list[str]]:
    """The comment block a launch file opens with: (prose, example command lines indented in it)."""
    prose_lines, examples = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        if line.startswith("#   ") and line[4:].lstrip().startswith(("lerobot-ros", "ros2", "...")):
            examples.append(line[4:].rstrip())
        else:
            prose_lines.append(line[1:].strip())
    return " ".join(prose_lines).strip(), examples


@dataclass
class LaunchedNode:
    label: str
    executable: str | None
    package: str | None
    name: str  # full node name, /ns/name
    namespace: str
    params: dict
    remaps: list  # (from, to)
    source: str


def plan_nodes(path: Path, args: dict) -> list[LaunchedNode]:
    """The processes `lerobot-ros launch FILE args` would start (nothing is started), with their parameters."""
    from lerobot_ros.launch_runner import evaluate_file

    plan = evaluate_file(str(path), dict(args), collect_missing=True)
    try:
        out = []
        for p in plan.processes:
            params, remaps = {}, []
            cmd = list(p.cmd)
            for i, word in enumerate(cmd):
                if word == "--params-file" and i + 1 < len(cmd):
                    params.update(_params_from_file(cmd[i + 1], p))
                elif word == "-p" and i + 1 < len(cmd) and ":=" in cmd[i + 1]:
                    k, v = cmd[i + 1].split(":=", 1)
                    params[k] = yaml.safe_load(v)
                elif word == "-r" and i + 1 < len(cmd) and ":=" in cmd[i + 1] and not cmd[i + 1].startswith("__"):
                    remaps.append(tuple(cmd[i + 1].split(":=", 1)))
            ns = p.namespace or "/"
            name = p.node_name or p.executable or p.label
            full = (ns.rstrip("/") + "/" + name) if ns != "/" else "/" + name
            out.append(LaunchedNode(p.label, p.executable, p.package, full, ns, params, remaps, p.source))
        return out
    finally:
        plan.cleanup()


def _params_from_file(path: str, spec) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f) or {}
    except OSError:
        return {}
    out = {}
    ns = (spec.namespace or "").rstrip("/")
    full = f"{ns}/{spec.node_name}" if spec.node_name else None
    for key, body in data.items():
        body = body or {}
        if key in ("/**", full, (full or "").lstrip("/"), spec.node_name) and isinstance(body, dict):
            out.update(body.get("ros__parameters", {}) or {})
    return out


def resolve_topic(name: str, node: LaunchedNode) -> str:
    """A topic name as the node resolves it: absolute, relative to its namespace, or private (~/)."""
    if name.startswith("~/"):
        name = node.name + "/" + name[2:]
    elif not name.startswith("/"):
        name = node.namespace.rstrip("/") + "/" + name
    for src, dst in node.remaps:
        if resolve_topic_plain(src, node) == name:
            return resolve_topic_plain(dst, node)
    return name


def resolve_topic_plain(name: str, node: LaunchedNode) -> str:
    if name.startswith("~/"):
        return node.name + "/" + name[2:]
    return name if name.startswith("/") else node.namespace.rstrip("/") + "/" + name


def _contract_topics(value) -> tuple[list, list, str | None]:
    """(observation topics, action topics, task topic) of a contract name or path, empty when it does not load."""
    from lerobot_ros.contract import load_contract

    try:
        contract = load_contract(str(value))
    except Exception:  # a contract given as a launch argument that names no file here: draw no contract edges
        return [], [], None
    obs = [f.topic for n, f in contract.features.items() if n != "action"]
    act = [f.topic for n, f in contract.features.items() if n == "action"]
    return obs, act, contract.task.topic


def node_edges(node: LaunchedNode, params_defaults: dict) -> tuple[set, set]:
    """(published, subscribed) topic names of one launched node, from its source and its parameters."""
    executables = node_executables()
    module = executables.get(node.executable or "")
    if module is None:
        return set(), set()
    scan = node_topics(module)
    values = {**params_defaults.get(module, {}), **node.params}
    pubs = {resolve_topic(t, node) for _, t in scan.publishes}
    subs = {resolve_topic(t, node) for _, t in scan.subscribes}
    for kind, names in scan.topic_params.items():
        for pname in names:
            topic = values.get(pname)
            if isinstance(topic, str) and topic:
                (pubs if kind == "pub" else subs).add(resolve_topic(topic, node))
    if scan.camera_topics:
        cams = values.get("cameras") or [values.get("camera_name") or "camera"]
        for cam in cams if isinstance(cams, list) else [cams]:
            pubs |= {resolve_topic(f"{cam}/{t}", node) for t in ("image_raw", "image_raw/compressed", "camera_info")}
    if "contract" in values and module.endswith(("policy_node", "episode_recorder_node", "viewer_node")):
        obs, act, task = _contract_topics(values["contract"])
        subs |= set(obs) | ({task} if task else set())
        if module.endswith("policy_node"):
            pubs |= {values.get("action_topic") or a for a in act}
        else:
            subs |= set(act)
    return pubs - set(UBIQUITOUS), subs - set(UBIQUITOUS)


def _params_defaults() -> dict:
    """Node module -> {parameter: default}, from the params dataclasses."""
    import dataclasses

    out = {}
    for module, (cls, _table) in node_param_tables().items():
        out[f"lerobot_ros.nodes.{module}"] = {
            f.name: (f.default if f.default is not dataclasses.MISSING else f.default_factory())
            for f in dataclasses.fields(cls)
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        }
    return out


def mermaid(nodes: list[LaunchedNode], defaults: dict) -> str:
    """A flowchart: nodes as boxes, topics as rounded boxes, arrows publisher -> topic -> subscriber."""
    lines = ["```mermaid", "flowchart LR"]
    topic_ids: dict[str, str] = {}

    def tid(topic: str) -> str:
        if topic not in topic_ids:
            topic_ids[topic] = f"t{len(topic_ids)}"
            lines.append(f'  {topic_ids[topic]}(["{topic}"])')
        return topic_ids[topic]

    for i, node in enumerate(nodes):
        exe = node.executable or node.label
        lines.append(f'  n{i}["<b>{node.name}</b><br/>{exe}"]')
    for i, node in enumerate(nodes):
        pubs, subs = node_edges(node, defaults)
        for topic in sorted(pubs):
            lines.append(f"  n{i} --> {tid(topic)}")
        for topic in sorted(subs):
            lines.append(f"  {tid(topic)} --> n{i}")
    lines.append("  classDef topic fill:#eef,stroke:#88a")
    if topic_ids:
        lines.append("  class " + ",".join(topic_ids.values()) + " topic")
    lines.append("```")
    return "\n".join(lines)


def _all_on_args(path: Path) -> dict:
    names = {a.name for a in declared_args(path)}
    args = {k: v for k, v in ALL_ON.items() if k in names}
    for policy_arg in ("policy.path", "policy_path"):
        if policy_arg in names:
            args[policy_arg] = POLICY_PLACEHOLDER
    return args


def launch_pages() -> dict[str, str]:
    """reference/launch/index.md and one page per launch file: arguments, processes and their topic graph."""
    from lerobot_ros.launch_runner import substitutions as S

    defaults = _params_defaults()
    index = [
        "# Launch files",
        "",
        "Generated from the files in `launch/` (installed to `share/lerobot_ros/launch`), parsed and evaluated by",
        "`lerobot_ros.launch_runner`, the same code `lerobot-ros launch` runs. Each file runs under",
        "`ros2 launch lerobot_ros NAME.launch.yaml` and `lerobot-ros launch NAME` alike",
        "(see [the launch runner](../launch-runner.md)).",
        "",
        "| file | what |",
        "|---|---|",
    ]
    pages = {}
    for path in launch_files():
        name = path.name.removesuffix(".launch.yaml")
        header, examples = header_comment(path)
        index.append(f"| [`{name}`]({name}.md) | {cell(header.split('. ')[0])} |")
        page = [f"# `{name}`", "", prose(header), ""]
        page += [
            "```bash",
            f"lerobot-ros launch {name} [name:=value ...]",
            f"ros2 launch lerobot_ros {path.name} [name:=value ...]   # with a ROS 2 install",
            *examples,
            "```",
            "",
        ]
        inc = includes(path)
        if inc:
            page += [
                "Includes: "
                + ", ".join(
                    f"[`{i}`]({i.removesuffix('.launch.yaml')}.md)" if (LAUNCH / i).is_file() else f"`{i}`" for i in inc
                )
                + ".",
                "",
            ]
        page += ["## Arguments", "", "| argument | default | description | declared in |", "|---|---|---|---|"]
        for arg in declared_args(path):
            default = "(required)" if arg.default is None else f"`{S.source(arg.default) or chr(39) * 2}`"
            choices = f" (one of: {', '.join(arg.choices)})" if arg.choices else ""
            origin = os.path.basename(arg.file)
            page.append(f"| `{arg.name}` | {cell(default)} | {cell((arg.description or '') + choices)} | `{origin}` |")
        variants = [("With the defaults", {})]
        on = _all_on_args(path)
        if on:
            variants.append(("With " + " ".join(f"`{k}:={v}`" for k, v in on.items()), on))
        for title, args in variants:
            page += ["", f"## {title}", ""]
            try:
                nodes = plan_nodes(path, args)
            except Exception as exc:  # shown on the page: a file that does not evaluate is worth seeing
                page += [f"Does not evaluate here: `{cell(exc)}`", ""]
                continue
            if not nodes:
                page += ["Starts no process.", ""]
                continue
            page += ["| process | executable | node | from |", "|---|---|---|---|"]
            for n in nodes:
                exe = f"`{n.package}/{n.executable}`" if n.package else f"`{n.executable or n.label}`"
                page.append(f"| `{n.label}` | {exe} | `{n.name}` | `{os.path.basename(n.source.split(':')[0])}` |")
            page += ["", mermaid(nodes, defaults), ""]
        page += [
            "Topics come from each node's source (its publishers and subscriptions), the parameters that name",
            "topics, the contract of `policy_node`, `episode_recorder` and `viewer_node`, and the remappings;",
            "`/diagnostics` and `/rosout`, which every node uses, are left out.",
            "",
        ]
        pages[f"reference/launch/{name}.md"] = "\n".join(page)
    pages["reference/launch/index.md"] = "\n".join(index) + "\n"
    return pages


# ----- nodes (pages) --------------------------------------------------------------------------------
def node_pages() -> dict[str, str]:
    """reference/nodes/index.md and one page per executable: what it is, topics, parameters, launch files."""
    from lerobot_ros.ros.parameters import BUILTIN_DESCRIPTIONS

    tables = node_param_tables()
    started_by: dict[str, list[str]] = {}
    for path in launch_files():
        name = path.name.removesuffix(".launch.yaml")
        with contextlib.suppress(Exception):
            for n in plan_nodes(path, _all_on_args(path)):
                if n.package == "lerobot_ros" and n.executable:
                    started_by.setdefault(n.executable, [])
                    if name not in started_by[n.executable]:
                        started_by[n.executable].append(name)
    index = [
        "# Nodes",
        "",
        "Every executable of the `lerobot_ros` package (`ros2 run lerobot_ros NAME`, or `.venv/bin/NAME`).",
        "Parameters come from each node's config (`lerobot_ros.configs`, declared by `lerobot_ros.ros.parameters`): what",
        "`ros2 param describe` shows. *live* parameters take effect when set at run time (`ros2 param set`);",
        "setting a read-only one is refused with the reason. Every node also has "
        + ", ".join(f"`{n}`" for n in BUILTIN_DESCRIPTIONS)
        + ". All parameters on one page: [node parameters](../node-parameters.md).",
        "",
        "| executable | what |",
        "|---|---|",
    ]
    pages = {}
    for exe, module in node_executables().items():
        short = module.rsplit(".", 1)[1]
        doc = docstring_of(ROOT / "src" / "lerobot_ros" / (module.replace(".", "/") + ".py"))
        index.append(f"| [`{exe}`]({exe}.md) | {cell(_strip_name(_first_paragraph(doc), exe, short))} |")
        page = [
            f"# `{exe}`",
            "",
            prose(doc),
            "",
            "```bash",
            f"ros2 run lerobot_ros {exe} --ros-args -p NAME:=VALUE",
            "```",
            "",
        ]
        scan = node_topics(module)
        if scan.publishes or scan.subscribes or scan.topic_params or scan.camera_topics:
            page += ["## Topics", "", "Names as the node gives them (relative ones resolve in its namespace).", ""]
            page += ["| direction | topic | type |", "|---|---|---|"]
            for kind, items in (("publishes", scan.publishes), ("subscribes", scan.subscribes)):
                for msg, topic in items:
                    page.append(f"| {kind} | `{topic}` | `{msg}` |")
            for kind, names in scan.topic_params.items():
                for pname in names:
                    label = "publishes" if kind == "pub" else "subscribes"
                    page.append(f"| {label} | the parameter `{pname}` | |")
            if scan.camera_topics:
                page.append(
                    "| publishes | `<camera>/image_raw`, `<camera>/image_raw/compressed`, `<camera>/camera_info` | `Image`, `CompressedImage`, `CameraInfo` |"
                )
            if short in ("policy_node", "episode_recorder_node", "viewer_node"):
                page.append("| subscribes | every topic of its `contract` | |")
            page.append("")
        if short in tables:
            page += ["## Parameters", "", tables[short][1], ""]
        if exe in started_by:
            links = ", ".join(f"[`{f}`](../launch/{f}.md)" for f in started_by[exe])
            page += ["## Started by", "", f"Launch files: {links}.", ""]
        pages[f"reference/nodes/{exe}.md"] = "\n".join(page)
    pages["reference/nodes/index.md"] = "\n".join(index) + "\n"
    return pages


def _strip_name(text: str, *names: str) -> str:
    """A node docstring's summary without the leading `name:` it repeats."""
    return re.sub(r"^`?[a-z_]+`?:\s*", "", text)


# ----- contracts ------------------------------------------------------------------------------------
def contract_pages() -> dict[str, str]:
    """One page per shipped contract: its features as a table (defaults filled in by the loader)."""
    from lerobot_ros.contract import load_contract

    pages = {}
    rows = ["| contract | robot_type | fps | features |", "|---|---|---|---|"]
    for path in sorted(CONTRACTS.glob("*.yaml")):
        c = load_contract(path)
        name = path.stem
        rows.append(f"| [`{name}`]({name}.md) | `{c.robot_type}` | {c.fps} | {len(c.features)} |")
        comment = "\n".join(
            line[1:].strip() for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")
        )
        page = [f"# Contract `{name}`", "", prose(c.description or ""), "", prose(comment).replace("\n", "  \n"), ""]
        page += [f"`robot_type: {c.robot_type}`, `fps: {c.fps}`", ""]
        if c.task.topic or c.task.default:
            page += [
                f"Task: topic `{c.task.topic}`" if c.task.topic else f"Task: `{c.task.default}`",
                "",
            ]
        if c.episode_boundary:
            page += [f"Episode boundary: `{c.episode_boundary.topic}`", ""]
        page += [
            "| feature | topic | type | qos | timeline | alignment | shape / names |",
            "|---|---|---|---|---|---|---|",
        ]
        for fname, f in c.features.items():
            tol = f", {f.alignment.tolerance_ns / 1e6:g} ms" if f.alignment.tolerance_ns is not None else ""
            shape = f"`{list(f.shape)}`" if f.shape else ", ".join(f"`{n}`" for n in f.names)
            page.append(
                f"| `{fname}` | `{f.topic}` | `{f.msg_type}` | `{f.qos}` | `{f.timeline}` | "
                f"`{f.alignment.policy}`{tol} | {shape} |"
            )
        page += ["", "```yaml", path.read_text(encoding="utf-8").rstrip("\n"), "```", ""]
        pages[f"reference/contracts/{name}.md"] = "\n".join(page)
    pages["reference/contracts/shipped.md"] = "\n".join(
        [
            "# Shipped contracts",
            "",
            "Generated from `config/contracts/*.yaml` (installed to `share/lerobot_ros/config/contracts`); pass a",
            "short name (`contract:=so101`, `--contract so101`) or a path. The schema: [contracts](index.md).",
            "",
            *rows,
            "",
        ]
    )
    return pages


def topic_table() -> str:
    """Every topic of the shipped contracts: which contract reads it as which feature."""
    from lerobot_ros.contract import load_contract

    rows: dict[str, list[str]] = {}
    types: dict[str, str] = {}
    for path in sorted(CONTRACTS.glob("*.yaml")):
        c = load_contract(path)
        for fname, f in c.features.items():
            rows.setdefault(f.topic, []).append(f"[`{path.stem}`](contracts/{path.stem}.md) `{fname}`")
            types[f.topic] = f.msg_type
        if c.task.topic:
            rows.setdefault(c.task.topic, []).append(f"[`{path.stem}`](contracts/{path.stem}.md) task")
            types.setdefault(c.task.topic, c.task.msg_type)
    out = ["| topic | type | read by |", "|---|---|---|"]
    for topic in sorted(rows):
        out.append(f"| `{topic}` | `{types[topic]}` | {', '.join(rows[topic])} |")
    return "\n".join(out)


# ----- messages -------------------------------------------------------------------------------------
def _fields(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """(description, [(type, name, comment)]) of a .msg section: the comment lines a section opens with
    describe it; the comment lines right above a later field describe that field."""
    out, comment, lead = [], [], None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            comment.append(s.lstrip("#").strip())
            continue
        if lead is None and (s or comment):
            lead, comment = " ".join(comment), []
        if not s:
            comment = []
            continue
        decl = s.split("#", 1)[0].strip()
        kind, _, rest = decl.partition(" ")
        if "=" in rest:  # a constant: TYPE NAME=VALUE
            name, _, value = rest.partition("=")
            out.append((kind, f"{name.strip()} = {value.strip()}", " ".join(comment) or "constant"))
        elif rest:
            out.append((kind, rest.split()[0], " ".join(comment)))
        comment = []
    return lead or " ".join(comment), out


def message_page() -> dict[str, str]:
    """reference/messages.md: lerobot_ros_msgs' messages and services, field by field."""
    page = [
        "# Messages and services",
        "",
        "The `lerobot_ros_msgs` interface package (`msgs/lerobot_ros_msgs`), generated from its definitions.",
        "Everything else on the topics is a standard ROS 2 message (see [topics](topics.md)).",
        "",
    ]
    for kind, folder in (("msg", "Messages"), ("srv", "Services")):
        page += [f"## {folder}", ""]
        for path in sorted((MSGS / kind).glob(f"*.{kind}")):
            text = path.read_text(encoding="utf-8")
            page += [f"### `lerobot_ros_msgs/{kind}/{path.stem}`", ""]
            sections = text.split("\n---\n") if kind == "srv" else [text]
            for title, section in zip(("request", "response") if kind == "srv" else ("fields",), sections):
                lead, rows = _fields(section)
                page += [f"**{title}**", ""] if kind == "srv" else []
                page += [prose(lead), ""] if lead else []
                if rows:
                    page += ["| field | type | what |", "|---|---|---|"]
                    page += [f"| `{n}` | `{t}` | {cell(c)} |" for t, n, c in rows]
                else:
                    page += ["(empty)"]
                page.append("")
            page += [
                f'??? note "{path.name}"',
                "",
                "    ```text",
                *("    " + line for line in text.rstrip("\n").splitlines()),
                "    ```",
                "",
            ]
    return {"reference/messages.md": "\n".join(page)}


# ----- Python API -----------------------------------------------------------------------------------
def api_pages() -> dict[str, str]:
    """One mkdocstrings page per subpackage of lerobot_ros, and an index with each one's summary."""
    index = [
        "# Python API",
        "",
        "The library under the nodes, one page per subpackage, from the docstrings (mkdocstrings). Layers and",
        "what may import what: [architecture](../../explanation/architecture.md).",
        "",
        "| subpackage | what |",
        "|---|---|",
    ]
    pages = {}
    for pkg in sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()):
        doc = docstring_of(PACKAGE / pkg / "__init__.py")
        index.append(f"| [`lerobot_ros.{pkg}`]({pkg}.md) | {cell(_first_paragraph(doc))} |")
        pages[f"reference/api/{pkg}.md"] = f"# `lerobot_ros.{pkg}`\n\n::: lerobot_ros.{pkg}\n"
    pages["reference/api/index.md"] = "\n".join(index) + "\n"
    return pages


# ----- the recorder's QA, drawn -----------------------------------------------------------------------
def qa_stream() -> tuple[list[int], int, int, int]:
    """A made-up 30 Hz joint_states stream (jitter, a 300 ms gap, a late start): (stamps ns, start, end, fps)."""
    import numpy as np

    rng = np.random.default_rng(0)
    period = 1e9 / 30
    stamps = []
    t = 40e6  # the first message comes 40 ms after the episode starts
    while t < 1.0e9:
        stamps.append(int(t + rng.normal(0, 3e6)))
        t += period if not (0.45e9 < t < 0.75e9) else 0.3e9  # a 300 ms gap
    return sorted(stamps), 0, int(1.0e9), 30


def qa_figure() -> tuple[bytes, dict]:
    """An SVG of what the recorder's QA measures on qa_stream(), and the figures it reports for it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from lerobot_ros.record.live_qa import stream_report
    from lerobot_ros.resample import STATUS_NAMES, grid_between, plan_stream

    stamps, start, end, fps = qa_stream()
    tol = int(100e6)
    grid = grid_between(start, end, fps)
    colors = {"exact": "#2a9d8f", "held": "#8ab17d", "interpolated": "#4c78a8", "stale": "#e76f51", "missing": "#999"}
    fig, axes = plt.subplots(2, 1, figsize=(9, 4.6), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    ax = axes[0]
    ax.vlines(np.asarray(stamps) / 1e6, 4.6, 5.4, color="black", lw=1)
    policies = ("hold", "asof", "nearest", "interpolate")
    seen = set()
    for row, policy in enumerate(policies):
        plan = plan_stream(np.asarray(stamps), grid, policy, tol)
        for code, status in enumerate(STATUS_NAMES):
            sel = plan.status == code
            if sel.any():
                label = None if status in seen else status
                seen.add(status)
                ax.scatter(grid[sel] / 1e6, np.full(sel.sum(), 3.6 - row), s=18, color=colors[status], label=label)
    ax.set_yticks([5.0, *(3.6 - r for r in range(len(policies)))], ["messages", *policies], fontsize=8)
    ax.tick_params(axis="y", length=0)
    ax.set_ylim(0.1, 5.6)
    ax.set_title(f"frames on the {fps} fps grid, per alignment policy (tolerance {tol / 1e6:g} ms)", fontsize=9)
    plan = plan_stream(np.asarray(stamps), grid, "hold", None)
    stale = np.where(plan.status == STATUS_NAMES.index("missing"), np.nan, plan.staleness_ns / 1e6)
    axes[1].step(grid / 1e6, stale, where="post", color="#e76f51", label="staleness under hold")
    axes[1].axhline(tol / 1e6, color="#999", ls="--", lw=1, label="tolerance")
    axes[1].set_ylabel("staleness (ms)", fontsize=8)
    axes[1].set_xlabel("time since the episode started (ms)", fontsize=8)
    for a in axes:
        a.tick_params(labelsize=7)
        for side in ("top", "right"):
            a.spines[side].set_visible(False)
    handles = [h for a in axes for h in a.get_legend_handles_labels()[0]]
    labels = [lab for a in axes for lab in a.get_legend_handles_labels()[1]]
    fig.legend(handles, labels, ncol=len(labels), fontsize=7, loc="lower center", frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    rep = stream_report("/follower/joint_states", stamps, fps, start, end, "hold", tol)
    figures = {
        k: getattr(rep, k)
        for k in (
            "samples",
            "rate_hz",
            "max_gap_ms",
            "gaps",
            "frames",
            "exact_frames",
            "held_frames",
            "stale_frames",
            "missing_frames",
            "max_staleness_ms",
        )
    }
    return buf.getvalue().encode(), figures


def qa_figures_table(figures: dict) -> str:
    rows = ["| figure | value |", "|---|---|"]
    for k, v in figures.items():
        rows.append(f"| `{k}` | {v:.1f} |" if isinstance(v, float) else f"| `{k}` | {v} |")
    return "\n".join(rows)


# ----- folder indexes -------------------------------------------------------------------------------
def page_summary(path: Path) -> tuple[str, str]:
    """(title, first sentence) of a hand-written page: its first heading and its first paragraph of prose."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r"^# (.+)$", text, re.MULTILINE)
    title = m.group(1).strip() if m else path.stem
    body = text[m.end() :] if m else text
    para = ""
    for block in re.split(r"\n\s*\n", body):
        block = block.strip()
        if block and not block.startswith(("#", "```", "|", "!!!", "<", "{%", "    ", "-", "*", "1.")):
            para = " ".join(block.split())
            break
    sentence = re.split(r"(?<=\.)\s", para, maxsplit=1)[0] if para else ""
    if len(sentence) > 180:
        sentence = sentence[:180].rsplit(" ", 1)[0] + " ..."
    return title, sentence


def folder_index(folder: str) -> str:
    """A table of every page of docs/FOLDER but its index: title (linked) and first sentence."""
    rows = ["| page | what |", "|---|---|"]
    for path in sorted((ROOT / "docs" / folder).glob("*.md")):
        if path.name in ("index.md", "SUMMARY.md"):
            continue
        title, sentence = page_summary(path)
        rows.append(f"| [{title.replace('|', '/')}]({path.name}) | {cell(sentence)} |")
    return "\n".join(rows)


# ----- everything ----------------------------------------------------------------------------------
def all_pages() -> dict[str, str | bytes]:
    pages: dict[str, str | bytes] = {}
    for build in (cli_pages, node_pages, launch_pages, contract_pages, message_page, api_pages):
        pages.update(build())
    svg, figures = qa_figure()
    pages["explanation/recorder-qa.svg"] = svg
    pages["explanation/recorder-qa-figures.md"] = qa_figures_table(figures) + "\n"
    pages["reference/contract-topics.md"] = topic_table() + "\n"
    for folder in ("how-to", "explanation", "tutorials"):
        pages[f"{folder}/pages-of-this-folder.md"] = folder_index(folder) + "\n"
    return pages


def ensure_imports() -> None:
    """Import what the generators need up front, so a missing dependency fails with its own name."""
    for name in ("lerobot_ros.cli.main", "lerobot_ros.launch_runner", "lerobot_ros.contract"):
        importlib.import_module(name)


def vocabulary_table() -> str:
    """The vocabulary (lerobot_ros.configs.vocabulary): the table tests/unit/test_vocabulary.py holds every surface to."""
    from lerobot_ros.configs.vocabulary import markdown_table

    return markdown_table() + "\n"


def renamed_flags_table() -> str:
    """Every flag renamed by the vocabulary, per verb (lerobot_ros.cli.renamed: an old flag is refused with these)."""
    from lerobot_ros.cli.renamed import RENAMED

    rows = ["| verb | old | new |", "|---|---|---|"]
    for verb, table in RENAMED.items():
        rows += [f"| `{verb}` | `{old}` | `{new}` |" for old, new in table.items()]
    return "\n".join(rows) + "\n"


def exit_codes_table() -> str:
    """Every verb's exit status (lerobot_ros.cli.main.EXIT_CODES)."""
    from lerobot_ros.cli.main import EXIT_CODES

    rows = ["| status | meaning |", "|---|---|"] + [f"| {code} | {text} |" for code, text in EXIT_CODES.items()]
    return "\n".join(rows) + "\n"
