"""Evaluated episodes kept as data: one rosbag2 per episode (`--record_dir`), and a LeRobotDataset made from
those bags by `lerobot-ros convert` (`--dataset.root`), so both hold exactly the same frames.

Each bridge namespace gets a `Tape`: raw subscriptions to the contract's observation topics, the
actions and `episode_status`, cleared at every reset. When an episode ends its bag is written with the
record package's `EpisodeBagWriter`, holding exactly the steps the bridge applied: observations
0..n-1 and actions 0..n-1 (the policy node's answer to the final observation, which the bridge
rejects, and that final observation are left out, as lerobot-eval's own recording leaves them), the
statuses 0..n. Topics are written under the contract's own names (`/sim/...`) whatever the bridge's
namespace, and every message is logged at the simulated time of the step it belongs to (an action at
the time of the observation it answers), as a recorder on the bridge's clock logs them; the converter
then puts frame k at step k, so an episode of n steps becomes n frames, and `eval_contract.yaml`
(the contract at the render size) next to the bags converts them again into the same dataset.

A bag is written under `<name>.partial` and renamed when complete; the dataset is converted into a
hidden folder and renamed only when every episode converted: a failed or interrupted run never leaves
a half-written bag or dataset.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from lerobot_ros.codecs.cdr import header_stamp_ns
from lerobot_ros.conventions.errors import UserError
from lerobot_ros.eval.attach import ns_join
from lerobot_ros.eval.node_process import namespaced_contract
from lerobot_ros.record.episode_bag_writer import BagWriteError, EpisodeBagWriter

STATUS_TYPE = "lerobot_ros_msgs/msg/EpisodeStatus"
CONTRACT_NAME = "eval_contract.yaml"


class RolloutError(UserError, RuntimeError):
    """An episode could not be kept as data; the message says why."""


def eval_contract(source: dict, render: tuple[int, int], cameras: tuple[str, ...] = ()) -> dict:
    """The contract the bags follow: the shipped one at the evaluation's render size, topics under /sim
    (a single image feature on the bridge's single camera, as the policy node's contract has it)."""
    data = namespaced_contract(source, "/sim", render)
    images = [f for f in data["features"].values() if str(f.get("type", "")).endswith("/Image")]
    if len(images) == 1 and len(cameras) == 1:
        images[0]["topic"] = f"/sim/{cameras[0]}/image_raw"
    return data


class Tape:
    """The raw messages of the current episode in one bridge namespace (thread-safe)."""

    def __init__(self, node, ns: str, contract: dict):
        from rclpy.serialization import deserialize_message

        from lerobot_ros.contract import messages as M
        from lerobot_ros.ros.qos import RECORDING_QOS, STATUS_FOLLOWER_QOS
        from lerobot_ros_msgs.msg import EpisodeStatus

        self._deserialize = deserialize_message
        self._status_cls = EpisodeStatus
        self.node, self.ns = node, ns
        self._cond = threading.Condition()
        self.observations: dict[str, str] = {}  # namespaced topic -> canonical (/sim/...) topic
        self.types: dict[str, str] = {}  # canonical topic -> message type
        self.action_topic = ""
        for name, feature in contract["features"].items():
            topic = str(feature["topic"])
            here = ns_join(ns, topic[len("/sim/") :]) if topic.startswith("/sim/") else topic
            self.types[topic] = M.normalize_type(str(feature["type"]))
            if name == "action":
                self.action_topic, self._action_here = topic, here
            else:
                self.observations[here] = topic
        self.status_topic = str(contract.get("episode_boundary", {}).get("topic") or "/sim/episode_status")
        self.types[self.status_topic] = STATUS_TYPE
        self._subs = []
        for here, topic in self.observations.items():
            cls = M.message_class(self.types[topic])
            self._subs.append(
                node.create_subscription(cls, here, lambda raw, t=here: self._on_obs(t, raw), RECORDING_QOS, raw=True)
            )
        self._subs.append(
            node.create_subscription(
                M.message_class(self.types[self.action_topic]),
                self._action_here,
                self._on_action,
                RECORDING_QOS,
                raw=True,
            )
        )
        self._subs.append(
            node.create_subscription(
                EpisodeStatus, ns_join(ns, "episode_status"), self._on_status, STATUS_FOLLOWER_QOS, raw=True
            )
        )
        self.clear()

    def close(self) -> None:
        for sub in self._subs:
            self.node.destroy_subscription(sub)
        self._subs = []

    def clear(self) -> None:
        """Forget everything: called right before a reset request (nothing of the new episode came yet)."""
        with self._cond:
            self._obs: dict[str, dict[int, bytes]] = {t: {} for t in self.observations}  # topic -> stamp -> data
            self._actions: list[bytes] = []
            self._statuses: dict[int, dict[int, tuple[int, bytes]]] = {}  # episode -> step -> (stamp, data)
            self._done: dict[int, int] = {}  # episode -> its last step

    def _on_obs(self, topic: str, raw: bytes) -> None:
        stamp = header_stamp_ns(raw)
        with self._cond:
            self._obs[topic][stamp] = raw
            self._cond.notify_all()

    def _on_action(self, raw: bytes) -> None:
        with self._cond:
            self._actions.append(raw)
            self._cond.notify_all()

    def _on_status(self, raw: bytes) -> None:
        msg = self._deserialize(raw, self._status_cls)
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        with self._cond:
            self._statuses.setdefault(int(msg.episode_index), {})[int(msg.step)] = (stamp, raw)
            if msg.done:
                self._done[int(msg.episode_index)] = int(msg.step)
            self._cond.notify_all()

    def _complete(self, n: int):
        """(statuses 0..n by step) once every message of the n applied steps is here, else None."""
        for episode, last in self._done.items():
            if last != n:
                continue
            statuses = self._statuses.get(episode, {})
            if any(k not in statuses for k in range(n + 1)) or len(self._actions) < n:
                return None
            stamps = [statuses[k][0] for k in range(n)]
            if all(s in self._obs[t] for t in self._obs for s in stamps):
                return statuses
        return None

    def save(self, path: Path, n_steps: int, custom_data: dict[str, str], timeout_s: float = 30.0) -> Path:
        """Write the episode that just ended (n_steps applied) as one bag at `path`."""
        with self._cond:
            statuses = None
            deadline = time.monotonic() + timeout_s
            while (statuses := self._complete(n_steps)) is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    have = {self.observations[t]: len(v) for t, v in self._obs.items()}
                    raise RolloutError(
                        f"{self.ns}: episode of {n_steps} steps not complete for its bag after {timeout_s:.0f} s "
                        f"(observations {have}, {len(self._actions)} actions)"
                    )
                self._cond.wait(min(left, 0.2))
            obs = {t: dict(v) for t, v in self._obs.items()}
            actions = list(self._actions[:n_steps])
        partial = path.with_name(path.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        try:
            writer = EpisodeBagWriter(partial, custom_data=custom_data).open()
        except (BagWriteError, OSError) as exc:
            shutil.rmtree(partial, ignore_errors=True)
            raise RolloutError(f"could not write {path}: {exc}") from None
        try:
            for topic, msgtype in self.types.items():
                writer.add_topic(topic, msgtype)
            for k in range(n_steps + 1):
                stamp, status = statuses[k]
                if k < n_steps:
                    for here, by_stamp in obs.items():
                        writer.write(self.observations[here], stamp, by_stamp[stamp])
                    writer.write(self.action_topic, stamp, actions[k])
                writer.write(self.status_topic, stamp, status)
        finally:
            result = writer.close()
        if result.error or not result.readable:
            shutil.rmtree(partial, ignore_errors=True)
            raise RolloutError(f"could not write {path}: {result.error}")
        partial.rename(path)
        return path


class Rollouts:
    """Where an evaluation keeps its episodes: bags in `record_dir` (or a scratch folder when only a
    dataset is asked for), converted into `dataset_dir` at the end."""

    def __init__(
        self,
        record_dir: Path | None,
        dataset_dir: Path | None,
        output_dir: Path,
        contract: dict,
        render: tuple[int, int],
        n_episodes: int,
        cameras: tuple[str, ...] = (),
    ):
        self.dataset_dir = Path(dataset_dir).resolve() if dataset_dir else None
        self.scratch = record_dir is None
        self.bags = Path(record_dir).resolve() if record_dir else Path(output_dir).resolve() / ".rollout_bags"
        self.contract = eval_contract(contract, render, cameras)
        self.n_episodes = n_episodes
        self.saved: dict[str, int] = {}  # bag name -> steps of its episode (bags end in any order with several bridges)

    def start(self) -> None:
        if self.scratch:
            shutil.rmtree(self.bags, ignore_errors=True)
        self.bags.mkdir(parents=True, exist_ok=True)
        (self.bags / CONTRACT_NAME).write_text(yaml.safe_dump(self.contract, sort_keys=False))

    def tape(self, node, ns: str) -> Tape:
        return Tape(node, ns, self.contract)

    def bag_path(self, task_position: int, episode: int) -> Path:
        return self.bags / f"episode_{task_position * self.n_episodes + episode:06d}"

    def save(self, tape: Tape, task_position: int, result) -> Path:
        custom = {
            "task": result.task,
            "seed": str(result.seed),
            "episode_ix": str(result.index),
            "task_group": result.group,
            "task_id": str(result.task_id),
            "outcome": "success" if result.success else "failure",
            "sum_reward": repr(result.sum_reward),
        }
        path = tape.save(self.bag_path(task_position, result.index), result.n_steps, custom)
        self.saved[path.name] = result.n_steps
        return path

    def write_dataset(self, log: Path, printer=print) -> Path | None:
        """`lerobot-ros convert` of the bags into the dataset folder (renamed there only when complete)."""
        if self.dataset_dir is None:
            return None
        out = self.dataset_dir
        staging = out.with_name(f".{out.name}.eval-partial")
        shutil.rmtree(staging, ignore_errors=True)
        argv = [
            sys.executable,
            "-m",
            "lerobot_ros.cli.main",
            "convert",
            str(self.bags),
            "--contract",
            str(self.bags / CONTRACT_NAME),
            "--dataset.root",
            str(staging),
            "--dataset.repo_id",
            f"local/{out.name}",
            "--progress=false",
        ]
        printer(f"converting {len(self.saved)} episode bag(s) -> LeRobotDataset {out} ...")
        log.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(log, "wb") as f:
                code = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env=dict(os.environ)).returncode
            if code != 0 or not staging.is_dir():
                tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
                raise RolloutError(
                    f"converting the episodes failed (exit {code}): {tail} (log: {log}); no dataset written"
                )
            self._check_report(staging, out)
            staging.rename(out)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            if self.scratch:
                shutil.rmtree(self.bags, ignore_errors=True)
        return out

    def _check_report(self, staging: Path, out: Path) -> None:
        """Every bag written as one episode of as many frames as its steps; the QA report names `out`."""
        qa = staging / "meta" / "lerobot_ros_qa.json"
        report = json.loads(qa.read_text())
        frames = [e["frames"] for b in report["bags"] for e in b["episodes"] if e.get("written")]
        steps = [self.saved[name] for name in sorted(self.saved)]  # convert takes the bags in name order
        if frames != steps:
            raise RolloutError(
                f"the converted dataset has episodes of {frames} frames, the evaluation ran {steps} steps; "
                "no dataset written"
            )
        report["dataset"] = str(out)
        qa.write_text(json.dumps(report, indent=2))

    def discard(self) -> None:
        """After a failed run: the scratch bags go (kept --record bags are whole episodes and stay)."""
        if self.scratch:
            shutil.rmtree(self.bags, ignore_errors=True)


def check_outputs(record_dir: Path | None, dataset_dir: Path | None) -> str | None:
    """One line on an output folder that cannot be used, else None (checked before anything starts)."""
    if dataset_dir is not None and Path(dataset_dir).exists():
        return f"--dataset.root {dataset_dir} exists already; choose a new folder (a dataset is never appended to)"
    if record_dir is not None and Path(record_dir).exists() and any(Path(record_dir).iterdir()):
        return f"--record_dir {record_dir} is not empty; choose a new or empty folder"
    if record_dir is not None and dataset_dir is not None and Path(record_dir).resolve() == Path(dataset_dir).resolve():
        return "--record_dir and --dataset.root need different folders"
    return None
