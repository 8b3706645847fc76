"""Every parameter that a launch file or a shipped config file passes to a node is one the node declares
(a typo would otherwise be silently ignored by rcl), and the generated parameter tables are up to date.
Launch files are planned, not run (lerobot_ros.launch_runner)."""

from __future__ import annotations

import ast
import importlib
import os
import re
from pathlib import Path

import pytest
import yaml
from rclpy.parameter import Parameter

from lerobot_ros.configs import names, spec_of
from lerobot_ros.launch_runner import evaluate_file
from lerobot_ros.ros.parameters import BUILTIN_DESCRIPTIONS

REPO = Path(__file__).resolve().parents[2]
LAUNCH = REPO / "launch"
SETUP = REPO / "src" / "lerobot_ros" / "setup.py"
#: shipped parameter files and the executable each is for
CONFIGS = {
    "hardware/camera.yaml": "camera_node",
    "hardware/custom_bus.yaml": "motor_bus_node",
    "hardware/koch.yaml": "robot_node",
    "hardware/so101_follower.yaml": "robot_node",
    "hardware/so101_leader.yaml": "teleop_node",
    "sim/libero.yaml": "sim_bridge_node",
    "sim/metaworld.yaml": "sim_bridge_node",
    "sim/so101_twin.yaml": "sim_bridge_node",
}


def executables() -> dict[str, str]:
    """setup.py's NODES: executable name -> module."""
    tree = ast.parse(SETUP.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "NODES" for t in node.targets):
            return {k: v.split(":")[0] for k, v in ast.literal_eval(node.value).items()}
    raise AssertionError("NODES not found in setup.py")


def params_class(executable: str):
    """The params dataclass of an executable's node, None for a node not on the parameter layer yet."""
    module = importlib.import_module(executables()[executable])
    for value in vars(module).values():
        cls = getattr(value, "params_class", None)
        if isinstance(value, type) and cls is not None and value.__module__ == module.__name__:
            return cls
    return None


LIGHT = [
    "sim_bridge_node",
    "scripted_expert_node",
    "camera_node",
    "image_republish_node",
    "robot_node",
    "motor_bus_node",
    "base_node",
    "bimanual_node",
    "twist_teleop",
    "teleop_node",
    "episode_keyboard",
    "chunk_markers_node",
    "urdf_joint_states_node",
    "talker",
    "listener",
]


def allowed(executable: str) -> set[str] | None:
    """What the executable's process declares: its node's parameters, or every node's of a several-node process."""
    several = getattr(importlib.import_module(executables()[executable]), "NODES_IN_PROCESS", None)
    if several:
        return set().union(*(names(cls) for cls in several.values())) | set(BUILTIN_DESCRIPTIONS)
    cls = params_class(executable)
    return None if cls is None else set(names(cls)) | set(BUILTIN_DESCRIPTIONS)


def passed_params(cmd: list[str]) -> set[str]:
    """Parameter names a planned command line passes: its params files and its `-p name:=value`s."""
    out: set[str] = set()
    for i, arg in enumerate(cmd):
        if arg == "--params-file":
            data = yaml.safe_load(Path(cmd[i + 1]).read_text()) or {}
            for section in data.values():
                out |= set((section or {}).get("ros__parameters", {}))
        elif arg == "-p":
            out.add(cmd[i + 1].split(":=", 1)[0])
    return out


def variants(path: Path) -> list[dict]:
    """The defaults, and each true/false argument flipped on its own (starts the optional nodes too)."""
    flips = []
    for m in re.finditer(r"name: (\w+), default: '?(true|false)'?", path.read_text()):
        flips.append({m.group(1): "false" if m.group(2) == "true" else "true"})
    return [{}] + flips


