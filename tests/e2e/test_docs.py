"""The documentation site: its generated reference agrees with the code as a user meets it, and it builds strictly.

- every CLI page shows exactly what `lerobot-ros VERB --help` prints, line by line, and its options table names
  every flag the parser has;
- every node page's parameter rows agree with `ros2 param describe` of the running node (over DDS) and with the
  shipped config/NODE_PARAMETERS.md;
- every launch page lists each argument `lerobot-ros launch FILE --show-args` lists;
- README's links point at files that exist, and README stays a front page (<= 6,500 bytes);
- `mkdocs build --strict` passes, and the site's link checks fail a build on a broken link or anchor.

The generator is docs/gen/reference.py (loaded by path: it is the site's, not the package's).
"""

from __future__ import annotations

import contextlib
import html
import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "docs" / "gen" / "reference.py"
README = REPO / "README.md"
README_LIMIT = 6500
MKDOCS_ENV = {"DISABLE_MKDOCS_2_WARNING": "true", "NO_MKDOCS_2_WARNING": "1"}


@pytest.fixture(scope="module")
def reference():
    spec = importlib.util.spec_from_file_location("lerobot_ros_docs_reference", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.fixture(scope="module")
def cli_pages(reference):
    return reference.cli_pages()


def _help_block(page: str) -> list[str]:
    """The lines of the first ```text block of a page."""
    m = re.search(r"```text\n(.*?)\n```", page, re.DOTALL)
    assert m, "no ```text block on the page"
    return m.group(1).splitlines()


def _first_difference(expected: list[str], shown: list[str]) -> str | None:
    for i, (a, b) in enumerate(zip(expected, shown)):
        if a.rstrip() != b.rstrip():
            return f"line {i + 1}: --help says {a!r}, the page says {b!r}"
    if len(expected) != len(shown):
        return f"--help has {len(expected)} lines, the page {len(shown)}"
    return None


def _verbs():
    from lerobot_ros.cli.main import VERBS

    return sorted(VERBS)


@pytest.mark.parametrize("verb", _verbs())
def test_cli_page_shows_what_help_prints(cli_pages, reference, verb, monkeypatch):
    """In process: `lerobot-ros VERB --help` through cli.main.main at the site's width, against the page."""
    from lerobot_ros.cli.main import main

    monkeypatch.setenv("COLUMNS", str(reference.HELP_COLUMNS))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([verb, "--help"])
    assert code == 0
    page = cli_pages[f"reference/cli/{verb}.md"]
    difference = _first_difference(out.getvalue().rstrip("\n").splitlines(), _help_block(page))
    assert difference is None, f"reference/cli/{verb}.md disagrees with `lerobot-ros {verb} --help`: {difference}"


def test_cli_options_tables_name_every_flag(cli_pages, reference):
    _parser, verbs = reference.cli_parsers()
    for verb, sub in verbs.items():
        page = cli_pages[f"reference/cli/{verb}.md"]
        table = page.split("## Options", 1)[1]
        for action in sub._actions:
            for flag in action.option_strings:
                if flag in ("-h", "--help"):
                    continue
                assert f"`{flag}`" in table, f"reference/cli/{verb}.md: {flag} missing from the options table"


def test_cli_index_lists_every_verb(cli_pages):
    index = cli_pages["reference/cli/index.md"]
    for verb in _verbs():
        assert f"[`{verb}`]({verb}.md)" in index, verb


@pytest.mark.slow
def test_cli_pages_match_the_installed_command(cli_pages, reference):
    """The console script as a user runs it, one process per verb: no line of a CLI page disagrees."""
    exe = Path(sys.executable).with_name("lerobot-ros")
    env = {**os.environ, "COLUMNS": str(reference.HELP_COLUMNS)}
    for verb in _verbs():
        run = subprocess.run([str(exe), verb, "--help"], capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr
        page = cli_pages[f"reference/cli/{verb}.md"]
        difference = _first_difference(run.stdout.rstrip("\n").splitlines(), _help_block(page))
        assert difference is None, f"reference/cli/{verb}.md disagrees with `lerobot-ros {verb} --help`: {difference}"


# ----- nodes -------------------------------------------------------------------------------------------
def _parameter_rows(page: str) -> dict[str, list[str]]:
    """parameter name -> its cells (type, default, live, limits, description), from a page's parameter table."""
    rows = {}
    for line in page.split("## Parameters", 1)[-1].splitlines():
        m = re.match(r"^\| `([^`]+)` \| (.*) \|$", line)
        if m:
            cells = [html.unescape(c.replace("\\|", "|")).strip() for c in m.group(2).split(" | ")]
            rows[m.group(1)] = cells
    return rows


@pytest.fixture(scope="module")
def node_pages(reference):
    return reference.node_pages()


def test_node_pages_agree_with_the_shipped_parameter_tables(node_pages, reference):
    shipped = (REPO / "config" / "NODE_PARAMETERS.md").read_text()
    sections = dict(re.findall(r"^## (\S+)\n\n(.*?)(?=^## |\Z)", shipped, re.MULTILINE | re.DOTALL))
    executables = reference.node_executables()
    for module, (_cls, table) in reference.node_param_tables().items():
        exe = next(e for e, m in executables.items() if m.endswith(f".{module}"))
        page = node_pages[f"reference/nodes/{exe}.md"]
        assert table in page, f"reference/nodes/{exe}.md lacks the declared parameter table of {module}"
        assert table in sections.get(module, ""), f"config/NODE_PARAMETERS.md disagrees with {module}'s declarations"


def _talker(ctx):
    from rclpy.parameter import Parameter

    from lerobot_ros.nodes.talker import Talker

    return Talker(context=ctx, parameter_overrides=[Parameter("width", value=32), Parameter("height", value=24)])


def _listener(ctx):
    from lerobot_ros.nodes.listener import Listener

    return Listener(context=ctx)


def _urdf_joint_states(ctx):
    from rclpy.parameter import Parameter

    from lerobot_ros.nodes.urdf_joint_states_node import UrdfJointStatesNode

    return UrdfJointStatesNode(context=ctx, parameter_overrides=[Parameter("joint_zero", value="urdf")])


def _republish(ctx):
    from lerobot_ros.nodes.image_republish_node import ImageRepublishNode

    return ImageRepublishNode(context=ctx)


#: executable -> (node factory, its full name): nodes that start with no hardware, simulator or policy
LIVE_NODES = {
    "talker": (_talker, "/talker"),
    "listener": (_listener, "/listener"),
    "urdf_joint_states_node": (_urdf_joint_states, "/urdf_joint_states"),
    "image_republish_node": (_republish, "/image_republish"),
}
ROS_TYPES = {
    1: "bool",
    2: "int",
    3: "float",
    4: "str",
    7: "list[bool]",
    8: "list[int]",
    9: "list[float]",
    10: "list[str]",
}


@pytest.mark.ros
@pytest.mark.parametrize("executable", sorted(LIVE_NODES))
def test_node_page_agrees_with_describe_parameters(ros, probe_runtime, node_pages, executable):
    """A running node, asked over DDS as `ros2 param describe` asks: every row of its page says the same."""
    from lerobot_ros.testing.param_probe import ParamProbe

    factory, fq_name = LIVE_NODES[executable]
    ros.add_node(factory(ros.context))
    described = ParamProbe(probe_runtime, fq_name).describe()
    rows = _parameter_rows(node_pages[f"reference/nodes/{executable}.md"])
    assert rows, f"reference/nodes/{executable}.md has no parameter table"
    for name, (type_, _default, live, _limits, description) in rows.items():
        assert name in described, f"{executable}: the page lists {name}, the running node does not declare it"
        d = described[name]
        assert type_ == ROS_TYPES.get(d.type, "?"), (
            f"{executable}.{name}: page type {type_}, node {ROS_TYPES.get(d.type)}"
        )
        assert live == ("no" if d.read_only else "yes"), (
            f"{executable}.{name}: page live={live}, read_only={d.read_only}"
        )
        assert " ".join(description.split()) == " ".join(d.description.split()), (
            f"{executable}.{name}: descriptions differ"
        )


# ----- launch files ------------------------------------------------------------------------------------
def test_launch_pages_list_every_argument_show_args_lists(reference):
    from lerobot_ros.cli.launch import show_args

    pages = reference.launch_pages()
    for path in reference.launch_files():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            show_args(str(path))
        names = re.findall(r"^  '([^']+)':", out.getvalue(), re.MULTILINE)
        page = pages[f"reference/launch/{path.name.removesuffix('.launch.yaml')}.md"]
        for name in names:
            assert f"| `{name}` |" in page, f"{path.name}: argument {name} missing from its page"


def test_launch_graphs_draw_the_processes_and_their_topics(reference):
    page = reference.launch_pages()["reference/launch/sim_so101.md"]
    assert '["<b>/sim/sim_bridge</b><br/>sim_bridge_node"]' in page
    assert '(["/sim/joint_states"])' in page and '(["/sim/commands"])' in page
    assert "/diagnostics" not in page.split("```mermaid", 1)[1].split("```", 1)[0]


# ----- README and the strict build ---------------------------------------------------------------------
def test_readme_is_a_front_page_whose_links_resolve():
    text = README.read_text()
    assert len(text.encode()) <= README_LIMIT, f"README.md is {len(text.encode())} bytes; keep it <= {README_LIMIT}"
    assert text.index("make demo") < text.index("make test") < text.index("## "), "make demo / make test come first"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (REPO / target).exists(), f"README.md links to {target}, which does not exist"


def _mkdocs() -> list[str]:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (LEROBOT_ROS_EXTRAS=docs make setup)")
    return [sys.executable, "-m", "mkdocs"]


def _site_validation() -> dict:
    """The `validation` settings of mkdocs.yml (its python tags skipped: only plain keys are read here)."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    return yaml.load((REPO / "mkdocs.yml").read_text(), Loader=Loader)["validation"]


@pytest.mark.parametrize(
    "link,complaint",
    [("other.md#no-such-heading", "does not contain an anchor"), ("missing.md", "not found among documentation files")],
)
def test_the_site_checks_fail_a_broken_link(tmp_path, link, complaint):
    """The site's own link settings, on a two-page site: a link to a missing page or anchor fails --strict."""
    mkdocs = _mkdocs()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(f"# Home\n\n[fine](other.md#a-heading) and [broken]({link})\n")
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## A heading\n")
    config = {"site_name": "t", "docs_dir": "docs", "site_dir": "site", "validation": _site_validation()}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    run = subprocess.run(
        [*mkdocs, "build", "--strict"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **MKDOCS_ENV},
    )
    assert run.returncode != 0, run.stderr
    assert complaint in run.stderr and link in run.stderr, run.stderr
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n[fine](other.md#a-heading)\n")
    run = subprocess.run(
        [*mkdocs, "build", "--strict"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **MKDOCS_ENV},
    )
    assert run.returncode == 0, run.stderr


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    """`make docs` without the set-up: the whole site, generated reference included, with no warning."""
    run = subprocess.run(
        [*_mkdocs(), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **MKDOCS_ENV},
    )
    assert run.returncode == 0, run.stderr[-4000:]
    for page in (
        "reference/cli/eval/index.html",
        "reference/nodes/policy_node/index.html",
        "reference/launch/sim_so101/index.html",
        "explanation/recorder-qa.svg",
    ):
        assert (tmp_path / "site" / page).is_file(), page
