"""Every simulator kind and its scripted expert in one table, so adding a simulator touches this module only.

The bridge (`make_sim`), `lerobot-ros eval` (default task, contract, expert, what `--task` expands to)
and the scripted expert node (`make_expert`) all look a kind up here instead of listing kinds.

Task expansion follows lerobot-eval's `--env.task` per simulator (LeRobot 0.6.1,
`lerobot.envs.metaworld.create_metaworld_envs` / `lerobot.envs.libero.create_libero_envs`): a
comma-separated list; a Meta-World entry is a task name or a difficulty group of
`DIFFICULTY_TO_TASKS` (its tasks get task ids 0..n-1 inside the group); a LIBERO entry is a suite and
gives every task id of the suite (or the ids asked for).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from lerobot_ros.sim.base import RenderSettings, SimEnv, SimStartupError
from lerobot_ros.sim.expert_sync import ENV_STATE, JOINTS, STATUS, ExpertSync

if TYPE_CHECKING:
    import numpy as np


class TaskRef(NamedTuple):
    """One evaluated task: lerobot-eval's (task_group, task_id) and the task the bridge runs."""

    group: str
    task_id: int
    task: str


@dataclass(frozen=True)
class SimKind:
    """How to build, name and score one simulator kind."""

    name: str
    default_task: str
    contract: str  # shipped contract a policy node reads this simulator through
    build: Callable[..., SimEnv]  # (task, render, fps, cameras, task_id) -> SimEnv, nothing built yet
    expand: Callable[[str, Sequence[int] | None], list[TaskRef]]  # --task text -> tasks, in order
    expert: str | None = None  # scripted expert that solves it (scripted_expert_node's `expert`)
    options: tuple[str, ...] = ()  # the settings only this kind has, passed to `build` by keyword


@dataclass(frozen=True)
class ExpertKind:
    name: str
    # the experts' act(...) signatures differ (see `act`), so the expert itself is typed Any
    make: Callable[[str, str], Any]  # (task, scene) -> expert with reset() / act(...)
    needs: tuple[str, ...] = (STATUS, ENV_STATE)  # the step's messages it acts on (sim.expert_sync names)
    act: Callable[[Any, dict], np.ndarray] = lambda expert, inputs: expert.act(inputs[ENV_STATE])


def _split(text: str) -> list[str]:
    return [t.strip() for t in str(text).split(",") if t.strip()]


# -- Meta-World ----------------------------------------------------------------------------------------
def _build_metaworld(task, render, fps, cameras, task_id) -> SimEnv:
    from lerobot_ros.sim.metaworld_env import MetaWorldSim

    if fps:
        raise SimStartupError("Meta-World's rate is fixed (80 fps, as LeRobot runs it); leave fps at 0")
    return MetaWorldSim(task or "push-v3", render)


def metaworld_groups() -> dict[str, list[str]]:
    """LeRobot's difficulty groups (easy, medium, hard, very_hard: DIFFICULTY_TO_TASKS)."""
    from lerobot_ros.sim.metaworld_env import lerobot_metaworld_config

    try:
        return dict(lerobot_metaworld_config()["DIFFICULTY_TO_TASKS"])
    except ImportError:
        return {}


def _expand_metaworld(text: str, task_ids) -> list[TaskRef]:
    from lerobot_ros.sim.metaworld_env import check_metaworld_task, metaworld_tasks

    groups = metaworld_groups()
    out = []
    for group in _split(text):
        if group in groups:
            out += [TaskRef(group, i, t) for i, t in enumerate(groups[group])]
            continue
        try:
            name = check_metaworld_task(group)
        except SimStartupError as exc:
            if "unknown" not in str(exc):
                raise
            hint = str(exc).rsplit(" (", 1)[0]  # "unknown Meta-World task 'x': did you mean ...?"
            raise SimStartupError(
                f"{hint}; valid: the tasks {', '.join(sorted(metaworld_tasks()))} or the difficulty groups "
                f"{', '.join(groups)}, comma-separated"
            ) from None
        out.append(TaskRef(group, 0, name))
    return _filter_ids(out, task_ids)


