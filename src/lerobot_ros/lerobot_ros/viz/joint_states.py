"""joint_states in the project's convention (0 = middle of each joint's range) -> URDF joint values.

robot_state_publisher (and so rviz's RobotModel) reads joint positions as URDF joint values. The project's
SO-101 joint_states (robot_node and the MuJoCo twin) put 0 at the middle of the joint's calibrated range; the
SO-101 URDF's zero is the mid-range for most joints but not for wrist_roll (~0.049 rad) and gripper (~0.785 rad),
so unconverted states draw the jaw ~45 degrees off. The shift is `joint_zero_offsets` (the same one the
predicted-chunk markers apply), so the model and the markers agree.

Joints the URDF lacks (and mimic joints, which follow their source joint) pass through unchanged: the message
keeps its names, order, velocities and efforts, and robot_state_publisher ignores names it does not know.
"""

from __future__ import annotations

from collections.abc import Mapping

from sensor_msgs.msg import JointState


def urdf_joint_state(msg: JointState, offsets: Mapping[str, float]) -> JointState:
    """A copy of `msg` with each named position shifted by its offset (URDF value = ROS value + offset).

    Same header, names, velocities and efforts. A message without positions (velocities only) is copied as is;
    positions that do not match the names are a ValueError that says so.
    """
    names = list(msg.name)
    position = list(msg.position)
    if position and len(position) != len(names):
        raise ValueError(f"JointState has {len(position)} positions for {len(names)} names; not converted")
    out = JointState()
    out.header = msg.header
    out.name = names
    out.position = [float(p) + offsets.get(n, 0.0) for n, p in zip(names, position)]
    out.velocity = list(msg.velocity)
    out.effort = list(msg.effort)
    return out