@pytest.fixture(autouse=True)
def _params_in_tmp(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def test_every_node_of_this_layer_declares_its_parameters():
    for executable in LIGHT:
        cls = params_class(executable)
        assert cls is not None, executable
        assert names(cls), executable


@pytest.mark.parametrize("name", sorted(p.name.removesuffix(".launch.yaml") for p in LAUNCH.glob("*.launch.yaml")))
def test_launch_files_pass_only_declared_parameters(name):
    exe_names = executables()
    checked = set()
    for args in variants(LAUNCH / f"{name}.launch.yaml"):
        try:
            plan = evaluate_file(str(LAUNCH / f"{name}.launch.yaml"), args, environ=dict(os.environ))
        except Exception as exc:  # noqa: BLE001 - a flip that needs another argument set too
            if not args:
                raise
            print(f"{name} {args}: {exc}")
            continue
        for proc in plan.processes:
            exe = next((os.path.basename(a) for a in proc.cmd if os.path.basename(a) in exe_names), None)
            if exe is None or (known := allowed(exe)) is None:
                continue
            unknown = passed_params(proc.cmd) - known
            assert not unknown, (
                f"{name}.launch.yaml {args or '(defaults)'}: {proc.label} ({exe}) is passed undeclared {sorted(unknown)}"
            )
            checked.add(exe)
    expected = {
        "sim_metaworld": "sim_bridge_node",
        "sim_so101": "sim_bridge_node",
        "so101_real": "robot_node",
        "so101_virtual": "teleop_node",
        "cameras": "camera_node",
        "smoke": "talker",
    }
    assert expected.get(name, next(iter(checked), None)) in checked | {None}, (name, checked)


@pytest.mark.parametrize("config,executable", sorted(CONFIGS.items()))
def test_shipped_parameter_files_hold_declared_parameters(config, executable):
    """`/**` sections are for `executable`; a section for a named node (/leader/teleop_node) for that node."""
    data = yaml.safe_load((REPO / "config" / config).read_text())
    for key, section in data.items():
        exe = executable if key == "/**" else key.rsplit("/", 1)[-1]
        unknown = set(section["ros__parameters"]) - allowed(exe)
        assert not unknown, f"config/{config} sets {sorted(unknown)} in {key}, which {exe} does not declare"


def test_every_shipped_parameter_file_is_checked():
    shipped = {
        str(p.relative_to(REPO / "config"))
        for p in (REPO / "config").glob("*/*.yaml")
        if p.parent.name in ("hardware", "sim")
    }
    assert shipped == set(CONFIGS)


def test_the_shipped_parameter_tables_are_generated_from_the_declarations():
    from lerobot_ros.nodes.parameter_tables import markdown, node_params

    modules = {executables()[exe].rsplit(".", 1)[-1] for exe in LIGHT}
    assert modules <= set(node_params())
    shipped = (REPO / "config" / "NODE_PARAMETERS.md").read_text()
    assert shipped == markdown(), (
        "config/NODE_PARAMETERS.md is stale: regenerate it with "
        "`python -m lerobot_ros.nodes.parameter_tables > config/NODE_PARAMETERS.md`"
    )


# ----- over DDS: each node that starts without hardware, seen from another rclpy context --------------
def _talker(ctx, so101_text):
    from lerobot_ros.nodes.talker import Talker

    return Talker(context=ctx, parameter_overrides=[Parameter("width", value=32), Parameter("height", value=24)])


def _listener(ctx, so101_text):
    from lerobot_ros.nodes.listener import Listener

    return Listener(context=ctx)


def _chunk_markers(ctx, so101_text):
    from lerobot_ros.nodes.chunk_markers_node import ChunkMarkersNode

    return ChunkMarkersNode(context=ctx, parameter_overrides=[Parameter("robot_description", value=so101_text)])


def _urdf_joint_states(ctx, so101_text):
    from lerobot_ros.nodes.urdf_joint_states_node import UrdfJointStatesNode

    return UrdfJointStatesNode(context=ctx, parameter_overrides=[Parameter("joint_zero", value="urdf")])


def _republish(ctx, so101_text):
    from lerobot_ros.nodes.image_republish_node import ImageRepublishNode

    return ImageRepublishNode(context=ctx)


def _expert(ctx, so101_text):
    from lerobot_ros.nodes.scripted_expert_node import ScriptedExpertNode

    return ScriptedExpertNode(context=ctx, parameter_overrides=[Parameter("expert", value="so101_pick")])


#: node factory, its name, (a read-only parameter, a value), (a live parameter, a value, its effect on the node)
CASES = {
    "talker": (_talker, "/talker", ("width", 64), ("fps", 10, lambda n: n.timer.timer_period_ns == 100_000_000)),
    "listener": (_listener, "/listener", None, ("count", 3, lambda n: n.count == 3)),
    "chunk_markers": (
        _chunk_markers,
        "/chunk_markers",
        ("tip_link", "base_link"),
        ("line_width", 0.02, lambda n: n.style.line_width == 0.02),
    ),
    "urdf_joint_states": (_urdf_joint_states, "/urdf_joint_states", ("joint_zero", "mid_range"), None),
    "image_republish": (
        _republish,
        "/image_republish",
        ("lazy", False),
        ("jpeg_quality", 50, lambda n: n.params.values.jpeg_quality == 50),
    ),
    "scripted_expert": (_expert, "/scripted_expert", ("expert", "metaworld"), None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_node_parameters_over_dds(ros, so101_text, case):
    from lerobot_ros.ros.runtime import RosRuntime
    from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described

    factory, fq_name, read_only, live = CASES[case]
    node = ros.add_node(factory(ros.context, so101_text))
    with RosRuntime() as other:
        probe = ParamProbe(other, fq_name)
        described = assert_all_described(probe)
        assert set(names(node.params_class)) <= set(described)
        for name in names(node.params_class):
            assert described[name].read_only != spec_of(node.params_class, name).reconfigurable, name
        if read_only is not None:
            name, value = read_only
            before = probe.get(name)
            result = probe.set(name, value)
            assert not result.successful and "read-only" in result.reason
            assert probe.get(name) == before
        if live is not None:
            name, value, effect = live
            result = probe.set(name, value)
            assert result.successful, result.reason
            assert effect(node), f"{case}: {name}={value} had no effect"


def test_episode_keyboard_process_parameters(ros_env, ros):
    """The keyboard as its own process (stdin a pipe held open): described, a live one applied, from outside."""
    import subprocess
    import sys

    from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described

    proc = subprocess.Popen(
        [sys.executable, "-m", "lerobot_ros.nodes.episode_keyboard_node", "--ros-args", "-p", "match_timeout_s:=2"],
        env=ros_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        probe = ParamProbe(ros, "/episode_keyboard", timeout=60)
        assert_all_described(probe)
        assert probe.get("match_timeout_s") == 2.0  # an integer given for a double
        assert probe.set("match_timeout_s", 0.5).successful and probe.get("match_timeout_s") == 0.5
        bad = probe.set("match_timeout_s", -1.0)
        assert not bad.successful and probe.get("match_timeout_s") == 0.5
    finally:
        proc.stdin.close()  # end of input: the keyboard finishes and exits by itself
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out = proc.stdout.read()
    assert proc.returncode == 0 and "Traceback" not in out, out
