"""The shipped launch files: what each starts (evaluated, no process), the sim/real swap, and the
SO-101 files run for real with the launch runner (nodes, topics, data flowing, actions reaching the
driver, Ctrl-C leaving no process). sim_metaworld runs end to end in tests/e2e/test_demo.py."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from lerobot_ros.launch_runner import evaluate_file
from lerobot_ros.testing.launching import by_label, labels, params, plan
from lerobot_ros.testing.process_groups import groups_gone

REPO = Path(__file__).resolve().parents[2]
LAUNCH = REPO / "launch"
TOP_LEVEL = [
    "sim_metaworld",
    "sim_libero",
    "sim_so101",
    "so101_real",
    "koch_real",
    "so101_virtual",
    "lekiwi_base",
    "lekiwi_base_virtual",
    "bi_so101_real",
    "bi_so101_virtual",
    "lekiwi",
    "lekiwi_virtual",
    "sim_bi_so101",
    "sim_lekiwi",
]
PIECES = ["policy", "record", "cameras", "teleop", "rviz"]


@pytest.fixture(autouse=True)
def _params_in_tmp(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def test_every_file_exists_and_evaluates_with_its_defaults():
    for name in TOP_LEVEL + PIECES:
        p = plan(name)
        assert p.processes or name == "policy", name  # policy.launch.yaml without policy.path: no node


@pytest.mark.parametrize(
    "name,expected",
    [
        ("sim_metaworld", ["sim_bridge"]),
        ("sim_libero", ["sim_bridge"]),
        ("sim_so101", ["sim_bridge"]),
        ("so101_real", ["robot", "front_camera"]),
        ("koch_real", ["robot", "front_camera"]),
        ("so101_virtual", ["virtual_arm", "robot", "teleop"]),
        ("lekiwi_base", ["base_node"]),
        ("lekiwi_base_virtual", ["virtual_base", "base_node"]),
        ("bi_so101_real", ["robot", "robot-2", "bimanual_node"]),
        ("lekiwi", ["lekiwi_node"]),
        ("lekiwi_virtual", ["virtual_lekiwi", "lekiwi_node"]),
        (
            "bi_so101_virtual",
            ["virtual_left", "virtual_right", "robot", "robot-2", "bimanual_node", "teleop", "teleop-2"],
        ),
        ("sim_bi_so101", ["sim_bridge", "bimanual_node"]),
        ("sim_lekiwi", ["sim_bridge", "robot"]),
    ],
)
def test_defaults_start_the_driver_nodes_only(name, expected):
    """No viewer and no policy by default: ros2 launch ends everything on a missing package."""
    assert labels(plan(name)) == expected


@pytest.mark.parametrize("name", ["sim_so101", "so101_real", "so101_virtual", "sim_bi_so101", "sim_lekiwi"])
def test_rviz_true_starts_the_viewers_that_are_installed(name):
    """rviz:=true adds urdf_joint_states and chunk_markers (our package), and robot_state_publisher / rviz2
    only where installed: their `if` asks `lerobot-ros launch --installed PKG`, which both runners evaluate."""
    from lerobot_ros.launch_runner import ament

    extra = [label for label in labels(plan(name, rviz="true")) if label not in labels(plan(name))]
    want = ["urdf_joint_states", "chunk_markers"]
    if ament.package_prefix("robot_state_publisher") is not None:
        want.insert(0, "robot_state_publisher")
    if ament.package_prefix("rviz2") is not None:
        want.insert(-1, "rviz2")
    assert extra == want


def test_common_arguments_are_declared_with_defaults():
    for name in ["sim_metaworld", "sim_libero", "sim_so101", "so101_real", "koch_real"]:
        declared = {a.name: a for a in plan(name).declared}
        task = "env.task" if name.startswith("sim_") else "task"  # a simulator's task vs the task description
        for arg in ("namespace", "contract", "policy.path", task, "use_sim_time", "record"):
            assert arg in declared and declared[arg].default is not None, (name, arg)
    assert plan("sim_so101").configs["use_sim_time"] == "true"
    assert plan("so101_real").configs["use_sim_time"] == "false"


def test_sim_bridge_parameters_follow_the_arguments():
    p = plan(
        "sim_metaworld",
        **{"env.task": "reach-v3", "env.observation_width": 64, "env.observation_height": 48},
        expert="true",
        namespace="mw",
    )
    bridge, expert = by_label(p, "sim_bridge"), by_label(p, "scripted_expert")
    assert bridge.namespace == "/mw" and expert.namespace == "/mw"
    expected = {
        "env.type": "metaworld",
        "env.task": "reach-v3",
        "env.observation_width": 64,
        "env.observation_height": 48,
        "mode": "lockstep",
        "shadows": False,
    }
    assert {k: params(bridge)[k] for k in expected} == expected
    assert params(expert) == {"expert": "metaworld", "env.task": "reach-v3", "use_sim_time": True}
    twin = params(by_label(plan("sim_so101", mode="lockstep"), "sim_bridge"))
    assert (
        twin["env.type"] == "so101"
        and twin["env.task"] == "pick"
        and twin["cameras"] == ["front"]
        and twin["mode"] == "lockstep"
    )
    # lockstep: the policy must tick on the camera (the bridge's time waits for an action); realtime: the timer
    lock = params(
        by_label(
            plan("sim_so101", mode="lockstep", tick_on="observation.images.front", **{"policy.path": "/m"}), "policy"
        )
    )
    assert lock["tick_on"] == "observation.images.front"
    assert params(by_label(plan("sim_so101", **{"policy.path": "/m"}), "policy"))["tick_on"] == "timer"
    # as policy_node's own
    assert params(by_label(plan("sim_so101", **{"policy.path": "/m"}), "policy"))["policy.device"] == "auto"
    libero = params(by_label(plan("sim_libero", **{"env.task": "libero_object", "env.task_id": 3}), "sim_bridge"))
    assert libero["env.type"] == "libero" and libero["env.task"] == "libero_object" and libero["env.task_id"] == 3


def test_sim_and_real_differ_only_in_the_driver_nodes():
    """Policy and recorder come from the same includes: same executables, names and parameters except
    the contract and the clock; only the driver processes differ."""
    common = {"policy.path": "/models/act", "record": "true", "output_dir": "/data/bags", "rviz": "false"}
    sim = plan("sim_so101", **{"env.task": "pick"}, **common)
    real = plan("so101_real", task="pick the cube", **common)
    shared = ["policy", "episode_recorder"]
    assert [label for label in labels(sim) if label not in shared] == ["sim_bridge"]
    assert [label for label in labels(real) if label not in shared] == ["robot", "front_camera"]
    for label in shared:
        s, r = by_label(sim, label), by_label(real, label)
        assert os.path.basename(s.cmd[0]) == os.path.basename(r.cmd[0]) and s.node_name == r.node_name
        ps, pr = params(s), params(r)
        assert ps.pop("contract") == "so101_sim" and pr.pop("contract") == "so101"
        assert ps.pop("use_sim_time") is True and pr.pop("use_sim_time") is False
        ps.pop("task"), pr.pop("task")
        assert ps == pr
    assert params(by_label(real, "policy"))["policy.path"] == "/models/act"
    assert params(by_label(real, "episode_recorder"))["output_dir"] == "/data/bags"
    # policy task: the task string of a real robot; in simulation the bridge's task topic provides it
    assert params(by_label(real, "policy"))["task"] == "pick the cube"


@pytest.mark.parametrize(
    "sim_name,real_name,sim_drivers,real_drivers",
    [
        ("sim_bi_so101", "bi_so101_real", ["sim_bridge"], ["robot", "robot-2"]),
        ("sim_lekiwi", "lekiwi", ["sim_bridge", "robot"], ["lekiwi_node"]),
    ],
)
def test_the_pair_and_lekiwi_twins_differ_from_the_real_robots_only_in_their_drivers(
    sim_name, real_name, sim_drivers, real_drivers
):
    """The twin of the pair and of LeKiwi swap in by launch file: the joining node (bimanual_node), the policy node
    and the recorder are the same processes with the same parameters but the clock; the contract is the same."""
    common = {
        "policy.path": "/models/act",
        "record": "true",
        "output_dir": "/data/bags",
        "task": "hold",
        "teleop": "true",
    }
    sim, real = plan(sim_name, **common), plan(real_name, **common)
    drivers = {"sim_bridge", "robot", "robot-2", "lekiwi_node"}
    shared = [label for label in labels(sim) if label not in drivers]
    assert [label for label in labels(sim) if label in drivers] == sim_drivers
    assert [label for label in labels(real) if label in drivers] == real_drivers
    assert "policy" in shared and "episode_recorder" in shared
    for label in shared:
        s, r = by_label(sim, label), by_label(real, label)
        assert os.path.basename(s.cmd[0]) == os.path.basename(r.cmd[0]) and s.node_name == r.node_name, label
        ps, pr = params(s), params(r)
        assert ps.pop("use_sim_time", True) is True and pr.pop("use_sim_time", False) is False, label
        assert ps == pr, label
    bridge = params(by_label(sim, "sim_bridge"))
    assert bridge["env.type"] == sim_name.removeprefix("sim_") and bridge["mode"] == "realtime"


def test_recorder_has_its_own_namespace_and_optional_pieces_follow_their_switches():
    p = plan("sim_metaworld", record="true")
    rec = by_label(p, "episode_recorder")
    assert rec.namespace == "/recorder"  # its episode_status must not collide with the bridge's /sim/episode_status
    assert params(rec)["task"] == ""  # the simulator's task name is not the recorded task description
    assert "policy" not in labels(plan("sim_metaworld", **{"policy.path": ""}))
    assert "episode_recorder" not in labels(plan("so101_real"))
    real = plan("so101_real", teleop="true", cameras="false", namespace="arm", **{"teleop.port": "/dev/ttyUSB1"})
    teleop = by_label(real, "teleop")
    assert "front_camera" not in labels(real)
    assert teleop.namespace == "/leader" and params(teleop)["teleop.port"] == "/dev/ttyUSB1"
    assert params(teleop)["commands_topic"] == "/arm/commands" and by_label(real, "robot").namespace == "/arm"
    assert "wrist_camera" in labels(plan("so101_real", use_wrist="true"))
    koch = params(by_label(plan("koch_real", teleop="true"), "robot"))
    assert (
        koch["robot.type"] == "koch_follower"
        and params(by_label(plan("koch_real", teleop="true"), "teleop"))["teleop.type"] == "koch_leader"
    )


def test_jpeg_quality_reaches_every_camera_node_from_the_robot_file():
    default = plan("so101_real", use_wrist="true")
    assert [params(by_label(default, cam))["jpeg_quality"] for cam in ("front_camera", "wrist_camera")] == [90, 90]
    lower = plan("koch_real", use_wrist="true", jpeg_quality="70")
    assert [params(by_label(lower, cam))["jpeg_quality"] for cam in ("front_camera", "wrist_camera")] == [70, 70]


def test_virtual_arm_runs_the_real_robot_file_on_emulated_ports(tmp_path):
    p = plan("so101_virtual", virtual_dir=str(tmp_path / "v"))
    arm, robot, teleop = (by_label(p, x) for x in ("virtual_arm", "robot", "teleop"))
    assert arm.cmd[1:] == ["virtual-arm", "so101", "--output_dir", str(tmp_path / "v")]
    assert os.path.basename(arm.cmd[0]) == "lerobot-ros" and os.access(arm.cmd[0], os.X_OK)
    assert params(robot)["robot.port"] == str(tmp_path / "v" / "so101_follower")
    assert params(robot)["robot.calibration_file"] == str(tmp_path / "v" / "calibration" / "virtual_follower.json")
    assert robot.respawn is True and robot.respawn_delay == 2.0
    assert params(teleop)["teleop.port"] == str(tmp_path / "v" / "so101_leader") and teleop.respawn is True


def test_rviz_robot_description_is_the_so101_urdf_with_resolvable_meshes():
    from lerobot_ros.sim.so101_urdf import absolute_mesh_urdf, so101_urdf

    text = so101_urdf()
    meshes = re.findall(r'filename="file://([^"]+)"', text)
    assert len(meshes) > 5 and all(Path(m).is_file() for m in meshes)
    assert {"shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"} <= set(
        re.findall(r'<joint name="([^"]+)" type="revolute"', text)
    )
    assert (
        absolute_mesh_urdf('<mesh filename="package://x/a.stl"/>', Path("/b")) == '<mesh filename="package://x/a.stl"/>'
    )
    for name in ("so101.rviz", "so101_sim.rviz", "camera.rviz"):
        cfg = yaml.safe_load((REPO / "config" / "rviz" / name).read_text())
        classes = [d["Class"] for d in cfg["Visualization Manager"]["Displays"]]
        assert "rviz_default_plugins/Image" in classes
        assert ("rviz_default_plugins/RobotModel" in classes) == name.startswith("so101")
        topics = [
            d["Topic"]["Value"] for d in cfg["Visualization Manager"]["Displays"] if d["Class"].endswith("/MarkerArray")
        ]
        assert topics == (["/chunk_markers/markers"] if name.startswith("so101") else []), name


def test_rviz_piece_draws_the_policy_chunk_with_the_model():
    """chunk_markers_node (output ~/markers = /chunk_markers/markers, the rviz configs' MarkerArray topic) reads
    the policy's ~/predicted_chunk and the joint_states that move the model; off with the model or by switch."""
    p = plan("sim_so101", rviz="true")
    markers = by_label(p, "chunk_markers")
    assert os.path.basename(markers.cmd[0]) == "chunk_markers_node" and markers.node_name == "chunk_markers"
    remaps = [markers.cmd[i + 1] for i, a in enumerate(markers.cmd) if a == "-r"]
    assert "predicted_chunk:=/policy/predicted_chunk" in remaps and "joint_states:=/sim/joint_states" in remaps
    assert params(markers)["use_sim_time"] is True
    assert "chunk_markers" not in labels(plan("rviz", chunk_markers="false"))
    assert "chunk_markers" not in labels(plan("rviz", robot_model="false"))
    assert "chunk_markers" not in labels(plan("sim_metaworld", rviz="true"))  # camera view only, no SO-101 model


def test_rviz_model_reads_joint_states_in_urdf_values():
    """robot_state_publisher reads urdf_joint_states_node's ~/joint_states (positions shifted from the mid-range
    zero to the URDF's), which reads the robot's joint_states; joint_zero reaches it and chunk_markers."""
    p = plan("sim_so101", rviz="true")
    states = by_label(p, "urdf_joint_states")
    assert os.path.basename(states.cmd[0]) == "urdf_joint_states_node" and states.node_name == "urdf_joint_states"
    remaps = [states.cmd[i + 1] for i, a in enumerate(states.cmd) if a == "-r"]
    assert "joint_states:=/sim/joint_states" in remaps
    assert params(states) == {"joint_zero": "mid_range", "use_sim_time": True}
    rviz = yaml.safe_load((LAUNCH / "rviz.launch.yaml").read_text())["launch"]
    (rsp,) = [e["node"] for e in rviz if "node" in e and e["node"]["exec"] == "robot_state_publisher"]
    assert rsp["remap"] == [{"from": "joint_states", "to": "urdf_joint_states/joint_states"}]  # its ~/joint_states
    urdf = plan("rviz", joint_zero="urdf")
    assert params(by_label(urdf, "urdf_joint_states"))["joint_zero"] == "urdf"
    assert params(by_label(urdf, "chunk_markers"))["joint_zero"] == "urdf"
    assert "urdf_joint_states" not in labels(plan("rviz", robot_model="false"))
    assert "urdf_joint_states" not in labels(plan("sim_metaworld", rviz="true"))


# -- running the files with the launch runner -----------------------------------------------------------------
class Launch:
    """`lerobot-ros launch FILE args...` in a child process, its output collected line by line."""

    def __init__(self, name: str, args: list[str], env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lerobot_ros.cli.main", "launch", name, *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def pids(self) -> dict[str, int]:
        return {
            m.group(1): int(m.group(2))
            for line in list(self.lines)
            if (m := re.match(r"\[launch\] (\S+) started \(pid (\d+)\)", line))
        }

    def interrupt(self, timeout: float = 60.0) -> int:
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()

    def text(self) -> str:
        return "\n".join(self.lines)


def wait_for(predicate, timeout: float, what: str, launch: Launch):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if launch.proc.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}; launch output:\n{launch.text()[-4000:]}")


def assert_clean_exit(launch: Launch) -> None:
    pids = launch.pids()
    code = launch.interrupt()
    assert code == 0, launch.text()[-3000:]
    left = [label for label, pid in pids.items() if not groups_gone([pid], timeout=10)]
    assert not left, f"processes left behind after Ctrl-C: {left}"


def stamps_s(msgs) -> np.ndarray:
    return np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in msgs])


