"""`lerobot-ros eval`: N seeded episodes through sim bridges in lockstep, scored like lerobot-eval.

Starts (or attaches to) one sim bridge and one policy source (policy node or scripted expert) per
namespace `/sim_0 ...`, hands out seeds start_seed + i to whichever bridge is free, records videos of
the first episodes from the bridge's camera topic and writes `eval_info.json` atomically.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from lerobot_ros.eval.processes import NodeProcess, NodeSpec, namespaced_contract
from lerobot_ros.eval.results import EpisodeResult, build_eval_info, write_json_atomic

EXPERTS = {"metaworld": "metaworld", "so101": "so101_pick"}


@dataclass
class EvalConfig:
    env: str = "metaworld"
    task: str = "push-v3"
    task_id: int = 0
    policy_path: str | None = None  # a LeRobot pretrained folder (policy node), or None with expert=True
    expert: bool = False
    n_episodes: int = 10
    start_seed: int = 1000
    workers: int = 1
    render: tuple[int, int] | None = None  # (height, width); default: the policy's image shape, else 480x480
    shadows: bool = False
    antialias: bool = True
    max_episode_steps: int = 0  # 0: the env's own
    videos: int = 2  # episodes to render (lerobot-eval renders up to 10)
    output_dir: Path = Path("outputs/eval")
    contract: str | None = None  # default: the shipped contract of the env
    device: str = "cpu"
    policy_seed: int | None = None  # torch seed of the policy node (default: start_seed, as lerobot-eval)
    attach: list[str] = field(default_factory=list)  # namespaces of running bridges (+ sources): start nothing
    startup_timeout_s: float = 180.0
    stall_timeout_s: float = 120.0
    quiet: bool = False


class EvalSetupError(RuntimeError):
    """Bad options or missing pieces, found before anything starts; the message says what to do."""


def policy_image_shapes(policy_path: str) -> dict[str, tuple[int, int]]:
    """Image input features of a pretrained policy folder -> (height, width), read from config.json."""
    path = Path(policy_path).expanduser() / "config.json"
    if not path.is_file():
        raise EvalSetupError(f"{path.parent} has no config.json; pass a LeRobot pretrained_model folder")
    cfg = json.loads(path.read_text())
    out = {}
    for name, feat in (cfg.get("input_features") or {}).items():
        if feat.get("type") == "VISUAL":
            _, h, w = feat["shape"]
            out[name] = (int(h), int(w))
    return out


class Evaluation:
    """One evaluation run: processes, workers, results. Use `run()`."""

    def __init__(self, cfg: EvalConfig, printer=print):
        self.cfg = cfg
        self.print = (lambda *a, **k: None) if cfg.quiet else printer
        self.procs: list[NodeProcess] = []
        self.out = Path(cfg.output_dir)
        self._validate()

    # -- set-up ------------------------------------------------------------------------------------
    def _validate(self) -> None:
        cfg = self.cfg
        if cfg.n_episodes < 1:
            raise EvalSetupError(f"--n-episodes must be at least 1, got {cfg.n_episodes}")
        if not cfg.attach:
            if bool(cfg.policy_path) == bool(cfg.expert):
                raise EvalSetupError("give exactly one policy source: --policy.path FOLDER or --expert")
            if cfg.expert and cfg.env not in EXPERTS:
                raise EvalSetupError(f"no scripted expert for env {cfg.env!r}; experts exist for {sorted(EXPERTS)}")
            if cfg.workers < 1:
                raise EvalSetupError(f"--workers must be at least 1, got {cfg.workers}")
        from lerobot_ros.sim import SimStartupError, make_sim

        shapes = policy_image_shapes(cfg.policy_path) if cfg.policy_path else {}
        if cfg.render is None:
            sizes = set(shapes.values())
            if len(sizes) > 1:
                raise EvalSetupError(f"the policy's cameras differ in size {sorted(sizes)}; pass --render HxW")
            cfg.render = sizes.pop() if sizes else (480, 480)
        from lerobot_ros.sim import RenderSettings

        try:
            self.sim = make_sim(
                cfg.env, cfg.task, RenderSettings(cfg.render[1], cfg.render[0], cfg.shadows, cfg.antialias),
                task_id=cfg.task_id, max_episode_steps=cfg.max_episode_steps,
            )
            self.sim.preflight()
        except (SimStartupError, ValueError) as exc:
            raise EvalSetupError(str(exc)) from None
        self.cameras = list(self.sim.cameras)

    def _contract_for(self, ns: str) -> Path:
        from lerobot_ros.contract.loader import resolve

        name = self.cfg.contract or {"metaworld": "metaworld", "so101": "so101_sim", "libero": "libero"}[self.cfg.env]
        try:
            source = yaml.safe_load(resolve(name).read_text())
        except Exception as exc:  # noqa: BLE001
            raise EvalSetupError(f"cannot read contract {name!r}: {exc}") from None
        data = namespaced_contract(source, ns, self.cfg.render)
        images = [f for n, f in data["features"].items() if str(f.get("type", "")).endswith("/Image")]
        if len(images) == 1 and len(self.cameras) == 1:
            images[0]["topic"] = f"/{ns.strip('/')}/{self.cameras[0]}/image_raw"
        path = self.out / "contracts" / f"{ns.strip('/')}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    def _tick_stream(self, contract_path: Path) -> str:
        data = yaml.safe_load(contract_path.read_text())
        shapes = policy_image_shapes(self.cfg.policy_path)
        # tick when the last stream of a step arrives: the bridge publishes state first, images last
        for name in data["features"]:
            if name in shapes:
                return name
        return "observation.state"

    def _start(self, ns: str) -> None:
        cfg = self.cfg
        clock = f"{ns}/clock"
        env = dict(os.environ)
        env.setdefault("MUJOCO_GL", "egl")
        bridge = NodeSpec(
            "lerobot_ros.nodes.sim_bridge_node", ns, "sim_bridge",
            params={
                "env": cfg.env, "task": cfg.task, "task_id": cfg.task_id, "mode": "lockstep",
                "render_width": cfg.render[1], "render_height": cfg.render[0], "shadows": cfg.shadows,
                "antialias": cfg.antialias, "max_episode_steps": cfg.max_episode_steps, "reset_on_start": False,
            },
            remaps={"/clock": clock},
        )
        logs = self.out / "logs"
        self.procs.append(NodeProcess(bridge, logs / f"{ns.strip('/')}_bridge.log", env))
        if cfg.policy_path:
            contract = self._contract_for(ns)
            seed = cfg.start_seed if cfg.policy_seed is None else cfg.policy_seed
            source = NodeSpec(
                "lerobot_ros.nodes.policy_node", ns, "policy_node",
                params={
                    "pretrained_path": str(Path(cfg.policy_path).expanduser().resolve()), "contract": str(contract),
                    "device": cfg.device, "tick_on": self._tick_stream(contract), "use_sim_time": True, "seed": seed,
                },
                remaps={"/clock": clock},
            )
            log = logs / f"{ns.strip('/')}_policy.log"
        else:
            source = NodeSpec(
                "lerobot_ros.nodes.scripted_expert_node", ns, "scripted_expert",
                params={"expert": EXPERTS[cfg.env], "task": cfg.task}, remaps={"/clock": clock},
            )
            log = logs / f"{ns.strip('/')}_expert.log"
        self.procs.append(NodeProcess(source, log, env))

    def _worker(self, node, ns: str, cls):
        cfg = self.cfg
        camera = self.cameras[0] if self.cameras else None
        if cfg.attach:
            names = {f"{n_.rstrip('/')}/{x}" for x, n_ in node.get_node_names_and_namespaces()}
            policy_reset = f"{ns}/policy_node/reset" if f"{ns}/policy_node" in names else None
            return cls(node, ns, camera, policy_reset, self._failure, stall_timeout_s=cfg.stall_timeout_s, answers_final=None)
        if cfg.policy_path:
            inputs = ["joint_states"] + [f"{c}/image_raw" for c in self.cameras]
            return cls(node, ns, camera, f"{ns}/policy_node/reset", self._failure, stall_timeout_s=cfg.stall_timeout_s,
                       answers_final=True, source_inputs=tuple(inputs))
        # the scripted expert is stateless: an episode that never started (a lost first observation) is
        # safely reset again with the same seed
        return cls(node, ns, camera, None, self._failure, stall_timeout_s=cfg.stall_timeout_s, kick_after_s=15.0,
                   answers_final=False, source_inputs=("environment_state", "episode_status"))

    def _failure(self) -> str | None:
        for p in self.procs:
            reason = p.failure()
            if reason:
                return reason
        return None

    # -- the run -----------------------------------------------------------------------------------
    def run(self) -> dict:
        from lerobot_ros.eval.videos import VideoWriter
        from lerobot_ros.eval.worker import BridgeWorker, EvalError
        from lerobot_ros.ros.runtime import RosRuntime

        cfg = self.cfg
        self.out.mkdir(parents=True, exist_ok=True)
        t_setup = time.monotonic()
        try:
            with RosRuntime() as ros:
                node = ros.create_node("lerobot_ros_eval")
                if cfg.attach:
                    namespaces = ["/" + a.strip("/") for a in cfg.attach]
                    time.sleep(1.5)  # discovery, before looking for policy nodes in those namespaces
                else:
                    namespaces = free_namespaces(node, cfg.workers)
                    for ns in namespaces:
                        self._start(ns)
                workers = []
                for ns in namespaces:
                    workers.append(self._worker(node, ns, BridgeWorker))
                self.print(f"waiting for {len(namespaces)} bridge(s) and policy source(s) ({', '.join(namespaces)}) ...")
                for w in workers:
                    w.wait_ready(cfg.startup_timeout_s)
                time.sleep(1.0)  # let the last discovery round settle on the bridges' side too
                setup_s = time.monotonic() - t_setup
                self.print(f"ready in {setup_s:.1f} s; {cfg.n_episodes} episode(s) of {self.sim.task!r}, seeds {cfg.start_seed}..")
                results, writer, eval_s = self._episodes(workers, VideoWriter(self.sim.fps))
                writer.join()
        except EvalError as exc:
            raise EvalSetupError(str(exc)) from None
        finally:
            for p in self.procs:
                p.stop()
        group = cfg.task
        extra = {
            "env": cfg.env, "task": cfg.task, "task_description": self.sim.task, "mode": "lockstep",
            "render": list(cfg.render), "shadows": cfg.shadows, "workers": len(namespaces),
            "policy_source": cfg.policy_path or ("scripted_expert" if cfg.expert else "attached"),
            "setup_s": round(setup_s, 3), "restarts": sum(w.kicks for w in workers),
            **({"video_errors": writer.errors} if writer.errors else {}),
        }
        info = build_eval_info(results, group, cfg.task_id, eval_s, extra)
        write_json_atomic(self.out / "eval_info.json", info)
        o = info["overall"]
        self.print(
            f"{o['n_episodes']} episodes: success {o['pc_success']:.1f}%, avg_sum_reward {o['avg_sum_reward']:.3f}, "
            f"avg_max_reward {o['avg_max_reward']:.3f}, {o['eval_s']:.1f} s ({60 * o['n_episodes'] / max(o['eval_s'], 1e-9):.1f} episodes/min)"
        )
        self.print(f"wrote {self.out / 'eval_info.json'}")
        return info

    def _episodes(self, workers, writer) -> tuple[list[EpisodeResult], object, float]:
        cfg = self.cfg
        jobs: queue.Queue = queue.Queue()
        for i in range(cfg.n_episodes):
            jobs.put(i)
        results: list[EpisodeResult] = []
        errors: list[BaseException] = []
        lock = threading.Lock()
        videos_dir = self.out / "videos" / f"{cfg.task}_{cfg.task_id}"
        start = time.monotonic()

        def work(w):
            while not errors:
                try:
                    i = jobs.get_nowait()
                except queue.Empty:
                    return
                record = i < cfg.videos
                w.enable_video(record)
                try:
                    result, frames = w.run_episode(i, cfg.start_seed + i, record)
                except BaseException as exc:  # noqa: BLE001 - surfaced after the other workers stop
                    errors.append(exc)
                    return
                if record:
                    result.video_path = writer.write(videos_dir / f"eval_episode_{i}.mp4", frames)
                with lock:
                    results.append(result)
                    done = len(results)
                    rate = 60 * done / max(time.monotonic() - start, 1e-9)
                    self.print(
                        f"[{done}/{cfg.n_episodes}] episode {i} seed {result.seed} ({w.ns}): "
                        f"{'success' if result.success else 'failure'} in {result.n_steps} steps, "
                        f"sum_reward {result.sum_reward:.3f}, {result.wall_s:.1f} s  ({rate:.1f} episodes/min)"
                    )

        threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        eval_s = time.monotonic() - start
        if errors:
            raise errors[0]
        for w in workers:
            w.enable_video(False)
        return results, writer, eval_s


def free_namespaces(node, count: int, prefix: str = "/sim_", settle_s: float = 1.5) -> list[str]:
    """The first `count` namespaces /sim_<i> with no node in them (after a short discovery wait), so an
    evaluation never talks to someone else's bridge in the same ROS domain."""
    time.sleep(settle_s)
    taken = {n_.rstrip("/") for _, n_ in node.get_node_names_and_namespaces()}
    out, i = [], 0
    while len(out) < count:
        ns = f"{prefix}{i}"
        if ns not in taken:
            out.append(ns)
        i += 1
    return out


def run_eval(cfg: EvalConfig, printer=print) -> dict:
    return Evaluation(cfg, printer).run()
