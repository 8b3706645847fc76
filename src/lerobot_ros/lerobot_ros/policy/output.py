"""Where and as what policy_node publishes its action: the output mode and the action topic.

The mode follows the contract's action message type unless set; a mode that differs from that type goes
to a sibling topic next to the contract's (…/commands, …/joint_command, …/joint_trajectory), so a
trajectory controller and a per-tick command stream never share one topic.
"""

from __future__ import annotations

import posixpath

OUTPUT_MODES = ("commands", "joint_state", "trajectory")
MODE_OF_TYPE = {
    "std_msgs/msg/Float64MultiArray": "commands",
    "sensor_msgs/msg/JointState": "joint_state",
    "trajectory_msgs/msg/JointTrajectory": "trajectory",
}
SIBLING_TOPIC = {"commands": "commands", "joint_state": "joint_command", "trajectory": "joint_trajectory"}


def output_mode(requested: str, action_msg_type: str) -> str:
    """`requested` ("" = from the contract's action type); ValueError for an unknown mode."""
    mode = requested or MODE_OF_TYPE.get(action_msg_type, "commands")
    if mode not in OUTPUT_MODES:
        raise ValueError(f"output_mode must be one of {OUTPUT_MODES}, got {mode!r}")
    return mode


def action_topic(mode: str, requested: str, action_msg_type: str, contract_topic: str) -> str:
    """`requested` when set; the contract's topic when its type is the mode's; else the sibling topic."""
    if requested:
        return requested
    if MODE_OF_TYPE.get(action_msg_type) == mode:
        return contract_topic
    return f"{posixpath.dirname(contract_topic).rstrip('/')}/{SIBLING_TOPIC[mode]}"