@pytest.mark.slow
def test_so101_virtual_launch_teleoperates_the_emulated_follower(ros, ros_env, tmp_path):
    """Emulated servos: the leader drives the follower through teleop_node -> /follower/commands -> robot_node."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.ros.qos import SENSOR_QOS
    from lerobot_ros.ros.runtime import MessageCollector

    node = ros.create_node("launch_file_probe")
    follower = MessageCollector(node, JointState, "/follower/joint_states", SENSOR_QOS)
    leader = MessageCollector(node, JointState, "/leader/joint_states", SENSOR_QOS)
    commands = MessageCollector(node, Float64MultiArray, "/follower/commands", SENSOR_QOS)
    launch = Launch("so101_virtual", [f"virtual_dir:={tmp_path / 'v'}"], ros_env)
    try:
        wait_for(
            lambda: len(follower.messages) > 60 and len(commands.messages) > 10,
            150,
            "follower joint states and teleop commands",
            launch,
        )
        names = {ns.rstrip("/") + "/" + n for n, ns in node.get_node_names_and_namespaces()}
        assert {"/follower/robot", "/leader/teleop"} <= names
        msgs = follower.messages[-60:]
        assert list(msgs[-1].name) == [
            "shoulder_pan",
            "shoulder_lift",
            "elbow_flex",
            "wrist_flex",
            "wrist_roll",
            "gripper",
        ]
        period = np.median(np.diff(stamps_s(msgs)))
        assert 0.5 / 30 < period < 2.0 / 30, f"joint_states period {period:.4f} s, expected ~1/30 s"

        def follows() -> bool:  # the follower reaches the leader's pose (the action reached the driver)
            a, b = np.array(follower.messages[-1].position), np.array(leader.messages[-1].position)
            return bool(np.max(np.abs(a - b)) < 0.05)

        wait_for(follows, 30, "the follower to reach the leader's pose", launch)
        # the robot side runs without torch (ros.torchless): LeRobot imports it, the drivers never use it
        for label in ("robot", "teleop"):
            maps = Path(f"/proc/{launch.pids()[label]}/maps").read_text()
            assert "libtorch" not in maps, f"{label} loaded torch"
    finally:
        if launch.proc.poll() is None:
            assert_clean_exit(launch)


@pytest.mark.slow
def test_lekiwi_base_virtual_launch_drives_the_emulated_wheels_from_cmd_vel(ros, ros_env, tmp_path):
    """virtual-base serves the wheels, base_node (respawned until the port is there) drives them: a Twist forward
    moves odom forward, and the wheels' joint states come at the loop rate."""
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState

    from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
    from lerobot_ros.ros.runtime import MessageCollector

    node = ros.create_node("launch_file_probe")
    odom = MessageCollector(node, Odometry, "/base/odom", SENSOR_QOS)
    wheels = MessageCollector(node, JointState, "/base/joint_states", SENSOR_QOS)
    cmd = node.create_publisher(Twist, "/base/cmd_vel", RELIABLE_QOS)
    forward = Twist()
    forward.linear.x = 0.1
    launch = Launch("lekiwi_base_virtual", [f"virtual_dir:={tmp_path / 'v'}"], ros_env)
    try:

        def moved() -> bool:
            cmd.publish(forward)
            return bool(odom.messages) and odom.messages[-1].pose.pose.position.x > 0.05

        wait_for(moved, 120, "odom 5 cm forward on cmd_vel", launch)
        pose = odom.messages[-1].pose.pose.position
        assert abs(pose.y) < 0.01
        assert list(wheels.messages[-1].name) == ["base_left_wheel", "base_back_wheel", "base_right_wheel"]
        period = np.median(np.diff(stamps_s(wheels.messages[-40:])))
        assert 0.5 / 50 < period < 2.0 / 50, f"joint_states period {period:.4f} s, expected ~1/50 s"
    finally:
        if launch.proc.poll() is None:
            assert_clean_exit(launch)


