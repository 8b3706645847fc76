"""Process start-up for an evaluation: one sim bridge and one policy source per namespace, for one task.

Each namespace's processes are tracked apart, so a bridge that dies takes down only its own
namespace's episodes (`failure(ns)`), not the whole evaluation.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import yaml

from lerobot_ros.eval.attach import ns_join
from lerobot_ros.eval.node_process import NodeProcess, NodeSpec, namespaced_contract
from lerobot_ros.eval.plan import EvalPlan, EvalSetupError, image_kind, policy_image_shapes, policy_input_features
from lerobot_ros.sim.profiling import PROFILE_ENV
from lerobot_ros.sim.registry import TaskRef


def child_env() -> dict:
    env = dict(os.environ)
    env.setdefault("MUJOCO_GL", "egl")
    return env


def tick_stream(contract_path: Path, policy_path: str) -> str:
    """The feature whose arrival completes a step: the bridge publishes state first, then the images in
    the contract's order (LIBERO: image, image2), so the last image feature the policy reads."""
    data = yaml.safe_load(Path(contract_path).read_text())
    shapes = policy_image_shapes(policy_path)
    images = [name for name in data["features"] if name in shapes]
    return images[-1] if images else "observation.state"


def policy_node_inputs(contract_path: Path, policy_path: str) -> tuple[str, ...]:
    """The topics the policy node started on this contract subscribes to: its streams, chosen by the node's own
    rule (policy.inputs.policy_streams) from the contract written for its namespace."""
    from lerobot_ros.contract import load_contract
    from lerobot_ros.policy.inputs import policy_streams

    streams = policy_streams(load_contract(str(contract_path)).observation_features, policy_input_features(policy_path))
    return tuple(f.topic for f in streams.values())


#: what the scripted expert subscribes to, relative to its namespace
EXPERT_INPUTS = ("environment_state", "episode_status")


