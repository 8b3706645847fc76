"""One sim bridge driven step by step over ROS, the way a gymnasium env is: `reset(seed)` and `step(action)` each
return the observation, reward, done and success of one step. The lerobot-eval env plugin runs one per vector-env
worker; nothing here starts before `start()` (LeRobot builds a throw-away env in the parent process to read the
spaces).

The bridge runs in its own process (`sim_bridge_node`, lockstep, its own namespace and `/clock`) and this process
talks to it from a private rclpy context. In lockstep the bridge publishes, per step, `episode_status` first and
then the observations, all stamped with the step's sim time: a step's observation is the set of messages whose
header stamp is the status's. Every subscription is reliable and deep, so no step's message is dropped.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lerobot_ros.codecs import time_to_ns
from lerobot_ros.contract import Contract, load_contract, message_class, parse_contract
from lerobot_ros.conventions.errors import UserError
from lerobot_ros.eval.node_process import NodeProcess, NodeSpec, namespaced_contract
from lerobot_ros.sim import RenderSettings

_sessions = itertools.count()


class BridgeSessionError(UserError, RuntimeError):
    """The bridge could not start, died, or did not answer in time; the message says which and where its log is."""


@dataclass
class StepOutcome:
    """One step (step 0: the reset) as the bridge reported it; `values` maps each observation feature of the
    simulator's contract to its LeRobot value (state vector, RGB image)."""

    episode_index: int
    step: int
    reward: float
    done: bool
    success: bool
    task: str
    values: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True)
class SessionConfig:
    env_type: str = "metaworld"
    task: str = "push-v3"
    task_id: int = 0
    render: RenderSettings = field(default_factory=RenderSettings)
    episode_length: int = 0  # 0: the env's own
    startup_timeout_s: float = 300.0
    step_timeout_s: float = 120.0
    log_dir: str = ""  # where the bridge's log goes ('' = a temp folder)


