"""One bridge namespace seen from the evaluator: reset with a seed, follow `episode_status` to the end.

The bridge steps once per action (lockstep), so an episode runs on its own once reset; the evaluator
only watches. Per-step rewards come from each `EpisodeStatus` (one per step, reliable, deep queue).
At the end it waits until the policy source has answered the final observation (its action is then
rejected by the bridge as "episode done") so that no stale action can reach the next episode.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import cast

import numpy as np
from sensor_msgs.msg import Image
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from lerobot_ros.codecs import image_to_rgb, time_to_ns
from lerobot_ros.conventions.errors import UserError
from lerobot_ros.eval.attach import normalize_ns, ns_join
from lerobot_ros.eval.results import EpisodeResult

# RECORDING_QOS: reliable and deep, a lockstep episode must not lose an action or frame; STATUS_FOLLOWER_QOS:
# as deep, and latched, so an evaluator that attaches late still learns whether an episode is running
from lerobot_ros.ros.qos import RECORDING_QOS, STATUS_FOLLOWER_QOS
from lerobot_ros_msgs.msg import EpisodeStatus
from lerobot_ros_msgs.srv import ResetEpisode


class EvalError(UserError, RuntimeError):
    """An evaluation could not go on; the message says why and what to look at."""


class BridgeWorker:
    """Evaluator-side handle of one bridge (and its policy source) in namespace `ns`."""

    def __init__(
        self,
        node,
        ns: str,
        camera: str | None = None,
        policy_reset: str | None = None,
        check_alive: Callable[[], str | None] = lambda: None,
        stall_timeout_s: float = 120.0,
        kick_after_s: float = float("inf"),
        answers_final: bool | None = None,
        source_inputs: tuple[str, ...] = (),
        source_node: str | None = None,
    ):
        self.node = node
        self.ns = normalize_ns(ns)
        self.camera = camera
        self.check_alive = check_alive
        self.stall_timeout_s = stall_timeout_s
        self.kick_after_s = kick_after_s
        #: does the source answer the final observation of an episode? The policy node does (it does not
        #: read episode_status), the scripted expert does not; None: unknown (attached), wait briefly.
        self.answers_final = answers_final
        self.source_inputs = tuple(t if t.startswith("/") else ns_join(self.ns, t) for t in source_inputs)
        #: the node this evaluation started as the policy source (fully qualified): ready only once it publishes,
        #: not when another source in the namespace (an attached bridge's own expert) already does
        self.source_node = source_node
        self._cond = threading.Condition()
        self._finished = -1  # statuses of episodes up to this index are stale
        self._statuses: dict[int, dict[int, EpisodeStatus]] = {}
        self._actions = 0
        self._frames: list[tuple[int, np.ndarray]] | None = None
        self.kicks = 0
        self._latest: EpisodeStatus | None = None  # newest status seen, of any episode (latched ones too)
        self._latest_at = 0.0
        #: --profile: arrival times of this episode's statuses (by step) and actions, summed per step
        self.step_profile: dict | None = None
        self._status_at: dict[int, float] = {}
        self._action_at: list[float] = []
        self._tick_ms: list[float] = []
        self._subs = [
            node.create_subscription(
                EpisodeStatus, ns_join(self.ns, "episode_status"), self._on_status, STATUS_FOLLOWER_QOS
            ),
            node.create_subscription(Float64MultiArray, ns_join(self.ns, "commands"), self._on_action, RECORDING_QOS),
        ]
        self._image_sub = None
        self.reset_client = node.create_client(ResetEpisode, ns_join(self.ns, "reset_episode"))
        self.policy_client = None
        self.tape = None  # --record_dir / --dataset.root: eval.rollouts.Tape of this namespace, cleared at each reset
        self._last_tick: tuple[int, bool] | None = None  # (t_ns, published) of the policy node's last tick
        if policy_reset:
            self.use_policy_node(policy_reset)

    def use_policy_node(self, reset_service: str) -> None:
        """Reset this policy node (its `~/reset` Trigger) before each episode and follow its `~/tick_info`."""
        self.policy_client = self.node.create_client(Trigger, reset_service)
        tick_topic = reset_service.rsplit("/", 1)[0] + "/tick_info"
        self._subs.append(self.node.create_subscription(String, tick_topic, self._on_tick, RECORDING_QOS))

    def close(self) -> None:
        """Drop this handle's subscriptions and clients (the next task's bridge may reuse the namespace)."""
        self.enable_video(False)
        if self.tape is not None:
            self.tape.close()
            self.tape = None
        for sub in self._subs:
            self.node.destroy_subscription(sub)
        self._subs = []
        for client in (self.reset_client, self.policy_client):
            if client is not None:
                self.node.destroy_client(client)
        self.reset_client = self.policy_client = None

    # -- callbacks ---------------------------------------------------------------------------------
    def _on_status(self, msg: EpisodeStatus) -> None:
        with self._cond:
            latest = self._latest
            if latest is None or (msg.episode_index, msg.step) >= (latest.episode_index, latest.step):
                self._latest = msg
            self._latest_at = time.monotonic()
            if msg.episode_index > self._finished:
                self._statuses.setdefault(int(msg.episode_index), {})[int(msg.step)] = msg
                if self.step_profile is not None:
                    self._status_at.setdefault(int(msg.step), time.monotonic())
                self._cond.notify_all()

    def _on_action(self, msg) -> None:
        with self._cond:
            self._actions += 1
            if self.step_profile is not None:
                self._action_at.append(time.monotonic())
            self._cond.notify_all()

    def _on_tick(self, msg: String) -> None:
        try:
            info = json.loads(msg.data)
            tick = (int(info["t_ns"]), bool(info["published"]))
        except (ValueError, KeyError, TypeError):
            return
        with self._cond:
            self._last_tick = tick
            if self.step_profile is not None and info.get("tick_ms") is not None and tick[1]:
                self._tick_ms.append(float(info["tick_ms"]))
            self._cond.notify_all()

    def _policy_skipped(self, stamp_ns: int) -> bool:
        """The policy node ticked on this observation and published nothing (e.g. a stream it needs had not
        arrived yet): no action is in flight, so resetting the episode again is safe."""
        return self._last_tick is not None and self._last_tick[0] >= stamp_ns and not self._last_tick[1]

    def _on_image(self, msg: Image) -> None:
        with self._cond:
            if self._frames is None:
                return
        stamp = time_to_ns(msg.header.stamp)
        frame = image_to_rgb(msg).copy()
        with self._cond:
            if self._frames is not None:
                self._frames.append((stamp, frame))
                self._cond.notify_all()

    # -- readiness ---------------------------------------------------------------------------------
    @property
    def image_topic(self) -> str | None:
        return ns_join(self.ns, f"{self.camera}/image_raw") if self.camera else None

    def ready(self) -> bool:
        """Services up and the policy source wired to the bridge (as far as the ROS graph shows)."""
        if not self.reset_client.service_is_ready():
            return False
        if self.policy_client is not None and not self.policy_client.service_is_ready():
            return False
        commands = ns_join(self.ns, "commands")
        if self.node.count_publishers(commands) < 1 or self._other_subscribers(commands) < 1:
            return False  # the source's publisher; the bridge subscribes
        if self.source_node is not None and self.source_node not in self._publisher_nodes(commands):
            return False
        # the source subscribes to what it acts on (observations, or the expert's env state)
        return all(self._other_subscribers(t) >= 1 for t in self.source_inputs)

    def _publisher_nodes(self, topic: str) -> set[str]:
        return {ns_join(i.node_namespace, i.node_name) for i in self.node.get_publishers_info_by_topic(topic)}

    def _other_subscribers(self, topic: str) -> int:
        """Subscriptions to `topic` other than this evaluator's own (its action counter, --record's tapes): those
        would make an absent bridge or policy node look wired."""
        me = (self.node.get_name(), self.node.get_namespace())
        return sum(
            1
            for info in self.node.get_subscriptions_info_by_topic(topic)
            if (info.node_name, info.node_namespace) != me
        )

    def wait_ready(self, timeout_s: float, hint: str = "") -> None:
        deadline = time.monotonic() + timeout_s
        while not self.ready():
            failure = self.check_alive()
            if failure:
                raise EvalError(failure)
            if time.monotonic() > deadline:
                commands = ns_join(self.ns, "commands")
                missing = [t for t in self.source_inputs if self._other_subscribers(t) < 1]
                absent = self.source_node is not None and self.source_node not in self._publisher_nodes(commands)
                raise EvalError(
                    f"{self.ns}: bridge or policy source not ready after {timeout_s:.0f} s "
                    f"(service {self.reset_client.srv_name} {'up' if self.reset_client.service_is_ready() else 'missing'}, "
                    f"{self.node.count_publishers(commands)} action publisher(s) on {commands}"
                    + (f", none of them {self.source_node}" if absent else "")
                    + (f", nothing subscribes {', '.join(missing)}" if missing else "")
                    + ")"
                    + (f"; {hint}" if hint else "")
                )
            time.sleep(0.05)

    def wait_idle(self, timeout_s: float, quiet_s: float = 1.0) -> None:
        """Before the first reset of an attached bridge: let an episode that is being stepped (e.g. one the
        launch started) run out, so that no action meant for it reaches ours (it would shift every later
        step of our episode by one). Returns when the bridge's last status says done, or when no status has
        come for `quiet_s` (nothing in flight); the bridge latches its last statuses, so "none yet" only
        counts once the status topic has been matched for `quiet_s`."""
        topic = ns_join(self.ns, "episode_status")
        start = time.monotonic()
        deadline = start + timeout_s
        matched_at = None
        with self._cond:
            while True:
                now = time.monotonic()
                if matched_at is None and self.node.count_publishers(topic) >= 1:
                    matched_at = now
                latest = self._latest
                if latest is not None and (latest.done or now - self._latest_at > quiet_s):
                    return
                if latest is None and matched_at is not None and now - matched_at > quiet_s:
                    return
                if now > deadline:
                    what = (
                        "no status from it"
                        if latest is None
                        else (f"its episode {latest.episode_index} is still being stepped (step {latest.step})")
                    )
                    raise EvalError(
                        f"{self.ns}: the bridge is not idle after {timeout_s:.0f} s: {what}; stop what drives it or wait"
                    )
                failure = self.check_alive()
                if failure:
                    raise EvalError(failure)
                self._cond.wait(0.1)

    def enable_video(self, on: bool) -> None:
        if on and self._image_sub is None and self.image_topic:
            self._image_sub = self.node.create_subscription(Image, self.image_topic, self._on_image, RECORDING_QOS)
        elif not on and self._image_sub is not None:
            self.node.destroy_subscription(self._image_sub)
            self._image_sub = None

    # -- service calls -----------------------------------------------------------------------------
    def _call(self, client, request, timeout_s: float, what: str):
        future = client.call_async(request)
        deadline = time.monotonic() + timeout_s
        while not future.done():
            failure = self.check_alive()
            if failure:
                raise EvalError(failure)
            if time.monotonic() > deadline:
                client.remove_pending_request(future)
                raise EvalError(f"{self.ns}: no reply from {what} within {timeout_s:.0f} s")
            time.sleep(0.002)
        return future.result()

    def _reset(self, seed: int | None) -> int:
        if self.policy_client is not None:
            self._call(self.policy_client, Trigger.Request(), 30.0, "the policy node's reset service")
        request = ResetEpisode.Request(seed=-1 if seed is None else int(seed), options="")
        with self._cond:
            self._statuses = {}
            self._actions = 0
            self._status_at, self._action_at, self._tick_ms = {}, [], []
            if self.tape is not None:
                self.tape.clear()
            if self._frames is not None:
                self._frames = []
        # Statuses of the new episode may arrive before the reply that names its index: all statuses
        # newer than the last finished episode are kept, keyed by episode index.
        response = self._call(
            self.reset_client, request, 300.0, "the bridge's reset_episode service (first resets build the simulator)"
        )
        if not response.success:
            raise EvalError(f"{self.ns}: {response.message}")
        return int(response.episode_index)

    def _add_step_profile(self, n: int) -> None:
        """Per step, as seen from here: status k -> the source's action k+1 ("source": transport out, policy,
        action publish) and that action -> status k+1 ("bridge": transport in, sim step, render, publish)."""
        p = self.step_profile
        assert p is not None  # called only when step profiling is on
        acts = self._action_at[:n]
        for k, t_act in enumerate(acts):
            t_obs, t_next = self._status_at.get(k), self._status_at.get(k + 1)
            if t_obs is None or t_next is None or not t_obs <= t_act <= t_next:
                continue
            p["source_s"] = p.get("source_s", 0.0) + (t_act - t_obs)
            p["bridge_s"] = p.get("bridge_s", 0.0) + (t_next - t_act)
            p["steps"] = p.get("steps", 0) + 1
        p["policy_s"] = p.get("policy_s", 0.0) + sum(self._tick_ms) / 1e3
        p["policy_ticks"] = p.get("policy_ticks", 0) + len(self._tick_ms)

    # -- one episode -------------------------------------------------------------------------------
    def _wait_final_answer(self, episode: int, n: int, final_ns: int) -> None:
        """A policy node answers the final observation too, after as long as its inference takes (a VLA on a CPU:
        seconds): wait for that tick's report (published after its action) and, when it acted, the action. A late
        answer would step the next episode, shifting all its steps by one; stopping the processes before the
        report would lose it for whoever follows the node. Called with `_cond` held."""

        def answered() -> bool:
            tick = self._last_tick
            return tick is not None and tick[0] >= final_ns and (self._actions >= n + 1 or not tick[1])

        deadline = time.monotonic() + self.stall_timeout_s
        while not self._cond.wait_for(answered, timeout=0.2):
            failure = self.check_alive()
            if failure:
                raise EvalError(failure)
            if time.monotonic() > deadline:
                raise EvalError(
                    f"{self.ns}: the policy node did not answer the final observation of episode {episode} within "
                    f"{self.stall_timeout_s:.0f} s (its answer would step the next episode; see its log)"
                )

    def run_episode(self, index: int, seed: int | None, record_video: bool) -> tuple[EpisodeResult, list[np.ndarray]]:
        """Reset with `seed`, wait until done, return the result (and the frames when recording)."""
        t0 = time.monotonic()
        with self._cond:
            self._frames = [] if record_video else None
        episode = self._reset(seed)
        notes: list[str] = []
        kicks = 0
        last_step, last_change = -1, time.monotonic()
        with self._cond:
            while True:
                current = self._statuses.get(episode, {})
                done = next((s for s in current.values() if s.done), None)
                if done is not None:
                    break
                step = max(current) if current else -1
                now = time.monotonic()
                if step != last_step:
                    last_step, last_change = step, now
                stalled = now - last_change
                start = current.get(0)
                skipped = start is not None and self._policy_skipped(_stamp(start))
                if step <= 0 and kicks < 3 and (stalled > self.kick_after_s or (skipped and stalled > 1.0)):
                    # nothing moved since the reset and no action is in flight (the policy node skipped the
                    # first observation, or the stateless expert never got it): a seeded reset is
                    # reproducible, so reset again.
                    self.kicks += 1
                    kicks += 1
                    notes.append(f"restarted after {stalled:.0f} s without a step")
                    self._cond.release()
                    try:
                        episode = self._reset(seed)
                    finally:
                        self._cond.acquire()
                    last_step, last_change = -1, time.monotonic()
                    continue
                if stalled > self.stall_timeout_s:
                    raise EvalError(
                        f"{self.ns}: episode {episode} stalled at step {step} for {stalled:.0f} s: "
                        "no action reached the bridge (is the policy source running? see its log)"
                    )
                failure = self.check_alive()
                if failure:
                    raise EvalError(failure)
                self._cond.wait(0.2)
            n = int(done.step)
            # wait for the source's answer to the final observation, so that it cannot reach the next episode
            if self.answers_final:  # a policy node (the only source that answers it; it reports each tick)
                self._wait_final_answer(episode, n, _stamp(done))
            elif self.answers_final is None:
                self._cond.wait_for(lambda: self._actions >= n + 1, timeout=0.3)
            if self._frames is not None:
                # frames arrive on their own (reliable) subscription, behind the status on a loaded machine
                self._cond.wait_for(
                    lambda: len(cast(list, self._frames)) >= n + 1, timeout=min(10.0, self.stall_timeout_s)
                )
            statuses = dict(self._statuses.get(episode, {}))
            if self.step_profile is not None:
                self._add_step_profile(n)
            frames = self._frames or []
            self._frames = None
            self._finished = max(self._finished, episode)
        rewards, successes = [], []
        for s in range(1, n + 1):
            msg = statuses.get(s)
            if msg is None:  # lost (should not happen on a reliable deep queue): rebuild from running sums
                prev, nxt = statuses.get(s - 1), statuses.get(s + 1)
                if prev is None or nxt is None:
                    raise EvalError(f"{self.ns}: episode {episode} lost status messages around step {s}")
                rewards.append(float(nxt.sum_reward - prev.sum_reward - nxt.reward))
                successes.append(bool(prev.success))
                notes.append(f"status of step {s} lost; its reward rebuilt from sum_reward")
                continue
            rewards.append(float(msg.reward))
            successes.append(bool(msg.success))
        start = statuses.get(0)
        start_ns = 0 if start is None else _stamp(start)
        images = [f for t, f in sorted(frames, key=lambda x: x[0]) if t >= start_ns]
        result = EpisodeResult(
            index=index,
            seed=seed,
            rewards=rewards,
            successes=successes,
            task=done.task,
            worker=self.ns,
            wall_s=time.monotonic() - t0,
            notes=notes,
        )
        return result, images


def _stamp(msg) -> int:
    return time_to_ns(msg.header.stamp)
