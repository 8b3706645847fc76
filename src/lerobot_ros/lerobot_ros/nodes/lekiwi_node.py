"""lekiwi_node: LeKiwi's arm and its omniwheel base on their one Feetech bus, in one process, and the two as one
robot named as LeRobot's `lekiwi` names it.

A real LeKiwi has the arm (ids 1-6) and the wheels (ids 7-9) on one serial port, and two processes cannot share
a port. This process runs both drivers, each with its own LeRobot bus object, taking turns on the wire
(hardware.shared_port): `arm` is robot_node (joint_states, commands, joint_trajectory, set_torque, watchdog,
limits) and `base` is base_node (cmd_vel, odom, wheel joint states on `wheel_joint_states`, so the arm's
`joint_states` keep the arm's joints only). Pass the port to both: `-p robot.port:=/dev/ttyACM0 -p
port:=/dev/ttyACM0` (the launch file lekiwi.launch.yaml does).

The third node, `robot`, joins them (lerobot_ros.hardware.lekiwi.RobotJoin): `robot_state` (Float64MultiArray:
the arm's six joints in rad, then the base's measured x, y in m/s and yaw rate in rad/s; the lekiwi contract
converts to LeRobot's units) at the arm's rate, and `robot_commands` (the same nine, a policy node's action)
split into the arm's `commands` and the base's `cmd_vel`. An operator drives through `teleop/arm` (a leader's
six goals: teleop_node's commands_topic) and `teleop/cmd_vel` (a Twist): joined and published on
`robot_commands`, so a recorder sees one action whoever drives.

Parameters: robot_node's (`RobotNodeConfig`) on `arm`, base_node's (`BaseNodeConfig`) on `base`,
`LeKiwiRobotConfig` on `robot`.
"""

from __future__ import annotations

from lerobot_ros.hardware.config import BaseNodeConfig, LeKiwiRobotConfig, RobotNodeConfig
from lerobot_ros.nodes.base_node import BaseNode
from lerobot_ros.nodes.lekiwi_robot_node import LeKiwiRobotNode
from lerobot_ros.nodes.robot_node import RobotNode
from lerobot_ros.ros.entry import run_node

#: the nodes this process runs and the parameters each declares (the reference tables and the launch-file check
#: read this: a parameter given to the process reaches every node, each takes its own)
NODES_IN_PROCESS = {"arm": RobotNodeConfig, "base": BaseNodeConfig, "robot": LeKiwiRobotConfig}


def make_nodes() -> list:
    made: list = []
    try:
        made.append(RobotNode(node_name="arm"))
        made.append(BaseNode(node_name="base", cli_args=["--ros-args", "-r", "joint_states:=wheel_joint_states"]))
        made.append(LeKiwiRobotNode())
    except BaseException:
        for node in reversed(made):
            if hasattr(node, "close"):
                node.close()
            node.destroy_node()
        raise
    return made


def main(args=None) -> None:
    run_node(make_nodes, args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
