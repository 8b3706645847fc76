"""Scripted experts: a policy source for demos and tests that acts on what the bridge publishes.

MetaWorldExpert: Meta-World's own per-task expert (`metaworld.policies`, mapped per task by LeRobot),
fed the env's 39-D state. SO101PickExpert: hover, descend, close, lift on joint targets (radians), from
the joint positions and the cube position; Cartesian waypoints are turned into joint targets with
lerobot_env_so101's damped least-squares IK on a kinematic copy of the twin's model.
"""

from __future__ import annotations

import enum

import numpy as np

from lerobot_ros.sim.metaworld_env import check_metaworld_task, lerobot_metaworld_config
from lerobot_ros.sim.so101_twin import JAW_PADS, JOINT_NAMES, joint_mid_range, load_ik_module, resolve_scene


class MetaWorldExpert:
    """Meta-World's scripted policy for one task: 39-D state -> 4-D action."""

    def __init__(self, task: str):
        # the policy class LeRobot maps the task to (lerobot.envs.metaworld.TASK_POLICY_MAPPING), named in
        # its config file and taken from metaworld.policies without importing LeRobot (and torch)
        import metaworld.policies

        self.task = check_metaworld_task(task)
        name = lerobot_metaworld_config()["TASK_POLICY_MAPPING"][self.task]
        self.policy = getattr(metaworld.policies, name)()

    def reset(self) -> None:
        """The Meta-World experts are stateless."""

    def act(self, env_state: np.ndarray) -> np.ndarray:
        env_state = np.asarray(env_state, dtype=np.float64)
        if env_state.shape != (39,):
            raise ValueError(f"the Meta-World expert needs the 39-D env state, got shape {env_state.shape}")
        return np.asarray(self.policy.get_action(env_state), dtype=np.float64)


class Phase(enum.Enum):
    HOVER = 0
    DESCEND = 1
    CLOSE = 2
    LIFT = 3
    DONE = 4


