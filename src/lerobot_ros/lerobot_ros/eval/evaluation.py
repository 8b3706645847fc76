"""`lerobot-ros eval`: seeded episodes through sim bridges in lockstep, scored like lerobot-eval.

The run in four parts, each its own module: planning (`plan`: options -> frozen `EvalPlan`), process
start-up (`bringup`: one bridge and one policy source per namespace /sim_0 ...), bridge discovery
(`discovery`: the evaluator's handle of each bridge, or the running bridges of `--attach`) and the
episode loop (`episodes`). This module runs them task after task, as lerobot-eval does for a
multi-task `--env.task`: only one task's bridges are alive at a time, then writes `eval_info.json`
(per_task / per_group / overall) atomically.

Attached (`attach=[NS ...]`): the bridges already run (a launch file, or sim_bridge_node by hand); env,
task and render size are theirs, and eval either starts the policy source there (expert / policy_path
given) or uses the one that already publishes `NS/commands`.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

from lerobot_ros.eval.bringup import EvalProcesses, tick_stream
from lerobot_ros.eval.discovery import Attacher, free_namespaces, make_worker, wait_started
from lerobot_ros.eval.episodes import EpisodeLoop
from lerobot_ros.eval.plan import EvalConfig, EvalPlan, EvalSetupError, adopt, plan_eval, policy_image_shapes
from lerobot_ros.eval.profile import Profile
from lerobot_ros.eval.results import build_eval_info, write_json_atomic

if TYPE_CHECKING:
    from lerobot_ros.eval.rollouts import Rollouts
    from lerobot_ros.ros.sim_rate import SimRateListener

__all__ = [
    "EvalConfig",
    "EvalPlan",
    "EvalSetupError",
    "Evaluation",
    "free_namespaces",
    "policy_image_shapes",
    "run_eval",
]


class Evaluation:
    """One evaluation run: plan, then per task processes, workers, episodes; then results. Use `run()`."""

    def __init__(self, cfg: EvalConfig, printer=print):
        self.cfg = cfg
        self.print = (lambda *a, **k: None) if cfg.quiet else printer
        self.plan = plan_eval(cfg)
        self.out = Path(self.plan.output_dir)
        self.profile = Profile(enabled=cfg.profile)
        self.rollouts: Rollouts | None = None  # --record_dir / --dataset.root

    def _adopt(self, bridges) -> EvalPlan:
        """The plan for these attached bridges (kept for callers of the former API)."""
        self.plan = adopt(self.plan, bridges)
        return self.plan

    def _tick_stream(self, contract_path: Path) -> str:
        return tick_stream(contract_path, cast(str, self.cfg.policy_path))  # used with a policy_path only

    # -- the run -----------------------------------------------------------------------------------
    def run(self) -> dict:
        from lerobot_ros.eval.rollouts import RolloutError
        from lerobot_ros.eval.videos import VideoWriter
        from lerobot_ros.eval.worker import BridgeWorker, EvalError
        from lerobot_ros.ros.runtime import RosRuntime

        self.out.mkdir(parents=True, exist_ok=True)
        t_setup = time.monotonic()
        # the scoring reductions import torch: in the background while the nodes start, not after the
        # first episode (where it held up the next one). Joined before anything timing-sensitive: an
        # import holds the GIL for seconds and starves the executor (wait_idle took that silence for an
        # idle bridge)
        self._scoring = threading.Thread(target=_import_scoring, daemon=True)
        self._scoring.start()
        from lerobot_ros.ros.sim_rate import SimRateListener

        outcomes, setup_s, kicks, namespaces = [], 0.0, 0, []
        self._rates: SimRateListener | None = None
        # the last task's processes: stopped after eval_info.json is written
        self._last_procs: EvalProcesses | None = None
        self.rollouts = self._rollouts()
        try:
            with RosRuntime() as ros:
                node = ros.create_node("lerobot_ros_eval")
                self._rates = SimRateListener(node)  # the bridges' real-time factor, from /diagnostics
                if self.plan.attach:
                    namespaces, outcome, kicks = self._run_attached(node, BridgeWorker, VideoWriter)
                    outcomes.append(outcome)
                    setup_s = outcome.setup_s
                else:
                    with self.profile.phase("discovery"):
                        namespaces = free_namespaces(node, self.plan.workers)
                    for i, task in enumerate(self.plan.tasks):
                        last = i == len(self.plan.tasks) - 1 and not self.plan.profile
                        outcome, k = self._run_task(node, task, namespaces, BridgeWorker, VideoWriter, keep=last)
                        outcomes.append(outcome)
                        setup_s += outcome.setup_s
                        kicks += k
                info = self._write(outcomes, namespaces, setup_s, kicks, time.monotonic() - t_setup)
        except BaseException as exc:
            if self.rollouts is not None:
                self.rollouts.discard()
            if isinstance(exc, (EvalError, RolloutError)):  # expected failures: one line for the user
                raise EvalSetupError(str(exc)) from None
            raise
        finally:
            if self._last_procs is not None:
                self._last_procs.stop()
        if self.rollouts is not None:
            self._keep_rollouts()
        return info

    def _rollouts(self) -> Rollouts | None:
        """Where --record_dir / --dataset.root keep the episodes (None: neither asked for)."""
        plan = self.plan
        if plan.record_dir is None and plan.dataset_dir is None:
            return None
        import yaml

        from lerobot_ros.contract.loader import resolve
        from lerobot_ros.eval.rollouts import Rollouts

        rollouts = Rollouts(
            plan.record_dir,
            plan.dataset_dir,
            self.out,
            yaml.safe_load(resolve(plan.contract).read_text()),
            plan.render,
            plan.n_episodes,
            plan.cameras,
        )
        rollouts.start()
        return rollouts

    def _keep_rollouts(self) -> None:
        from lerobot_ros.eval.rollouts import RolloutError

        r = self.rollouts
        assert r is not None  # run() calls this only with rollouts
        try:
            out = r.write_dataset(self.out / "logs" / "convert.log", self.print)
        except (RolloutError, KeyboardInterrupt) as exc:
            r.discard()
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise EvalSetupError(str(exc)) from None
        if not r.scratch:
            self.print(
                f"kept {len(r.saved)} episode bag(s) in {r.bags} (`lerobot-ros convert {r.bags} --contract "
                f"{r.bags / 'eval_contract.yaml'} --dataset.root DIR` makes the same dataset)"
            )
        if out is not None:
            self.print(f"wrote LeRobotDataset {out} ({len(r.saved)} episodes, {sum(r.saved.values())} frames)")

    def _run_task(self, node, task, namespaces, worker_cls, writer_cls, keep: bool = False):
        """One task: start its bridges and sources, run its episodes, stop them (`keep`: leave them to
        `run`, which stops them once eval_info.json is written)."""
        plan = self.plan
        t0 = time.monotonic()
        procs = self.processes = EvalProcesses(plan, task)  # the current task's (tests stop one on purpose)
        workers = []
        try:
            with self.profile.phase("starting processes"):
                for ns in namespaces:
                    procs.start(ns)
            workers = [
                make_worker(
                    node, plan, ns, worker_cls, procs.checker(ns), procs.source_inputs[ns], procs.source_node(ns)
                )
                for ns in namespaces
            ]
            for w in workers if self.rollouts is not None else ():
                assert self.rollouts is not None  # the loop runs only with rollouts
                w.tape = self.rollouts.tape(node, w.ns)  # subscribed before the bridges come up
            for w in workers:
                w.step_profile = {} if plan.profile else None
            self.print(
                f"{task.group} {task.task_id}: waiting for {len(namespaces)} bridge(s) and policy source(s) "
                f"({', '.join(namespaces)}) ..."
            )
            with self.profile.phase("nodes up (imports, policy load, discovery)"):
                wait_started(workers, plan.start_timeout_s)
                time.sleep(1.0)  # let the last discovery round settle on the bridges' side too
            outcome = self._episodes(task, workers, procs, writer_cls, time.monotonic() - t0)
        except BaseException:
            keep = False
            raise
        finally:
            for w in workers:
                w.close()
            if keep:
                self._last_procs = procs
            else:
                with self.profile.phase("stopping processes"):
                    procs.stop()
        self.profile.add_task(workers, procs.bridge_profiles())
        return outcome, sum(w.kicks for w in workers)

    def _run_attached(self, node, worker_cls, writer_cls):
        t0 = time.monotonic()
        attacher = Attacher(node, self.plan, worker_cls, self.print)
        self.plan, bridges = attacher.find()
        self._scoring.join()
        procs = EvalProcesses(self.plan, self.plan.tasks[0])
        workers = []
        try:
            workers = attacher.workers(bridges, procs, procs.failure)
            time.sleep(1.0)
            outcome = self._episodes(self.plan.tasks[0], workers, procs, writer_cls, time.monotonic() - t0)
        finally:
            for w in workers:
                w.close()
            procs.stop()
        return [w.ns for w in workers], outcome, sum(w.kicks for w in workers)

    def _episodes(self, task, workers, procs, writer_cls, setup_s):
        plan = self.plan
        index = plan.tasks.index(task)
        self.print(
            f"ready in {setup_s:.1f} s; {plan.n_episodes} episode(s) of {plan.task_descriptions[index]!r}, "
            f"seeds {plan.start_seed}.."
        )
        writer = writer_cls(plan.fps)
        loop = EpisodeLoop(
            task,
            plan.n_episodes,
            plan.start_seed,
            plan.videos,
            self.out / "videos" / f"{task.group}_{task.task_id}",
            writer,
            self.print,
            alive=(lambda w: procs.failure(w.ns)) if not plan.attach else None,
            keep=(lambda w, result: self.rollouts.save(w.tape, index, result)) if self.rollouts is not None else None,
        )
        self._scoring.join()
        with self.profile.phase("episodes"):
            outcome = loop.run(workers)
        writer.join()
        outcome.setup_s = setup_s
        outcome.video_errors = list(writer.errors)
        for result in outcome.results:  # eval_info lists only the videos that exist
            if result.video_path in writer.failed:
                result.video_path = None
        return outcome

    def _write(self, outcomes, namespaces, setup_s, kicks, total_s) -> dict:
        plan = self.plan
        results = [r for o in outcomes for r in o.results]
        failed = [
            dict(f, task_group=t.group, task_id=t.task_id) for o, t in zip(outcomes, plan.tasks) for f in o.failed
        ]
        video_errors = [e for o in outcomes for e in getattr(o, "video_errors", [])]
        first = plan.tasks[0]
        extra = {
            "env": plan.env,
            "task": ",".join(dict.fromkeys(t.group for t in plan.tasks)),
            "task_description": plan.task_descriptions[0] if len(plan.tasks) == 1 else list(plan.task_descriptions),
            "mode": "/".join(plan.modes),
            "render": list(plan.render),
            "shadows": plan.shadows,
            "workers": len(namespaces),
            "policy_source": plan.source_label,
            **({"attached": list(namespaces)} if plan.attach else {}),
            "setup_s": round(setup_s, 3),
            "restarts": kicks,
            **({"video_errors": video_errors} if video_errors else {}),
            **(
                {"failed_episodes": failed, "lost_bridges": [x for o in outcomes for x in o.lost_workers]}
                if failed
                else {}
            ),
            **({"profile": self.profile.summary()} if self.profile.enabled else {}),
        }
        if len(plan.tasks) == 1:
            info = build_eval_info(results, first.group, first.task_id, sum(o.eval_s for o in outcomes), extra)
        else:
            info = build_eval_info(
                results,
                eval_s=sum(o.eval_s for o in outcomes),
                extra=extra,
                tasks=[(t.group, t.task_id) for t in plan.tasks],
            )
        write_json_atomic(self.out / "eval_info.json", info)
        o = info["overall"]
        for group, g in info["per_group"].items() if len(info["per_group"]) > 1 else ():
            self.print(
                f"{group}: {g['n_episodes']} episodes, success {g['pc_success']:.1f}%, avg_sum_reward {g['avg_sum_reward']:.3f}"
            )
        self.print(
            f"{o['n_episodes']} episodes: success {o['pc_success']:.1f}%, avg_sum_reward {o['avg_sum_reward']:.3f}, "
            f"avg_max_reward {o['avg_max_reward']:.3f}, {o['eval_s']:.1f} s ({60 * o['n_episodes'] / max(o['eval_s'], 1e-9):.1f} episodes/min)"
        )
        rates = getattr(self, "_rates", None)
        for ns in namespaces if rates is not None else ():
            assert rates is not None  # the loop runs only with rates
            if rates.summary(ns):
                self.print(f"{ns}: {rates.summary(ns)}")
        if self.profile.enabled:
            self.print(self.profile.report(total_s))
        self.print(f"wrote {self.out / 'eval_info.json'}")
        if failed:
            raise EvalSetupError(
                f"{len(failed)} episode(s) not run: every bridge stopped ({info['lerobot_ros']['lost_bridges'][-1]}); "
                f"the {len(results)} run are in {self.out / 'eval_info.json'}"
            )
        return info


def _import_scoring() -> None:
    try:
        import einops  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        pass  # reported where they are used


def run_eval(cfg: EvalConfig, printer=print) -> dict:
    return Evaluation(cfg, printer).run()