class EvalProcesses:
    """The node processes of one task's bridges and policy sources, per namespace."""

    def __init__(self, plan: EvalPlan, task: TaskRef):
        self.plan = plan
        self.task = task
        self.out = Path(plan.output_dir)
        self.procs: dict[str, list[NodeProcess]] = {}
        self.spawned_wall: dict[str, float] = {}
        #: ns -> the topics its policy source subscribes to (the evaluator waits for those subscriptions)
        self.source_inputs: dict[str, tuple[str, ...]] = {}
        #: ns -> the process of the policy source eval started there
        self.sources: dict[str, NodeProcess] = {}

    def start(self, ns: str) -> None:
        """A bridge and a policy source in `ns`, on the bridge's own clock topic `ns/clock`."""
        plan, task = self.plan, self.task
        clock = ns_join(ns, "clock")
        bridge = NodeSpec(
            "lerobot_ros.nodes.sim_bridge_node",
            ns,
            "sim_bridge",
            params={
                "env.type": plan.env,
                "env.task": task.task,
                "env.task_id": task.task_id,
                "mode": "lockstep",
                "env.observation_width": plan.render[1],
                "env.observation_height": plan.render[0],
                "shadows": plan.shadows,
                "antialias": plan.antialias,
                "env.episode_length": plan.max_episode_steps,
                "reset_on_start": False,
            },
            remaps={"/clock": clock},
        )
        extra = {}
        if plan.profile:
            extra[PROFILE_ENV] = str(self.profile_path(ns))
            self.spawned_wall[ns] = time.time()
        self._add(ns, bridge, f"{self._label(ns)}_bridge.log", extra)
        self.start_source(ns, clock)

    def profile_path(self, ns: str) -> Path:
        return self.out / "profile" / f"{self._label(ns)}_bridge.json"

    def bridge_profiles(self) -> dict[str, dict]:
        """ns -> the bridge's step timings (sim/profiling.py) plus `startup_s`: process spawn until its
        simulator runner existed (interpreter, imports, node set-up); read once the bridges have exited."""
        out = {}
        for ns, spawned in self.spawned_wall.items():
            try:
                data = json.loads(self.profile_path(ns).read_text())
            except (OSError, ValueError):
                continue
            data["startup_s"] = data["ready_wall"] - spawned
            out[ns] = data
        return out

    def start_source(self, ns: str, clock: str | None) -> None:
        """The policy node or the scripted expert in `ns`, following the bridge's clock topic."""
        plan = self.plan
        remaps = {"/clock": clock} if clock and clock != "/clock" else {}
        if plan.policy_path:
            contract = self.contract_for(ns)
            source = NodeSpec(
                "lerobot_ros.nodes.policy_node",
                ns,
                "policy_node",
                params={
                    "policy.path": str(Path(plan.policy_path).expanduser().resolve()),
                    "contract": str(contract),
                    "policy.device": plan.device,
                    "tick_on": tick_stream(contract, plan.policy_path),
                    "use_sim_time": True,
                    "seed": plan.policy_seed,
                },
                remaps=remaps,
            )
            self.sources[ns] = self._add(ns, source, f"{self._label(ns)}_policy.log")
            self.source_inputs[ns] = policy_node_inputs(contract, plan.policy_path)
        else:
            source = NodeSpec(  # a name of its own: in an attached namespace a launch's scripted_expert may run
                "lerobot_ros.nodes.scripted_expert_node",
                ns,
                "eval_expert",
                params={"expert": plan.expert_name, "env.task": self.task.task},
                remaps=remaps,
            )
            self.sources[ns] = self._add(ns, source, f"{self._label(ns)}_expert.log")
            self.source_inputs[ns] = tuple(ns_join(ns, t) for t in EXPERT_INPUTS)

    def contract_for(self, ns: str) -> Path:
        from lerobot_ros.contract.loader import resolve

        name = self.plan.contract
        try:
            source = yaml.safe_load(resolve(name).read_text())
        except Exception as exc:  # noqa: BLE001
            raise EvalSetupError(f"cannot read contract {name!r}: {exc}") from None
        data = namespaced_contract(source, ns, self.plan.render)
        images = [f for f in data["features"].values() if image_kind(f) is not None]
        if len(images) == 1 and len(self.plan.cameras) == 1:  # the camera asked for, raw or jpeg as the contract says
            suffix = "/compressed" if image_kind(images[0]) == "CompressedImage" else ""
            images[0]["topic"] = ns_join(ns, f"{self.plan.cameras[0]}/image_raw{suffix}")
        path = self.out / "contracts" / f"{self._label(ns)}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    def _label(self, ns: str) -> str:
        label = ns.strip("/") or "root"
        return label if len(self.plan.tasks) < 2 else f"{self.task.group}_{self.task.task_id}_{label}"

    def source_node(self, ns: str) -> str:
        """The fully qualified name of the policy source started in `ns`."""
        spec = self.sources[ns].spec
        return ns_join(spec.namespace, spec.name)

    def stop_source(self, ns: str) -> None:
        """Stop the policy source eval started in `ns` (another one turned out to be there already)."""
        proc = self.sources.pop(ns)
        proc.interrupt()
        proc.stop()
        self.procs[ns].remove(proc)
        self.source_inputs.pop(ns, None)

    def _add(self, ns: str, spec: NodeSpec, log: str, extra_env: dict | None = None) -> NodeProcess:
        proc = NodeProcess(spec, self.out / "logs" / log, {**child_env(), **(extra_env or {})})
        self.procs.setdefault(ns, []).append(proc)
        return proc

    def failure(self, ns: str | None = None) -> str | None:
        """One line on the first process (of `ns`, or of any namespace) that exited; None while all run."""
        groups = [self.procs.get(ns, [])] if ns is not None else list(self.procs.values())
        for group in groups:
            for p in group:
                reason = p.failure()
                if reason:
                    return reason
        return None

    def checker(self, ns: str):
        return lambda: self.failure(ns)

    def stop(self) -> None:
        """SIGINT to every process at once, then wait for each (stopping them in turn took seconds each)."""
        procs = [p for group in self.procs.values() for p in group]
        for p in procs:
            p.interrupt()
        for p in procs:
            p.stop()