class BridgeSession:
    """A bridge process in namespace `/lerobot_eval/p<pid>_<n>` and the client side of its topics."""

    def __init__(self, cfg: SessionConfig):
        self.cfg = cfg
        self.ns = f"/lerobot_eval/p{os.getpid()}_{next(_sessions)}"
        self.contract: Contract | None = None
        self.process: NodeProcess | None = None
        # the ROS side, made by start(): rclpy objects (typed loosely: rclpy is imported only then)
        self._runtime: Any = None
        self._node: Any = None
        self._publisher: Any = None
        self._reset_client: Any = None
        self._lock = threading.Condition()
        self._statuses: list = []
        self._by_stamp: dict[str, dict[int, object]] = {}

    # -- start / stop -----------------------------------------------------------------------------
    def start(self) -> BridgeSession:
        from lerobot_ros.ros.qos import RECORDING_QOS, RELIABLE_QOS
        from lerobot_ros.ros.runtime import RosRuntime
        from lerobot_ros.sim.registry import sim_kind
        from lerobot_ros_msgs.msg import EpisodeStatus
        from lerobot_ros_msgs.srv import ResetEpisode

        cfg = self.cfg
        kind = sim_kind(cfg.env_type)
        raw = namespaced_contract(
            load_contract(kind.contract).raw, self.ns, (cfg.render.height, cfg.render.width), base_ns="/sim"
        )
        self.contract = parse_contract(raw)
        folder = Path(cfg.log_dir) if cfg.log_dir else Path(os.environ.get("TMPDIR", "/tmp")) / "lerobot_eval_bridges"
        folder.mkdir(parents=True, exist_ok=True)
        spec = NodeSpec(
            "lerobot_ros.nodes.sim_bridge_node",
            self.ns,
            "sim_bridge",
            params={
                "env.type": cfg.env_type,
                "env.task": cfg.task,
                "env.task_id": cfg.task_id,
                "mode": "lockstep",
                "env.observation_width": cfg.render.width,
                "env.observation_height": cfg.render.height,
                "shadows": cfg.render.shadows,
                "antialias": cfg.render.antialias,
                "env.episode_length": cfg.episode_length,
                "reset_on_start": False,
            },
            remaps={"/clock": f"{self.ns}/clock"},
        )
        env = dict(os.environ)
        env.setdefault("MUJOCO_GL", "egl")
        # a worker killed by lerobot-eval (or Ctrl-C) takes its bridge with it
        log = folder / f"{self.ns.strip('/').replace('/', '_')}.log"
        self.process = NodeProcess(spec, log, env, die_with_parent=True)
        runtime = RosRuntime()
        self._runtime = runtime
        node = self._node = runtime.create_node(f"eval_env_{self.ns.rsplit('/', 1)[-1]}")
        node.create_subscription(EpisodeStatus, f"{self.ns}/episode_status", self._on_status, RECORDING_QOS)
        for name, feature in self.contract.observation_features.items():
            self._by_stamp[name] = {}
            node.create_subscription(
                message_class(feature.msg_type),
                feature.topic,
                lambda msg, n=name: self._on_observation(n, msg),
                RECORDING_QOS,
            )
        action = self.contract.action_feature
        self._publisher = node.create_publisher(message_class(action.msg_type), action.topic, RELIABLE_QOS)
        self._reset_client = node.create_client(ResetEpisode, f"{self.ns}/reset_episode")
        runtime.start()
        self._wait(
            lambda: self._reset_client.service_is_ready() and self._publisher.get_subscription_count() > 0,
            cfg.startup_timeout_s,
            "the bridge to come up (its reset_episode service and commands subscription)",
        )
        return self

    def close(self) -> None:
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            runtime.close()
        if self.process is not None:
            self.process.stop()
            self.process.finish()
            self.process = None

    # -- what arrives -------------------------------------------------------------------------------
    def _on_status(self, msg) -> None:
        with self._lock:
            self._statuses.append(msg)
            del self._statuses[:-64]
            self._lock.notify_all()

    def _on_observation(self, name: str, msg) -> None:
        with self._lock:
            kept = self._by_stamp[name]
            kept[time_to_ns(msg.header.stamp)] = msg
            if len(kept) > 64:
                for stamp in sorted(kept)[:-64]:
                    del kept[stamp]
            self._lock.notify_all()

    def _wait(self, ready, timeout_s: float, what: str):
        """Wait for `ready()` (called under the lock) to be truthy; BridgeSessionError naming `what` otherwise."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while True:
                found = ready()
                if found:
                    return found
                if self.process is not None and self.process.poll() is not None:
                    raise BridgeSessionError(f"{self.process.failure()} while waiting for {what}")
                left = deadline - time.monotonic()
                if left <= 0:
                    log = self.process.log_path if self.process is not None else "?"
                    raise BridgeSessionError(
                        f"no {what} within {timeout_s:g} s from the bridge in {self.ns} (log: {log})"
                    )
                self._lock.wait(min(left, 0.5))

    def _outcome(self, episode_index: int, step: int, what: str) -> StepOutcome:
        assert self.contract is not None

        def complete():
            status = next(
                (s for s in reversed(self._statuses) if (s.episode_index, s.step) == (episode_index, step)), None
            )
            if status is None:
                return None
            stamp = time_to_ns(status.header.stamp)
            msgs = {name: kept.get(stamp) for name, kept in self._by_stamp.items()}
            if any(m is None for m in msgs.values()):
                return None
            return status, msgs

        status, msgs = self._wait(complete, self.cfg.step_timeout_s, what)
        values = {name: self.contract.features[name].decode(msg) for name, msg in msgs.items()}
        return StepOutcome(
            int(status.episode_index),
            int(status.step),
            float(status.reward),
            bool(status.done),
            bool(status.success),
            str(status.task),
            values,
        )

    # -- the gym side ---------------------------------------------------------------------------------
    def reset(self, seed: int | None) -> StepOutcome:
        """A new episode (seed None: unseeded); its first observation."""
        from lerobot_ros_msgs.srv import ResetEpisode

        future = self._reset_client.call_async(ResetEpisode.Request(seed=-1 if seed is None else int(seed)))
        self._wait(future.done, self.cfg.startup_timeout_s, "a reply to reset_episode")
        reply = future.result()
        if not reply.success:
            raise BridgeSessionError(f"the bridge in {self.ns} refused the reset: {reply.message}")
        return self._outcome(int(reply.episode_index), 0, f"the first observation of episode {reply.episode_index}")

    def step(self, episode_index: int, step: int, action: np.ndarray) -> StepOutcome:
        """Send `action` (the action feature's LeRobot units) for step `step` of `episode_index`; the step it
        caused."""
        assert self.contract is not None and self._publisher is not None
        values = np.asarray(action, dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(values)):
            raise BridgeSessionError(f"the action has non-finite values {values.tolist()}; nothing was sent")
        self._publisher.publish(self.contract.action_feature.encode(values))
        return self._outcome(episode_index, step + 1, f"step {step + 1} of episode {episode_index}")