class SO101PickExpert:
    """A pick on joint targets for the SO-101 twin (or a real arm with a known cube position).

    Position servos sag under gravity (kp * error must hold the arm up: ~0.03 rad at the shoulder, ~1 cm at
    the gripper), so stepping a Cartesian waypoint from the *measured* pose stalls wherever the step is
    smaller than the sag, and holding the measured joints lets the arm sink. The expert therefore steps a
    reference pose of its own toward each phase's target (IK from the reference, not the measurement) and
    commands the reference plus the servo error that gravity will cause there (gravity torque / kp, from
    the model). Phase changes look at the measured grasp point.
    """

    HOVER = 0.07  # m above the cube centre
    GRASP = 0.005  # grasp point height above the cube centre
    LIFT = 0.12  # m above the table
    OPEN, CLOSED = 1.0, -0.17  # gripper joint targets in the MJCF's radians
    TOLERANCE = 0.01
    GRASP_JAW_ANGLE = 0.46  # rad: the pads are parallel, 40 mm apart
    #: the fixed pad's inner face sits this far outside the cube's face when the jaw comes down (at the grasp
    #: angle both faces would touch a 40 mm cube exactly, so a millimetre of error put the fixed pad on top of
    #: the cube); closing pushes the cube onto the fixed pad
    PAD_CLEARANCE = 0.006
    CLOSE_STEPS = 12
    PHASE_TIMEOUT = 45
    MAX_STEP = 0.015  # m per step of the reference toward a waypoint, so the IK stays on its branch
    DESCEND_STEP = 0.005  # m per step going down onto the cube: slow enough that the arm follows its reference
    SETTLED = 0.001  # m the grasp point may move in one step for the hover to count as reached
    #: metres of position error one radian of tilt from vertical costs the IK: low enough that cubes at the
    #: far edge of the workspace (x ~ 0.4 m, out of reach with the jaws vertical) are taken with a tilted
    #: gripper (~30 degrees) instead of being missed by 3-5 cm
    ORIENTATION_WEIGHT = 0.02

    def __init__(self, scene: str = "pick"):
        import mujoco

        self._ikm = load_ik_module()
        self._model = mujoco.MjModel.from_xml_path(str(resolve_scene(scene)))
        self._data = mujoco.MjData(self._model)
        self._site = self._model.site("gripperframe").id
        self._dofs = np.array([self._model.joint(n).dofadr[0] for n in JOINT_NAMES[:5]])
        self._qpos = np.array([self._model.joint(n).qposadr[0] for n in JOINT_NAMES])
        self._kp = np.array([self._model.actuator(n).gainprm[0] for n in JOINT_NAMES[:5]])
        self._mid = joint_mid_range(self._model)  # joints on ROS are radians from mid-range
        self._offset = self._grasp_offset()
        self.reset()

    def _grasp_offset(self) -> np.ndarray:
        """Midpoint of the two fingertip pads with the jaw at its grasp angle, in the gripper site frame."""
        import mujoco

        self._data.qpos[self._qpos[5]] = self.GRASP_JAW_ANGLE
        mujoco.mj_forward(self._model, self._data)
        fixed, moving = (self._data.geom_xpos[self._model.geom(n).id] for n in JAW_PADS)
        rot = self._data.site_xmat[self._site].reshape(3, 3)
        self._jaw_axis = rot.T @ (moving - fixed) / np.linalg.norm(moving - fixed)  # site frame, fixed -> moving
        return rot.T @ ((fixed + moving) / 2 - self._data.site_xpos[self._site])

    def _jaw_direction(self) -> np.ndarray:
        """Horizontal world direction from the fixed to the moving pad at the reference pose."""
        assert self._ref is not None  # act() sets it before any _target() that calls this
        self.grasp_point(self._ref)
        axis = self._data.site_xmat[self._site].reshape(3, 3) @ self._jaw_axis
        axis[2] = 0.0
        return axis / max(np.linalg.norm(axis), 1e-9)

    def reset(self) -> None:
        self.phase = Phase.HOVER
        self._steps = 0
        self._cube0: np.ndarray | None = None
        self._ref: np.ndarray | None = None  # reference arm pose (5 joints, the MJCF's radians)
        self._grasp_xy: np.ndarray | None = None
        self._last_grasp: np.ndarray | None = None

    @property
    def done(self) -> bool:
        return self.phase is Phase.DONE

    def grasp_point(self, joints: np.ndarray) -> np.ndarray:
        """World position of the point between the jaws for joint positions in the MJCF's radians."""
        import mujoco

        self._data.qpos[self._qpos[: len(joints)]] = joints
        mujoco.mj_kinematics(self._model, self._data)
        return self._ikm.control_point(self._data, self._site, self._offset)

    def gravity_sag(self, joints: np.ndarray) -> np.ndarray:
        """Servo error (rad) that holds the arm still at `joints` against gravity: torque / kp."""
        import mujoco

        self._data.qpos[self._qpos[: len(joints)]] = joints
        self._data.qvel[:] = 0.0
        mujoco.mj_forward(self._model, self._data)
        return self._data.qfrc_bias[self._dofs] / self._kp

    def _ik(self, arm: np.ndarray, target: np.ndarray) -> np.ndarray:
        ik = self._ikm
        self.grasp_point(arm)
        seed = arm.copy()
        roll = self._model.joint("wrist_roll")
        seed[4] = np.clip(
            seed[4] + ik.roll_to_align_axis(self._data, self._site, roll.id, 2, np.array([0.0, 1.0, 0.0])), *roll.range
        )
        return ik.solve_ik(
            self._model,
            self._data,
            self._site,
            self._dofs,
            target,
            ik_iterations=30,
            seed_q=seed,
            point_offset=self._offset,
            approach_axis=0,
            orientation_weight=self.ORIENTATION_WEIGHT,
        )

    def _target(self, cube: np.ndarray) -> np.ndarray:
        c = self._cube0
        assert c is not None  # act() sets it before calling this
        if self.phase is Phase.HOVER:
            return np.array([cube[0], cube[1], c[2] + self.HOVER])
        if self._grasp_xy is None:  # entering DESCEND: fix where the jaws go down
            self._grasp_xy = c[:2] - self.PAD_CLEARANCE * self._jaw_direction()[:2]  # toward the fixed pad
        x, y = self._grasp_xy
        if self.phase in (Phase.DESCEND, Phase.CLOSE):
            return np.array([x, y, c[2] + self.GRASP])
        return np.array([x, y, self.LIFT])

    def act(self, joints: np.ndarray, cube: np.ndarray) -> np.ndarray:
        """Joint targets (6, radians from mid-range, as on ROS) for the next control step."""
        joints = np.asarray(joints, dtype=np.float64) + self._mid
        cube = np.asarray(cube, dtype=np.float64)
        if self._cube0 is None:
            self._cube0 = cube.copy()
        if self._ref is None:
            self._ref = joints[:5].copy()
        grasp = self.grasp_point(joints)
        moved = np.inf if self._last_grasp is None else np.linalg.norm(grasp - self._last_grasp)
        self._last_grasp = grasp
        target = self._target(cube)
        reached: bool | np.bool_ = np.linalg.norm(target - grasp) < self.TOLERANCE
        if self.phase is Phase.HOVER:  # go down only from a still arm above the cube
            reached = reached and moved < self.SETTLED
        if self.phase is Phase.CLOSE:
            reached = self._steps >= self.CLOSE_STEPS
        if (reached or self._steps >= self.PHASE_TIMEOUT) and self.phase is not Phase.DONE:
            self.phase = Phase(self.phase.value + 1)
            self._steps = 0
            target = self._target(cube) if self.phase is not Phase.DONE else target
        self._steps += 1
        if self.phase is not Phase.CLOSE:
            ref_point = self.grasp_point(self._ref)
            error = target - ref_point
            dist = np.linalg.norm(error)
            limit = self.DESCEND_STEP if self.phase is Phase.DESCEND else self.MAX_STEP
            waypoint = ref_point + (error if dist <= limit else error * limit / dist)
            self._ref = self._ik(self._ref, waypoint)
        gripper = self.OPEN if self.phase in (Phase.HOVER, Phase.DESCEND) else self.CLOSED
        arm = self._ref + self.gravity_sag(np.concatenate([self._ref, joints[5:]]))
        return np.concatenate([arm, [gripper]]) - self._mid