@pytest.mark.slow
def test_lekiwi_virtual_launch_drives_arm_and_base_on_one_bus_at_once(ros, ros_env, tmp_path):
    """One emulated bus (arm ids 1-6, wheels 7-9), one lekiwi_node: the arm reaches a commanded pose while the base
    drives forward on cmd_vel, both loops at their rates (30 and 50 Hz), no bus error on either."""
    from diagnostic_msgs.msg import DiagnosticArray
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
    from lerobot_ros.ros.runtime import MessageCollector

    node = ros.create_node("launch_file_probe")
    arm = MessageCollector(node, JointState, "/lekiwi/joint_states", SENSOR_QOS)
    wheels = MessageCollector(node, JointState, "/lekiwi/wheel_joint_states", SENSOR_QOS)
    odom = MessageCollector(node, Odometry, "/lekiwi/odom", SENSOR_QOS)
    diagnostics = MessageCollector(node, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    cmd = node.create_publisher(Twist, "/lekiwi/cmd_vel", RELIABLE_QOS)
    goal = node.create_publisher(Float64MultiArray, "/lekiwi/commands", RELIABLE_QOS)
    forward = Twist()
    forward.linear.x = 0.1
    pose = Float64MultiArray(data=[0.3, 0.0, 0.0, 0.0, 0.0, 0.0])
    launch = Launch("lekiwi_virtual", [f"virtual_dir:={tmp_path / 'v'}"], ros_env)
    try:

        def both_moved() -> bool:
            cmd.publish(forward)
            goal.publish(pose)
            return (
                bool(odom.messages and arm.messages)
                and odom.messages[-1].pose.pose.position.x > 0.05
                and abs(arm.messages[-1].position[0] - 0.3) < 0.02
            )

        wait_for(both_moved, 150, "the arm at its goal and the base 5 cm forward", launch)
        assert list(arm.messages[-1].name)[0] == "shoulder_pan" and len(arm.messages[-1].name) == 6
        assert list(wheels.messages[-1].name) == ["base_left_wheel", "base_back_wheel", "base_right_wheel"]
        arm_period = np.median(np.diff(stamps_s(arm.messages[-30:])))
        wheel_period = np.median(np.diff(stamps_s(wheels.messages[-40:])))
        assert 0.5 / 30 < arm_period < 2.0 / 30 and 0.5 / 50 < wheel_period < 2.0 / 50, (arm_period, wheel_period)

        def errors() -> dict:  # the newest count of each driver's bus errors
            return {
                s.name: next(kv.value for kv in s.values if kv.key == "errors")
                for m in diagnostics.messages
                for s in m.status
                if s.name in ("/lekiwi/arm: arm", "/lekiwi/base: base")
            }

        wait_for(lambda: len(errors()) == 2, 30, "both drivers on /diagnostics", launch)
        assert set(errors()) == {"/lekiwi/arm: arm", "/lekiwi/base: base"} and set(errors().values()) == {"0"}, errors()
    finally:
        if launch.proc.poll() is None:
            assert_clean_exit(launch)


@pytest.mark.slow
def test_sim_so101_launch_publishes_like_the_real_arm_and_takes_commands(ros, ros_env):
    """The twin in realtime mode: joint_states + front camera + /clock, commands move the joints."""
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Image, JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.codecs import numpy_to_float64_multi_array
    from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
    from lerobot_ros.ros.runtime import MessageCollector

    node = ros.create_node("launch_file_probe")
    joints = MessageCollector(node, JointState, "/sim/joint_states", SENSOR_QOS)
    images = MessageCollector(node, Image, "/sim/front/image_raw", SENSOR_QOS)
    clock = MessageCollector(node, Clock, "/clock", SENSOR_QOS)
    pub = node.create_publisher(Float64MultiArray, "/sim/commands", RELIABLE_QOS)
    launch = Launch("sim_so101", ["env.observation_width:=64", "env.observation_height:=48", "rviz:=false"], ros_env)
    try:
        wait_for(lambda: len(joints.messages) > 20 and images.messages, 180, "twin joint states and images", launch)
        assert images.messages[-1].width == 64 and images.messages[-1].height == 48 and clock.messages
        period = np.diff(stamps_s(joints.messages[-20:]))
        # sim-time stamps: one per 1/30 s step (read best effort: a dropped sample is a gap of whole steps)
        steps = period * 30
        np.testing.assert_allclose(steps, np.round(steps), atol=1e-4)
        assert np.all(np.round(steps) >= 1) and np.median(steps) == pytest.approx(1.0), steps
        target = np.array(joints.messages[-1].position)
        target[0] += 0.3
        deadline = time.monotonic() + 60

        def reached() -> bool:
            if time.monotonic() < deadline:
                pub.publish(numpy_to_float64_multi_array(target))
            return abs(joints.messages[-1].position[0] - target[0]) < 0.03

        wait_for(reached, 60, "shoulder_pan to reach the commanded target", launch)
    finally:
        if launch.proc.poll() is None:
            assert_clean_exit(launch)


def test_lockstep_metaworld_policy_ticks_once_per_step_and_timer_elsewhere():
    """Lockstep Meta-World: the policy acts when the step's image arrives (one action per env step, as
    lerobot-eval); the shared include defaults to the contract-fps timer (real robots, realtime sims)."""
    sim = params(by_label(plan("sim_metaworld", **{"policy.path": "/models/act"}), "policy"))
    assert sim["tick_on"] == "observation.image"
    realtime = params(
        by_label(plan("sim_metaworld", mode="realtime", tick_on="timer", **{"policy.path": "/models/act"}), "policy")
    )
    assert realtime["tick_on"] == "timer"
    assert params(by_label(plan("so101_real", **{"policy.path": "/models/act"}), "policy"))["tick_on"] == "timer"


@pytest.mark.parametrize(
    "name",
    [
        "so101_real",
        "so101_virtual",
        "koch_real",
        "sim_so101",
        "sim_libero",
        "sim_metaworld",
        "policy",
        "lekiwi_base",
        "lekiwi_base_virtual",
        "bi_so101_real",
        "bi_so101_virtual",
        "lekiwi",
        "lekiwi_virtual",
        "sim_bi_so101",
        "sim_lekiwi",
    ],
)
def test_every_robot_and_sim_launch_is_loopback_only_unless_remote(name):
    """By default (launch/remote.launch.yaml) every node gets network mode loopback: the loopback-only profile,
    LOCALHOST discovery and no static peer, whatever the shell had. remote:=true peers:=HOST opens it (mode lan):
    subnet discovery, the other host as a static peer and the UDP-only profile for every node."""
    extra = {"policy.path": str(REPO)} if name == "policy" else {}
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="SUBNET", ROS_STATIC_PEERS="10.9.9.9")
    env.pop("FASTDDS_DEFAULT_PROFILES_FILE", None)
    local = evaluate_file(str(LAUNCH / f"{name}.launch.yaml"), extra, environ=env)
    emulators = ("virtual_arm", "virtual_base", "virtual_left", "virtual_right", "virtual_lekiwi")
    nodes = [proc for proc in local.processes if proc.label not in emulators]
    assert nodes
    for proc in nodes:
        assert proc.env["LEROBOT_ROS_NETWORK"] == "loopback", proc.label
        assert proc.env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST" and "ROS_STATIC_PEERS" not in proc.env
        profile = Path(proc.env["FASTDDS_DEFAULT_PROFILES_FILE"])
        assert profile.name == "fastdds_loopback.xml" and profile.is_file()
    remote = evaluate_file(
        str(LAUNCH / f"{name}.launch.yaml"), {"remote": "true", "peers": "10.0.0.2;robot.local", **extra}, environ=env
    )
    for proc in [proc for proc in remote.processes if proc.label not in emulators]:
        assert proc.env["LEROBOT_ROS_NETWORK"] == "lan", proc.label
        assert proc.env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "SUBNET", proc.label
        assert proc.env["ROS_STATIC_PEERS"] == "10.0.0.2;robot.local"
        profile = Path(proc.env["FASTDDS_DEFAULT_PROFILES_FILE"])
        assert profile.name == "fastdds_remote.xml" and profile.is_file()
    env.pop("ROS_STATIC_PEERS")
    no_peers = evaluate_file(str(LAUNCH / f"{name}.launch.yaml"), {"remote": "true", **extra}, environ=env)
    assert all("ROS_STATIC_PEERS" not in proc.env for proc in no_peers.processes)  # multicast discovery only


