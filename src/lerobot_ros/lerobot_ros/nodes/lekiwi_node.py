"""lekiwi_node: LeKiwi's arm and its omniwheel base on their one Feetech bus, in one process.

A real LeKiwi has the arm (ids 1-6) and the wheels (ids 7-9) on one serial port, and two processes cannot share
a port. This process runs both drivers, each with its own LeRobot bus object, taking turns on the wire
(hardware.shared_port): `arm` is robot_node (joint_states, commands, joint_trajectory, set_torque, watchdog,
limits) and `base` is base_node (cmd_vel, odom, wheel joint states on `wheel_joint_states`, so the arm's
`joint_states` keep the arm's joints only). Pass the port to both: `-p robot.port:=/dev/ttyACM0 -p
port:=/dev/ttyACM0` (the launch file lekiwi.launch.yaml does).

Parameters: robot_node's (`RobotNodeConfig`) on `arm`, base_node's (`BaseNodeConfig`) on `base`.
"""

from __future__ import annotations

from lerobot_ros.nodes.base_node import BaseNode
from lerobot_ros.nodes.robot_node import RobotNode
from lerobot_ros.ros.entry import run_node


def make_nodes() -> list:
    arm = RobotNode(node_name="arm")
    try:
        base = BaseNode(node_name="base", cli_args=["--ros-args", "-r", "joint_states:=wheel_joint_states"])
    except BaseException:
        arm.close()
        arm.destroy_node()
        raise
    return [arm, base]


def main(args=None) -> None:
    run_node(make_nodes, args)


if __name__ == "__main__":
    main()
