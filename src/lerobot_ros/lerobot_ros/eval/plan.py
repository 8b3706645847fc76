"""Planning an evaluation: the user's options (`EvalConfig`) checked and resolved into a frozen `EvalPlan`.

Everything that can be wrong with the options is found here, before any process starts, and said in
one line (`EvalSetupError`). Attached bridges refine the plan once they are found (`adopt`), which
returns a new plan rather than changing the config.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypedDict

from lerobot_ros.conventions.errors import UserError
from lerobot_ros.eval.config import EvalConfig
from lerobot_ros.sim.registry import SIMS, TaskRef, expand_tasks

MAX_AUTO_WORKERS = 64


class EvalSetupError(UserError, RuntimeError):
    """Bad options or missing pieces, found before anything starts; the message says what to do."""


@dataclass(frozen=True)
class EvalPlan:
    """What one evaluation will do, fully resolved. Nothing changes it once built."""

    env: str
    tasks: tuple[TaskRef, ...]
    task_descriptions: tuple[str, ...]  # one per task
    policy_path: str | None
    expert: bool
    n_episodes: int
    start_seed: int
    workers: int  # bridges per task (for attached bridges: their number)
    render: tuple[int, int]  # (height, width)
    shadows: bool
    antialias: bool
    max_episode_steps: int
    videos: int
    output_dir: Path
    contract: str
    device: str
    policy_seed: int
    cameras: tuple[str, ...]
    fps: float
    policy_shapes: dict  # policy image feature -> (height, width)
    attach: tuple[str, ...] = ()
    modes: tuple[str, ...] = ("lockstep",)
    start_timeout_s: float = 180.0
    find_timeout_s: float = 30.0
    stall_timeout_s: float = 120.0
    profile: bool = False
    record_dir: Path | None = None
    dataset_dir: Path | None = None

    @property
    def expert_name(self) -> str | None:
        return SIMS[self.env].expert

    @property
    def source_label(self) -> str:
        return self.policy_path or ("scripted_expert" if self.expert else "attached")


class _CommonFields(TypedDict):
    """The `EvalPlan` fields that come straight from the options, whether bridges are started or attached."""

    policy_path: str | None
    expert: bool
    n_episodes: int
    start_seed: int
    videos: int
    output_dir: Path
    device: str
    policy_seed: int
    policy_shapes: dict[str, tuple[int, int]]
    start_timeout_s: float
    find_timeout_s: float
    stall_timeout_s: float
    profile: bool
    record_dir: Path | None
    dataset_dir: Path | None


def auto_workers(requested: int, n_episodes: int, cpu_count: int | None = None) -> int:
    """Bridges to run: `requested`, or for 0 lerobot-eval's rule, capped by the episodes either way.

    LeRobot 0.6.1, `lerobot.configs.default.EvalConfig._auto_batch_size`: `min(max(1, floor(0.7 *
    os.cpu_count())), n_episodes, 64)` ("each async env worker needs ~1 core; leave headroom for main
    process + inference"), and `__post_init__` caps any batch_size above n_episodes to n_episodes.
    """
    if requested < 0:
        raise EvalSetupError(f"--eval.batch_size must be 0 (auto) or more, got {requested}")
    if requested == 0:
        cores = cpu_count or os.cpu_count() or 4
        requested = min(max(1, math.floor(cores * 0.7)), n_episodes, MAX_AUTO_WORKERS)
    return max(1, min(requested, n_episodes))


def policy_input_features(policy_path: str) -> dict[str, dict]:
    """A pretrained policy folder's `input_features` (name -> {"type", "shape"}), read from config.json."""
    path = Path(policy_path).expanduser() / "config.json"
    if not path.is_file():
        raise EvalSetupError(f"{path.parent} has no config.json; pass a LeRobot pretrained_model folder")
    try:
        features = json.loads(path.read_text()).get("input_features") or {}
        if not isinstance(features, dict):
            raise TypeError(f"input_features is a {type(features).__name__}, not a mapping")
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise EvalSetupError(f"cannot read the policy's {path}: {type(exc).__name__}: {exc}") from None
    return features


def policy_image_shapes(policy_path: str) -> dict[str, tuple[int, int]]:
    """Image input features of a pretrained policy folder -> (height, width), read from config.json."""
    path = Path(policy_path).expanduser() / "config.json"
    features = policy_input_features(policy_path)
    try:
        out = {}
        for name, feat in features.items():
            if feat.get("type") == "VISUAL":
                _, h, w = feat["shape"]
                out[name] = (int(h), int(w))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise EvalSetupError(f"cannot read the policy's {path}: {type(exc).__name__}: {exc}") from None
    return out


def image_kind(feature: dict) -> str | None:
    """ "Image" or "CompressedImage" for an image feature of a contract mapping (any spelling of its type), else None."""
    name = str(feature.get("type", "")).rsplit("/", 1)[-1]
    return name if name in ("Image", "CompressedImage") else None


def describe_task(
    env: str,
    task: TaskRef,
    render: tuple[int, int],
    shadows: bool,
    antialias: bool,
    cameras: list[str] | None = None,
    max_episode_steps: int = 0,
    preflight: bool = True,
):
    """The evaluator's own (never built) copy of a task's simulator: task text, cameras, fps."""
    from lerobot_ros.sim import RenderSettings, SimStartupError, make_sim

    try:
        sim = make_sim(
            env,
            task.task,
            RenderSettings.of_size(render, shadows, antialias),
            cameras=cameras,
            task_id=task.task_id,
            max_episode_steps=max_episode_steps,
        )
        if preflight:
            sim.preflight()
    except (SimStartupError, ValueError) as exc:
        raise EvalSetupError(str(exc)) from None
    return sim


def plan_eval(cfg: EvalConfig) -> EvalPlan:
    """Check the options and resolve every default; EvalSetupError (one line) when something is wrong."""
    from lerobot_ros.sim import SimStartupError

    if cfg.n_episodes < 1:
        raise EvalSetupError(f"--eval.n_episodes must be at least 1, got {cfg.n_episodes}")
    if cfg.policy_path and cfg.expert:
        raise EvalSetupError("give one policy source: --policy.path FOLDER or --expert, not both")
    shapes = policy_image_shapes(cfg.policy_path) if cfg.policy_path else {}
    sizes = set(shapes.values())
    if len(sizes) > 1 and cfg.render is None:
        raise EvalSetupError(
            f"the policy's cameras differ in size {sorted(sizes)}; pass --env.observation_height and --env.observation_width"
        )
    common = _CommonFields(
        policy_path=cfg.policy_path,
        expert=cfg.expert,
        n_episodes=cfg.n_episodes,
        start_seed=cfg.start_seed,
        videos=cfg.videos,
        output_dir=Path(cfg.output_dir),
        device=cfg.device,
        policy_seed=cfg.start_seed if cfg.policy_seed is None else cfg.policy_seed,
        policy_shapes=shapes,
        start_timeout_s=cfg.startup_timeout_s or 180.0,
        find_timeout_s=cfg.startup_timeout_s or 30.0,
        stall_timeout_s=cfg.stall_timeout_s,
        profile=cfg.profile,
        record_dir=Path(cfg.record_dir) if cfg.record_dir else None,
        dataset_dir=Path(cfg.dataset_dir) if cfg.dataset_dir else None,
    )
    if cfg.contract:  # a mistyped name or a broken file: one line now, not a traceback when it is first read
        from lerobot_ros.contract import ContractError, load_contract

        try:
            load_contract(cfg.contract)
        except ContractError as exc:
            raise EvalSetupError(f"--contract: {exc}") from None
    if cfg.record_dir or cfg.dataset_dir:
        from lerobot_ros.eval.rollouts import check_outputs

        if cfg.attach:
            raise EvalSetupError(
                "--record_dir / --dataset.root keep the episodes of bridges eval starts; drop --attach"
            )
        problem = check_outputs(common["record_dir"], common["dataset_dir"])
        if problem:
            raise EvalSetupError(problem)
    if cfg.attach:
        # env, task and render size come from the bridges once they are found (adopt); until then a
        # placeholder plan carries what was asked for
        attach = tuple(dict.fromkeys(_normalize(a) for a in cfg.attach))
        asked = (TaskRef(cfg.task, 0, cfg.task),) if cfg.task else ()
        return EvalPlan(
            env=cfg.env or "",
            tasks=asked,
            task_descriptions=(),
            workers=len(attach),
            render=cfg.render if cfg.render else (0, 0),
            shadows=cfg.shadows,
            antialias=cfg.antialias,
            max_episode_steps=cfg.max_episode_steps,
            contract=cfg.contract or "",
            cameras=(),
            fps=0.0,
            attach=attach,
            **common,
        )
    if not cfg.policy_path and not cfg.expert:
        raise EvalSetupError("give exactly one policy source: --policy.path FOLDER or --expert")
    env = cfg.env or "metaworld"
    if env not in SIMS:
        raise EvalSetupError(f"unknown env {env!r}; use one of {', '.join(SIMS)}")
    if cfg.expert and SIMS[env].expert is None:
        experts = sorted(k for k, v in SIMS.items() if v.expert)
        raise EvalSetupError(f"no scripted expert for env {env!r}; experts exist for {experts}")
    try:
        tasks = tuple(expand_tasks(env, cfg.task, cfg.task_ids))
    except SimStartupError as exc:
        raise EvalSetupError(str(exc)) from None
    workers = auto_workers(cfg.workers, cfg.n_episodes)
    render = cfg.render if cfg.render is not None else (sizes.pop() if sizes else (480, 480))
    sims = [
        describe_task(env, t, render, cfg.shadows, cfg.antialias, max_episode_steps=cfg.max_episode_steps)
        for t in tasks
    ]
    return EvalPlan(
        env=env,
        tasks=tasks,
        task_descriptions=tuple(s.task for s in sims),
        workers=workers,
        render=render,
        shadows=cfg.shadows,
        antialias=cfg.antialias,
        max_episode_steps=cfg.max_episode_steps,
        contract=cfg.contract or SIMS[env].contract,
        cameras=tuple(sims[0].cameras),
        fps=float(sims[0].fps),
        **common,
    )


def _normalize(ns: str) -> str:
    return "/" + ns.strip().strip("/")


def bridge_setup(params: dict) -> dict:
    """What an attached bridge runs, from its parameters."""
    env = str(params.get("env.type", "metaworld"))
    default = SIMS[env].default_task if env in SIMS else ""
    return {
        "env": env,
        "task": str(params.get("env.task") or default),
        "task_id": int(params.get("env.task_id", 0)),
        "render": (int(params.get("env.observation_height", 480)), int(params.get("env.observation_width", 480))),
    }


def adopt(plan: EvalPlan, bridges: list) -> EvalPlan:
    """The plan for attached bridges: env, task and render size are theirs (they must agree with each
    other and with what was asked for)."""
    first = bridge_setup(bridges[0].params)
    for b in bridges[1:]:
        if bridge_setup(b.params) != first:
            raise EvalSetupError(
                f"the attached bridges differ: {bridges[0].node} runs {first}, {b.node} runs {bridge_setup(b.params)}"
            )
    node = bridges[0].node
    asked = {"env": plan.env, "task": plan.tasks[0].task if plan.tasks else ""}
    for key, flag in (("env", "--env.type"), ("task", "--env.task")):
        if asked[key] and asked[key] != first[key]:
            raise EvalSetupError(
                f"{flag} {asked[key]} but {node} runs {key} {first[key]!r}: drop {flag} or attach to a bridge that runs {asked[key]}"
            )
    h, w = first["render"]
    if plan.render != (0, 0) and tuple(plan.render) != (h, w):
        raise EvalSetupError(
            f"--env.observation_height {plan.render[0]} --env.observation_width {plan.render[1]} but {node} renders "
            f"{h}x{w}: drop them or restart the bridge with env.observation_height:={plan.render[0]} "
            f"env.observation_width:={plan.render[1]}"
        )
    wrong = {k: v for k, v in plan.policy_shapes.items() if v != (h, w)}
    if wrong:
        name, (ph, pw) = next(iter(wrong.items()))
        raise EvalSetupError(
            f"the policy's {name} is {ph}x{pw} but {node} renders {h}x{w}: restart the bridge with "
            f"env.observation_height:={ph} env.observation_width:={pw}"
        )
    env = first["env"]
    if plan.expert and (env not in SIMS or SIMS[env].expert is None):
        experts = sorted(k for k, v in SIMS.items() if v.expert)
        raise EvalSetupError(f"no scripted expert for env {env!r}; experts exist for {experts}")
    p = bridges[0].params
    shadows, antialias = bool(p.get("shadows", plan.shadows)), bool(p.get("antialias", plan.antialias))
    max_steps = int(p.get("env.episode_length", 0))
    cams = p.get("cameras")
    cams = [str(c) for c in cams if str(c) and str(c).lower() != "none"] if isinstance(cams, list) else None
    task = TaskRef(first["task"], first["task_id"], first["task"])
    sim = describe_task(env, task, (h, w), shadows, antialias, cams, max_steps, preflight=False)
    return replace(
        plan,
        env=env,
        tasks=(task,),
        task_descriptions=(sim.task,),
        render=(h, w),
        shadows=shadows,
        antialias=antialias,
        max_episode_steps=max_steps,
        cameras=tuple(sim.cameras),
        fps=float(sim.fps),
        contract=plan.contract or (SIMS[env].contract if env in SIMS else ""),
        modes=tuple(sorted({str(b.params.get("mode", "lockstep")) for b in bridges})),
    )
