"""`lerobot-ros eval`: N seeded episodes through sim bridges in lockstep, scored like lerobot-eval.

Starts (or attaches to) one sim bridge and one policy source (policy node or scripted expert) per
namespace `/sim_0 ...`, hands out seeds start_seed + i to whichever bridge is free, records videos of
the first episodes from the bridge's camera topic and writes `eval_info.json` atomically.

Attached (`attach=[NS ...]`): the bridges already run (a launch file, or sim_bridge_node by hand). Eval
finds each by its `NS/reset_episode` service, takes env, task and render size from the bridge's
parameters, and either starts the policy source there (expert / policy_path given) or uses the one that
already publishes `NS/commands` (resetting it before each episode when it is a policy node; with expert,
a scripted source already running there is used rather than doubled).
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

from lerobot_ros.eval.attach import (
    AttachedBridge, AttachError, find_bridge, no_source_message, normalize_ns, ns_join, settled_sources,
)
from lerobot_ros.eval.processes import NodeProcess, NodeSpec, namespaced_contract
from lerobot_ros.eval.results import EpisodeResult, build_eval_info, write_json_atomic

EXPERTS = {"metaworld": "metaworld", "so101": "so101_pick"}
DEFAULT_TASKS = {"metaworld": "push-v3", "so101": "pick", "libero": "libero_spatial"}


@dataclass
class EvalConfig:
    env: str | None = None  # None: metaworld, or the attached bridge's
    task: str | None = None  # None: the env's default task (push-v3, pick, libero_spatial), or the attached bridge's
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
    attach: list[str] = field(default_factory=list)  # namespaces of running bridges; sources started only if asked
    startup_timeout_s: float | None = None  # None: 180 s for started nodes to come up, 30 s to find attached ones
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
        if cfg.policy_path and cfg.expert:
            raise EvalSetupError("give one policy source: --policy.path FOLDER or --expert, not both")
        #: how long started nodes may take to come up, and how long attached ones may take to be found
        self.start_timeout_s = cfg.startup_timeout_s or 180.0
        self.find_timeout_s = cfg.startup_timeout_s or 30.0
        self.shapes = policy_image_shapes(cfg.policy_path) if cfg.policy_path else {}
        sizes = set(self.shapes.values())
        if len(sizes) > 1 and cfg.render is None:
            raise EvalSetupError(f"the policy's cameras differ in size {sorted(sizes)}; pass --render HxW")
        self.sim, self.cameras = None, []
        if cfg.attach:
            return  # env, task and render size come from the bridges once they are found (_adopt)
        if not cfg.policy_path and not cfg.expert:
            raise EvalSetupError("give exactly one policy source: --policy.path FOLDER or --expert")
        if cfg.workers < 1:
            raise EvalSetupError(f"--workers must be at least 1, got {cfg.workers}")
        cfg.env = cfg.env or "metaworld"
        cfg.task = cfg.task or DEFAULT_TASKS.get(cfg.env, "")
        if cfg.expert and cfg.env not in EXPERTS:
            raise EvalSetupError(f"no scripted expert for env {cfg.env!r}; experts exist for {sorted(EXPERTS)}")
        if cfg.render is None:
            cfg.render = sizes.pop() if sizes else (480, 480)
        self._make_sim(preflight=True)

    def _make_sim(self, preflight: bool, cameras: list[str] | None = None) -> None:
        """The evaluator's own (never built) copy of the env: task text, cameras, fps."""
        from lerobot_ros.sim import RenderSettings, SimStartupError, make_sim

        cfg = self.cfg
        try:
            self.sim = make_sim(
                cfg.env, cfg.task, RenderSettings.of_size(cfg.render, cfg.shadows, cfg.antialias),
                cameras=cameras, task_id=cfg.task_id, max_episode_steps=cfg.max_episode_steps,
            )
            if preflight:
                self.sim.preflight()
        except (SimStartupError, ValueError) as exc:
            raise EvalSetupError(str(exc)) from None
        self.cameras = list(self.sim.cameras)

    def _adopt(self, bridges: list[AttachedBridge]) -> None:
        """Take env, task and render size from the attached bridges (they must agree with each other and
        with what was asked for)."""
        cfg = self.cfg

        def setup(b: AttachedBridge) -> dict:
            p = b.params
            env = str(p.get("env", "metaworld"))
            return {
                "env": env, "task": str(p.get("task") or DEFAULT_TASKS.get(env, "")), "task_id": int(p.get("task_id", 0)),
                "render": (int(p.get("render_height", 480)), int(p.get("render_width", 480))),
            }

        first = setup(bridges[0])
        for b in bridges[1:]:
            if setup(b) != first:
                raise EvalSetupError(f"the attached bridges differ: {bridges[0].node} runs {first}, {b.node} runs {setup(b)}")
        node = bridges[0].node
        for key, flag in (("env", "--env"), ("task", "--task")):
            asked = getattr(cfg, key)
            if asked and asked != first[key]:
                raise EvalSetupError(
                    f"{flag} {asked} but {node} runs {key} {first[key]!r}: drop {flag} or attach to a bridge that runs {asked}"
                )
        h, w = first["render"]
        if cfg.render is not None and tuple(cfg.render) != (h, w):
            raise EvalSetupError(
                f"--render {cfg.render[0]}x{cfg.render[1]} but {node} renders {h}x{w}: drop --render or restart the bridge "
                f"with render_height:={cfg.render[0]} render_width:={cfg.render[1]}"
            )
        wrong = {k: v for k, v in self.shapes.items() if v != (h, w)}
        if wrong:
            name, (ph, pw) = next(iter(wrong.items()))
            raise EvalSetupError(
                f"the policy's {name} is {ph}x{pw} but {node} renders {h}x{w}: restart the bridge with "
                f"render_height:={ph} render_width:={pw}"
            )
        if cfg.expert and first["env"] not in EXPERTS:
            raise EvalSetupError(f"no scripted expert for env {first['env']!r}; experts exist for {sorted(EXPERTS)}")
        p = bridges[0].params
        cfg.env, cfg.task, cfg.task_id, cfg.render = first["env"], first["task"], first["task_id"], (h, w)
        cfg.shadows, cfg.antialias = bool(p.get("shadows", cfg.shadows)), bool(p.get("antialias", cfg.antialias))
        cfg.max_episode_steps = int(p.get("max_episode_steps", 0))
        cams = p.get("cameras")
        cams = [str(c) for c in cams if str(c) and str(c).lower() != "none"] if isinstance(cams, list) else None
        self._make_sim(preflight=False, cameras=cams)
        self.modes = sorted({str(b.params.get("mode", "lockstep")) for b in bridges})

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
            images[0]["topic"] = ns_join(ns, f"{self.cameras[0]}/image_raw")
        path = self.out / "contracts" / f"{ns.strip('/') or 'root'}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    def _tick_stream(self, contract_path: Path) -> str:
        data = yaml.safe_load(contract_path.read_text())
        shapes = policy_image_shapes(self.cfg.policy_path)
        # tick when the last stream of a step arrives: the bridge publishes state first, then the images in
        # the contract's order (LIBERO: image, image2), so the last image feature
        images = [name for name in data["features"] if name in shapes]
        return images[-1] if images else "observation.state"

    @staticmethod
    def _child_env() -> dict:
        env = dict(os.environ)
        env.setdefault("MUJOCO_GL", "egl")
        return env

    def _start(self, ns: str) -> None:
        """A bridge and a policy source in `ns`, on the bridge's own clock topic `ns/clock`."""
        cfg = self.cfg
        clock = ns_join(ns, "clock")
        bridge = NodeSpec(
            "lerobot_ros.nodes.sim_bridge_node", ns, "sim_bridge",
            params={
                "env": cfg.env, "task": cfg.task, "task_id": cfg.task_id, "mode": "lockstep",
                "render_width": cfg.render[1], "render_height": cfg.render[0], "shadows": cfg.shadows,
                "antialias": cfg.antialias, "max_episode_steps": cfg.max_episode_steps, "reset_on_start": False,
            },
            remaps={"/clock": clock},
        )
        self.procs.append(NodeProcess(bridge, self.out / "logs" / f"{ns.strip('/')}_bridge.log", self._child_env()))
        self._start_source(ns, clock)

    def _start_source(self, ns: str, clock: str | None) -> None:
        """The policy node or the scripted expert in `ns`, following the bridge's clock topic."""
        cfg = self.cfg
        logs = self.out / "logs"
        label = ns.strip("/") or "root"
        remaps = {"/clock": clock} if clock and clock != "/clock" else {}
        if cfg.policy_path:
            contract = self._contract_for(ns)
            seed = cfg.start_seed if cfg.policy_seed is None else cfg.policy_seed
            source = NodeSpec(
                "lerobot_ros.nodes.policy_node", ns, "policy_node",
                params={
                    "pretrained_path": str(Path(cfg.policy_path).expanduser().resolve()), "contract": str(contract),
                    "device": cfg.device, "tick_on": self._tick_stream(contract), "use_sim_time": True, "seed": seed,
                },
                remaps=remaps,
            )
            log = logs / f"{label}_policy.log"
        else:
            source = NodeSpec(
                "lerobot_ros.nodes.scripted_expert_node", ns, "scripted_expert",
                params={"expert": EXPERTS[cfg.env], "task": cfg.task}, remaps=remaps,
            )
            log = logs / f"{label}_expert.log"
        self.procs.append(NodeProcess(source, log, self._child_env()))

    def _worker(self, node, ns: str, cls):
        """The evaluator's handle of `ns`, where this evaluation started the policy source."""
        cfg = self.cfg
        camera = self.cameras[0] if self.cameras else None
        if cfg.policy_path:
            inputs = ["joint_states"] + [f"{c}/image_raw" for c in self.cameras]
            return cls(node, ns, camera, ns_join(ns, "policy_node/reset"), self._failure, stall_timeout_s=cfg.stall_timeout_s,
                       answers_final=True, source_inputs=tuple(inputs))
        # the scripted expert is stateless: an episode that never started (a lost first observation) is
        # safely reset again with the same seed
        return cls(node, ns, camera, None, self._failure, stall_timeout_s=cfg.stall_timeout_s, kick_after_s=15.0,
                   answers_final=False, source_inputs=("environment_state", "episode_status"))

    def _attach(self, node, cls) -> list:
        """Find the running bridges, start or find their policy sources, wait until the bridges are idle."""
        cfg = self.cfg
        namespaces = list(dict.fromkeys(normalize_ns(a) for a in cfg.attach))
        find_s = self.find_timeout_s
        self.print(f"looking for sim bridge(s) in {', '.join(namespaces)} (up to {find_s:.0f} s) ...")
        try:
            bridges = [find_bridge(node, ns, find_s) for ns in namespaces]
        except AttachError as exc:
            raise EvalSetupError(str(exc)) from None
        self._adopt(bridges)
        for b in bridges:
            self.print(
                f"attached to {b.node}: {cfg.env} {cfg.task!r}, {b.params.get('mode', 'lockstep')}, "
                f"{cfg.render[0]}x{cfg.render[1]}, policy source(s): {', '.join(b.sources) or 'none yet'}"
            )
        if self.modes != ["lockstep"]:
            self.print("note: a realtime bridge steps on the wall clock; scores will not match lerobot-eval's step for step")
        workers, started = [], []
        for b in bridges:
            b.sources, b.policy_resets = settled_sources(node, b.ns)  # once discovery has settled
            if not (cfg.expert or cfg.policy_path):
                workers.append(self._running_source(node, b, cls, find_s))
            elif b.sources and cfg.expert and not b.policy_resets:
                # --expert and a scripted source already acts there (e.g. the launch's expert:=true): use it
                self.print(f"{b.ns}: using the source already running there ({', '.join(b.sources)})")
                workers.append(self._running_source(node, b, cls, find_s))
            elif b.sources:
                raise EvalSetupError(
                    f"{b.ns} already has a policy source ({', '.join(b.sources)} publishes {ns_join(b.ns, 'commands')}): "
                    "drop --policy.path to evaluate that one, or stop it first"
                )
            else:
                self._start_source(b.ns, b.clock_topic)
                w = self._worker(node, b.ns, cls)
                workers.append(w)
                started.append(w)
        for w in started:
            w.wait_ready(self.start_timeout_s)
        for w in workers:
            w.wait_idle(max(find_s, 60.0))
        return workers

    def _running_source(self, node, b: AttachedBridge, cls, timeout_s: float):
        """The evaluator's handle of an attached bridge whose policy source already runs."""
        cfg = self.cfg
        w = cls(node, b.ns, self.cameras[0] if self.cameras else None, None, self._failure,
                stall_timeout_s=cfg.stall_timeout_s, answers_final=None)
        w.wait_ready(timeout_s, hint=no_source_message(b, timeout_s))
        sources, resets = settled_sources(node, b.ns)  # a policy node's ~/reset may show up after its publisher
        if len(sources) > 1:
            raise EvalSetupError(
                f"{ns_join(b.ns, 'commands')} has {len(sources)} publishers ({', '.join(sources)}); "
                "an evaluation needs exactly one policy source: stop the others"
            )
        if resets:  # a policy node: reset it before each episode, wait for its answer to the last step
            w.use_policy_node(next(iter(resets.values())))
            w.answers_final = True
            w.wait_ready(timeout_s)
        return w

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
        from lerobot_ros.ros.sim_rate import SimRateListener

        cfg = self.cfg
        self.out.mkdir(parents=True, exist_ok=True)
        t_setup = time.monotonic()
        try:
            with RosRuntime() as ros:
                node = ros.create_node("lerobot_ros_eval")
                rates = SimRateListener(node)  # the bridges' real-time factor, from /diagnostics
                if cfg.attach:
                    workers = self._attach(node, BridgeWorker)
                    namespaces = [w.ns for w in workers]
                else:
                    namespaces = free_namespaces(node, cfg.workers)
                    for ns in namespaces:
                        self._start(ns)
                    workers = [self._worker(node, ns, BridgeWorker) for ns in namespaces]
                    self.print(f"waiting for {len(namespaces)} bridge(s) and policy source(s) ({', '.join(namespaces)}) ...")
                    for w in workers:
                        w.wait_ready(self.start_timeout_s)
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
            **({"attached": list(namespaces)} if cfg.attach else {}),
            "setup_s": round(setup_s, 3), "restarts": sum(w.kicks for w in workers),
            **({"video_errors": writer.errors} if writer.errors else {}),
        }
        if cfg.attach and getattr(self, "modes", ["lockstep"]) != ["lockstep"]:
            extra["mode"] = "/".join(self.modes)
        info = build_eval_info(results, group, cfg.task_id, eval_s, extra)
        write_json_atomic(self.out / "eval_info.json", info)
        o = info["overall"]
        self.print(
            f"{o['n_episodes']} episodes: success {o['pc_success']:.1f}%, avg_sum_reward {o['avg_sum_reward']:.3f}, "
            f"avg_max_reward {o['avg_max_reward']:.3f}, {o['eval_s']:.1f} s ({60 * o['n_episodes'] / max(o['eval_s'], 1e-9):.1f} episodes/min)"
        )
        for ns in namespaces:
            if rates.summary(ns):
                self.print(f"{ns}: {rates.summary(ns)}")
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