# -- SO-101 twin ---------------------------------------------------------------------------------------
def _build_so101(task, render, fps, cameras, task_id, camera_fps: float = 0.0, meshes: str = "simplified") -> SimEnv:
    from lerobot_ros.sim.so101_twin import SO101Twin

    cams = ("front",) if cameras is None else tuple(cameras)
    return SO101Twin(
        scene=task or "pick", cameras=cams, fps=fps or 30.0, render=render, meshes=meshes, camera_fps=camera_fps or None
    )


def _expand_so101(text: str, task_ids) -> list[TaskRef]:
    from lerobot_ros.sim.so101_twin import resolve_scene

    out = []
    for scene in _split(text):
        resolve_scene(scene)  # SimStartupError naming the scenes there are
        out.append(TaskRef(scene, 0, scene))
    return _filter_ids(out, task_ids)


# -- two SO-101 arms at a table, LeKiwi --------------------------------------------------------------
def _composed_twin(module: str, cls: str, scene: str, default_cameras: tuple[str, ...]) -> Callable[..., SimEnv]:
    """The builder of a twin composed from the SO-101 arm (the pair, LeKiwi): its default scene and cameras."""

    def build(task, render, fps, cameras, task_id, camera_fps: float = 0.0, meshes: str = "simplified") -> SimEnv:
        import importlib

        twin = getattr(importlib.import_module(module), cls)
        cams = default_cameras if cameras is None else tuple(cameras)
        return twin(
            scene=task or scene,
            cameras=cams,
            fps=fps or 30.0,
            render=render,
            meshes=meshes,
            camera_fps=camera_fps or None,
        )

    return build


_build_bi_so101 = _composed_twin("lerobot_ros.sim.bi_so101_twin", "BiSO101Twin", "table", ("front",))
_build_lekiwi = _composed_twin("lerobot_ros.sim.lekiwi_twin", "LeKiwiTwin", "floor", ("front", "wrist"))


def _expand_scenes(kind: str, scenes: tuple[str, ...]):
    def expand(text: str, task_ids) -> list[TaskRef]:
        out = []
        for scene in _split(text):
            if scene not in scenes:
                raise SimStartupError(f"{kind} scene {scene!r} is not one of {list(scenes)}")
            out.append(TaskRef(scene, 0, scene))
        return _filter_ids(out, task_ids)

    return expand


# -- LIBERO --------------------------------------------------------------------------------------------
def _build_libero(task, render, fps, cameras, task_id) -> SimEnv:
    from lerobot_ros.sim.libero_env import LiberoSim

    if fps:
        raise SimStartupError("LIBERO's rate is fixed (20 fps, as LeRobot runs it); leave fps at 0")
    return LiberoSim(task or "libero_spatial", task_id, render)


def _expand_libero(text: str, task_ids) -> list[TaskRef]:
    from lerobot_ros.sim.libero_env import libero_suite_tasks

    out = []
    for suite in _split(text):
        n = libero_suite_tasks(suite)  # SimStartupError naming the suites there are
        ids = range(n) if task_ids is None else task_ids
        bad = [i for i in ids if not 0 <= i < n]
        if bad:
            raise SimStartupError(f"LIBERO suite {suite} has tasks 0..{n - 1}, not {', '.join(map(str, bad))}")
        out += [TaskRef(suite, int(i), suite) for i in ids]
    return out


def _filter_ids(tasks: list[TaskRef], task_ids) -> list[TaskRef]:
    if task_ids is None:
        return tasks
    kept = [t for t in tasks if t.task_id in task_ids]
    if not kept:
        raise SimStartupError(
            f"no task has id {', '.join(map(str, task_ids))} (ids there: "
            f"{', '.join(sorted({str(t.task_id) for t in tasks}))})"
        )
    return kept