def test_remote_profile_is_valid_fast_dds_xml_without_shared_memory():
    import xml.etree.ElementTree as ET

    root = ET.parse(REPO / "config" / "dds" / "fastdds_remote.xml").getroot()
    ns = {"d": "http://www.eprosima.com"}
    kinds = [t.text for t in root.iterfind(".//d:transport_descriptor/d:type", ns)]
    assert kinds == ["UDPv4"]
    assert root.find(".//d:useBuiltinTransports", ns).text == "false"  # no built-in SHM next to it
    assert int(root.find(".//d:receiveBufferSize", ns).text) >= 4 * 1024 * 1024


def test_policy_backend_and_server_reach_the_policy_node():
    """backend:=lerobot_server server:=HOST:PORT given to a top-level file reach policy_node; the default is the
    policy in process, and the server's default address is loopback (that server unpickles what it receives)."""
    default = params(by_label(plan("so101_real", **{"policy.path": "/models/act"}), "policy"))
    assert (default["backend"], default["server"], default["server_policy_path"]) == (
        "local",
        "127.0.0.1:8080",
        "/models/act",
    )
    remote = plan(
        "sim_so101",
        **{"policy.path": "/models/act"},
        backend="lerobot_server",
        server="10.0.0.5:8080",
        server_policy_path="/srv/act",
    )
    got = params(by_label(remote, "policy"))
    assert (got["backend"], got["server"], got["server_policy_path"]) == ("lerobot_server", "10.0.0.5:8080", "/srv/act")


