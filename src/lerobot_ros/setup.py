"""ament_python package of lerobot_ros (colcon) and the `lerobot-ros` wheel (pyproject.toml has the rest).

Launch files and configs live at the top of the repository (launch/, config/; linked into this folder so an
sdist carries them) and are installed into share/lerobot_ros/ as ROS expects, so `find-pkg-share
lerobot_ros` finds them after colcon or pip. colcon installs the executables into lib/lerobot_ros/ (setup.cfg);
a wheel's console scripts land in bin/, so a wheel also carries lib/lerobot_ros/<executable>: a two-line
`sh` wrapper that runs bin/<executable>, where `ros2 launch` and `lerobot-ros launch` look for it.
"""

import os
import re
import stat
import sys

from setuptools import find_packages, setup

PACKAGE = "lerobot_ros"
HERE = os.path.dirname(os.path.abspath(__file__))


def package_version() -> str:
    """The one version: package.xml's <version> (ROS reads it there; the wheel and `lerobot-ros --version` take it
    from here, and tests/integration/test_version.py holds lerobot_ros_msgs to the same)."""
    with open(os.path.join(HERE, "package.xml"), encoding="utf-8") as f:
        match = re.search(r"<version>\s*([^<\s]+)\s*</version>", f.read())
    if match is None:
        raise RuntimeError("package.xml has no <version>")
    return match.group(1)


def tree(top: str, dest: str) -> list[tuple[str, list[str]]]:
    """data_files entries copying every file under top (a folder here) into share/PACKAGE/dest, keeping folders."""
    entries = []
    root = os.path.join(HERE, top)
    for folder, _dirs, files in os.walk(root, followlinks=True):
        if "__pycache__" in folder:
            continue
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
    "base_node": "lerobot_ros.nodes.base_node:main",
    "bimanual_node": "lerobot_ros.nodes.bimanual_node:main",
    "lekiwi_node": "lerobot_ros.nodes.lekiwi_node:main",
    "lekiwi_robot_node": "lerobot_ros.nodes.lekiwi_robot_node:main",
    "twist_teleop": "lerobot_ros.nodes.twist_teleop_node:main",
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
    "secure_link_node": "lerobot_ros.nodes.secure_link_node:main",
}

# base: every node, the contracts, rosbag2 recording / reading, the launch runner; no torch, no LeRobot (the
# extras in pyproject.toml add those). Here and not in pyproject.toml only for the interfaces' pin.
BASE_REQUIRES = [
    f"lerobot-ros-msgs=={package_version()}",
    "numpy>=1.26",
    "pyyaml>=6",
    "rosbags>=0.11,<0.12",
    "mcap>=1.2",
    "opencv-python-headless>=4.9",
    "pyserial>=3.5",
    "cryptography>=43",  # certificates of the secure two-host link (lerobot-ros certs)
    "ros-rclpy",
    "ros-rmw-fastrtps-cpp",
    "ros-std-msgs",
    "ros-sensor-msgs",
    "ros-geometry-msgs",
    "ros-trajectory-msgs",
    "ros-std-srvs",
    "ros-diagnostic-msgs",
    "ros-visualization-msgs",
    "ros-nav-msgs",
    "ros-builtin-interfaces",
    "ros-rosgraph-msgs",
]


def lib_wrappers() -> list[tuple[str, list[str]]]:
    """lib/lerobot_ros/<executable> for a wheel (colcon writes the scripts there itself, see setup.cfg)."""
    if "bdist_wheel" not in sys.argv:
        return []
    folder = os.path.join("build", "lib_wrappers")
    os.makedirs(os.path.join(HERE, folder), exist_ok=True)
    files = []
    for name in NODES:
        path = os.path.join(HERE, folder, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(f'#!/bin/sh\nexec "$(dirname -- "$0")/../../bin/{name}" "$@"\n')
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        files.append(os.path.join(folder, name))
    return [(os.path.join("lib", PACKAGE), files)]


setup(
    name="lerobot-ros",
    version=package_version(),
    packages=find_packages(exclude=["test", "tests"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        *tree("launch", "launch"),
        *tree("config", "config"),
        *lib_wrappers(),
    ],
    install_requires=BASE_REQUIRES,
    python_requires=">=3.12,<3.13",  # the ROS 2 wheels on PyPI are cp312
    zip_safe=False,
    entry_points={
        "console_scripts": [f"{name} = {target}" for name, target in NODES.items()]
        + ["lerobot-ros = lerobot_ros.cli.main:entry"],
    },
)
