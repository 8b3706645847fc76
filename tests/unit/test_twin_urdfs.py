"""The pair's and LeKiwi's URDFs (rviz's robot_description) against the SO-101 URDF they are built from: names as
the twins publish them, the same joint limits, and each arm where its MuJoCo scene puts it."""

from __future__ import annotations

import numpy as np
import pytest

from lerobot_ros.sim.bi_so101_twin import PAIR_JOINTS
from lerobot_ros.sim.robot_urdfs import ARM_ON_BASE, PAIR_Y, robot_urdf
from lerobot_ros.sim.so101_twin import JOINT_NAMES
from lerobot_ros.viz import parse_urdf


@pytest.fixture(scope="module")
def arm():
    return parse_urdf(robot_urdf("so101"))


def test_the_pair_is_two_prefixed_arms_under_world_where_the_table_scene_puts_them(arm):
    pair = parse_urdf(robot_urdf("bi_so101"))
    assert pair.root == "world" and sorted(pair.movable_joints) == sorted(PAIR_JOINTS)
    for name in JOINT_NAMES:
        for side in ("left", "right"):
            j, ref = pair.joints[f"{side}_{name}"], arm.joints[name]
            assert (j.lower, j.upper) == (ref.lower, ref.upper)
    q = {"shoulder_pan": 0.3, "elbow_flex": -0.4}
    single = arm.forward_kinematics(q)["gripper_link"]
    both = pair.forward_kinematics({f"{s}_{k}": v for s in ("left", "right") for k, v in q.items()})
    for side in ("left", "right"):
        assert both[f"{side}_gripper_link"][:3, 3] == pytest.approx(single[:3, 3] + [0.0, PAIR_Y[side], 0.0], abs=1e-9)


def test_lekiwi_is_the_arm_on_base_link_with_its_joints_named_as_joint_states_name_them(arm):
    kiwi = parse_urdf(robot_urdf("lekiwi"))
    assert kiwi.root == "base_link" and kiwi.movable_joints == list(JOINT_NAMES)
    q = {"shoulder_lift": 0.5, "wrist_flex": -0.2}
    tip = kiwi.forward_kinematics(q)["arm_gripper_link"][:3, 3]
    assert tip == pytest.approx(arm.forward_kinematics(q)["gripper_link"][:3, 3] + np.asarray(ARM_ON_BASE), abs=1e-9)
    assert {f"wheel_{i}_link" for i in range(3)} <= set(kiwi.links)


def test_meshes_are_absolute_and_an_unknown_robot_is_named():
    text = robot_urdf("bi_so101")
    assert 'filename="file:///' in text and 'filename="assets/' not in text
    with pytest.raises(ValueError, match="no URDF for 'ur5'; use one of so101, bi_so101, lekiwi"):
        robot_urdf("ur5")