@pytest.mark.parametrize(("name", "role"), [("so101_real", "robot"), ("so101_virtual", "robot"), ("policy", "policy")])
def test_secure_true_adds_one_link_node_and_keeps_the_graph_loopback_only(name, role):
    """secure:=true peers:=HOST: one secure_link_node on the robot (connects to peers) or the policy host (listens),
    every node still in network mode loopback; without it, no link node."""
    extra = {"policy.path": str(REPO)} if name == "policy" else {}
    env = dict(os.environ)
    secure = evaluate_file(
        str(LAUNCH / f"{name}.launch.yaml"),
        {"secure": "true", "peers": "10.0.0.2", "certs_dir": "/etc/certs", **extra},
        environ=env,
    )
    links = [proc for proc in secure.processes if proc.label == "secure_link"]
    assert len(links) == 1, [p.label for p in secure.processes]
    got = params(links[0])
    assert (got["role"], got["certs_dir"]) == (role, "/etc/certs")
    assert got["address"] == ("10.0.0.2" if role == "robot" else "0.0.0.0")
    assert all(p.env["LEROBOT_ROS_NETWORK"] == "loopback" for p in secure.processes if p.label != "virtual_arm")
    plain = evaluate_file(str(LAUNCH / f"{name}.launch.yaml"), extra, environ=env)
    assert not [p for p in plain.processes if p.label == "secure_link"]
