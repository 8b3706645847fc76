"""ament_python package of lerobot_ros; also a plain pip-installable distribution.

Launch files and configs live at the top of the repository (launch/, config/) and are installed into
share/lerobot_ros/ as ROS expects, so `find-pkg-share lerobot_ros` finds them after colcon or pip.
"""

import os
import re

from setuptools import find_packages, setup

PACKAGE = "lerobot_ros"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))


def package_version() -> str:
    """The one version: package.xml's <version> (ROS reads it there; the wheel and `lerobot-ros --version` take it
    from here, and tests/integration/test_version.py holds lerobot_ros_msgs to the same)."""
    with open(os.path.join(HERE, "package.xml"), encoding="utf-8") as f:
        match = re.search(r"<version>\s*([^<\s]+)\s*</version>", f.read())
    if match is None:
        raise RuntimeError("package.xml has no <version>")
    return match.group(1)


def tree(top: str, dest: str) -> list[tuple[str, list[str]]]:
    """data_files entries copying every file under REPO/top into share/PACKAGE/dest, keeping folders."""
    entries = []
    root = os.path.join(REPO, top)
    for folder, _dirs, files in os.walk(root):
        if files:
            rel = os.path.relpath(folder, root)
            target = os.path.normpath(os.path.join("share", PACKAGE, dest, rel))
            entries.append((target, [os.path.relpath(os.path.join(folder, f), HERE) for f in sorted(files)]))
    return entries


NODES = {
    "talker": "lerobot_ros.nodes.talker:main",
    "listener": "lerobot_ros.nodes.listener:main",
    "episode_recorder": "lerobot_ros.nodes.episode_recorder_node:main",
    "episode_keyboard": "lerobot_ros.nodes.episode_keyboard_node:main",
    "robot_node": "lerobot_ros.nodes.robot_node:main",
    "teleop_node": "lerobot_ros.nodes.teleop_node:main",
    "motor_bus_node": "lerobot_ros.nodes.motor_bus_node:main",
    "camera_node": "lerobot_ros.nodes.camera_node:main",
    "image_republish_node": "lerobot_ros.nodes.image_republish_node:main",
    "policy_node": "lerobot_ros.nodes.policy_node:main",
    "sim_bridge_node": "lerobot_ros.nodes.sim_bridge_node:main",
    "scripted_expert_node": "lerobot_ros.nodes.scripted_expert_node:main",
    "chunk_markers_node": "lerobot_ros.nodes.chunk_markers_node:main",
    "urdf_joint_states_node": "lerobot_ros.nodes.urdf_joint_states_node:main",
    "viewer_node": "lerobot_ros.nodes.viewer_node:main",
    "ee_teleop_node": "lerobot_ros.nodes.ee_teleop_node:main",
    "takeover_node": "lerobot_ros.nodes.takeover_node:main",
}

setup(
    name=PACKAGE,
    version=package_version(),
    packages=find_packages(exclude=["test", "tests"]),
    python_requires=">=3.10",
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        *tree("launch", "launch"),
        *tree("config", "config"),
    ],
    install_requires=["setuptools", "numpy", "pyyaml"],
    zip_safe=True,
    maintainer="lerobot_ros maintainers",
    maintainer_email="maintainers@lerobot-ros.dev",
    description="LeRobot on ROS 2: nodes, rosbag2 <-> LeRobotDataset, simulators and launch files.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [f"{name} = {target}" for name, target in NODES.items()]
        + ["lerobot-ros = lerobot_ros.cli.main:main"],
    },
)