# -- experts -------------------------------------------------------------------------------------------
def _metaworld_expert(task: str, scene: str):
    from lerobot_ros.sim.experts import MetaWorldExpert

    return MetaWorldExpert(task)


def _so101_expert(task: str, scene: str):
    from lerobot_ros.sim.experts import SO101PickExpert

    return SO101PickExpert(scene)


SIMS: dict[str, SimKind] = {
    k.name: k
    for k in (
        SimKind("metaworld", "push-v3", "metaworld", _build_metaworld, _expand_metaworld, expert="metaworld"),
        SimKind(
            "so101",
            "pick",
            "so101_sim",
            _build_so101,
            _expand_so101,
            expert="so101_pick",
            options=("camera_fps", "meshes"),
        ),
        SimKind("libero", "libero_spatial", "libero", _build_libero, _expand_libero),
        SimKind(
            "bi_so101",
            "table",
            "bi_so101",
            _build_bi_so101,
            _expand_scenes("bi_so101", ("table",)),
            options=("camera_fps", "meshes"),
        ),
        SimKind(
            "lekiwi",
            "floor",
            "lekiwi",
            _build_lekiwi,
            _expand_scenes("lekiwi", ("floor",)),
            options=("camera_fps", "meshes"),
        ),
    )
}
EXPERTS: dict[str, ExpertKind] = {
    k.name: k
    for k in (
        ExpertKind("metaworld", _metaworld_expert),  # the 39-D environment state
        ExpertKind(
            "so101_pick",
            _so101_expert,
            (STATUS, ENV_STATE, JOINTS),  # joints + the cube's position
            lambda expert, i: expert.act(i[JOINTS], i[ENV_STATE][:3]),
        ),
    )
}
ENV_KINDS = tuple(SIMS)


def sim_kind(name: str) -> SimKind:
    try:
        return SIMS[name]
    except KeyError:
        raise SimStartupError(f"unknown env {name!r}; use one of {', '.join(SIMS)}") from None


def make_expert(name: str, task: str = "", scene: str = "pick"):
    """The scripted expert `name` for `task` (Meta-World) or `scene` (SO-101); SimStartupError if unknown."""
    if name not in EXPERTS:
        raise SimStartupError(f"unknown expert {name!r}; use one of {', '.join(EXPERTS)}")
    return EXPERTS[name].make(task, scene)


def make_expert_sync(kind: str, task: str = "push-v3", scene: str = "pick") -> ExpertSync:
    """The expert `kind` (EXPERTS: metaworld on the 39-D environment state; so101_pick on joint positions and the
    cube position) with its step synchronisation. SimStartupError for an unknown kind or task."""
    expert = make_expert(kind, task, scene)
    spec = EXPERTS[kind]
    return ExpertSync(expert, spec.needs, lambda inputs: spec.act(expert, inputs))


def expand_tasks(env: str, text: str | None, task_ids: Sequence[int] | None = None) -> list[TaskRef]:
    """`--task` (lerobot-eval's `--env.task`) -> the tasks to evaluate, in order; SimStartupError if unknown."""
    kind = sim_kind(env)
    tasks = kind.expand(text or kind.default_task, task_ids)
    if not tasks:
        raise SimStartupError(f"--env.task {text!r} names no {env} task")
    return tasks


def build_sim(
    env: str,
    task: str = "",
    render: RenderSettings | None = None,
    fps: float = 0.0,
    cameras: list[str] | None = None,
    task_id: int = 0,
    **options,
) -> SimEnv:
    """`options`: settings only some simulators have (a kind's `options`, e.g. SO-101's camera_fps and meshes);
    each kind gets the ones it declares."""
    kind = sim_kind(env)
    return kind.build(task, render, fps, cameras, task_id, **{k: v for k, v in options.items() if k in kind.options})
