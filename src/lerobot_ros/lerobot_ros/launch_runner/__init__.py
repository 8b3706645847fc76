"""A runner for ROS 2 YAML launch files where `launch`/`launch_ros` are not installed (pip-only installs).

parse (parser.parse_file -> entities) -> evaluate (evaluate.evaluate_file -> Plan of ProcessSpec)
-> run (runner.run_processes). The supported subset is listed in launch/README.md.
"""

from lerobot_ros.launch_runner.errors import LaunchError
from lerobot_ros.launch_runner.evaluate import Plan, ProcessSpec, evaluate_file
from lerobot_ros.launch_runner.parser import parse_file
from lerobot_ros.launch_runner.runner import run_processes

__all__ = ["LaunchError", "Plan", "ProcessSpec", "evaluate_file", "parse_file", "run_processes"]
