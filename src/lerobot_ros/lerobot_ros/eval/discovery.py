"""Bridge discovery: free namespaces for the bridges eval starts, the evaluator's handle of each bridge
once the ROS graph shows it wired, and for `--attach` the running bridges and their policy sources."""

from __future__ import annotations

import time

from lerobot_ros.eval.attach import (
    AttachedBridge,
    AttachError,
    command_publishers,
    find_bridge,
    fqn,
    no_source_message,
    ns_join,
    settled_sources,
)
from lerobot_ros.eval.plan import EvalPlan, EvalSetupError, adopt


def free_namespaces(node, count: int, prefix: str = "/sim_", settle_s: float = 1.5) -> list[str]:
    """The first `count` namespaces /sim_<i> with no node in them (after a short discovery wait), so an
    evaluation never talks to someone else's bridge in the same ROS domain."""
    time.sleep(settle_s)
    taken = {n_.rstrip("/") for _, n_ in node.get_node_names_and_namespaces()}
    out: list[str]
    out, i = [], 0
    while len(out) < count:
        ns = f"{prefix}{i}"
        if ns not in taken:
            out.append(ns)
        i += 1
    return out


def make_worker(node, plan: EvalPlan, ns: str, cls, check_alive, source_inputs: tuple[str, ...], source_node: str):
    """The evaluator's handle of `ns`, where this evaluation started the policy source `source_node` (fully
    qualified; it subscribes to `source_inputs`: EvalProcesses.source_inputs, read from what it was started on)."""
    camera = plan.cameras[0] if plan.cameras else None
    if plan.policy_path:
        return cls(
            node,
            ns,
            camera,
            ns_join(ns, "policy_node/reset"),
            check_alive,
            stall_timeout_s=plan.stall_timeout_s,
            answers_final=True,
            source_inputs=source_inputs,
            source_node=source_node,
        )
    # the scripted expert is stateless: an episode that never started (a lost first observation) is
    # safely reset again with the same seed
    return cls(
        node,
        ns,
        camera,
        None,
        check_alive,
        stall_timeout_s=plan.stall_timeout_s,
        kick_after_s=15.0,
        answers_final=False,
        source_inputs=source_inputs,
        source_node=source_node,
    )


def wait_started(workers, timeout_s: float) -> None:
    for w in workers:
        w.wait_ready(timeout_s)


class Attacher:
    """`--attach`: find the running bridges, adopt their setup, start or find their policy sources."""

    def __init__(self, node, plan: EvalPlan, cls, printer=print):
        self.node, self.plan, self.cls, self.print = node, plan, cls, printer

    def find(self) -> tuple[EvalPlan, list[AttachedBridge]]:
        plan = self.plan
        find_s = plan.find_timeout_s
        self.print(f"looking for sim bridge(s) in {', '.join(plan.attach)} (up to {find_s:.0f} s) ...")
        try:
            bridges = [find_bridge(self.node, ns, find_s) for ns in plan.attach]
        except AttachError as exc:
            raise EvalSetupError(str(exc)) from None
        self.plan = plan = adopt(plan, bridges)
        for b in bridges:
            self.print(
                f"attached to {b.node}: {plan.env} {plan.tasks[0].task!r}, {b.params.get('mode', 'lockstep')}, "
                f"{plan.render[0]}x{plan.render[1]}, policy source(s): {', '.join(b.sources) or 'none yet'}"
            )
        if list(plan.modes) != ["lockstep"]:
            self.print(
                "note: a realtime bridge steps on the wall clock; scores will not match lerobot-eval's step for step"
            )
        return plan, bridges

    def workers(self, bridges: list[AttachedBridge], processes, check_alive) -> list:
        """A handle per bridge, its source started (`node_process`) or found; waits until the bridges are idle."""
        plan, node, cls = self.plan, self.node, self.cls
        find_s = plan.find_timeout_s
        workers, started = [], []
        try:
            for b in bridges:
                b.sources, b.policy_resets = settled_sources(node, b.ns)  # once discovery has settled
                if not (plan.expert or plan.policy_path):
                    workers.append(self.running_source(b, find_s, check_alive))
                elif b.sources and plan.expert and not b.policy_resets:
                    # --expert and a scripted source already acts there (e.g. the launch's expert:=true): use it
                    self.print(f"{b.ns}: using the source already running there ({', '.join(b.sources)})")
                    workers.append(self.running_source(b, find_s, check_alive))
                elif b.sources:
                    raise EvalSetupError(
                        f"{b.ns} already has a policy source ({', '.join(b.sources)} publishes {ns_join(b.ns, 'commands')}): "
                        "drop --policy.path to evaluate that one, or stop it first"
                    )
                else:
                    processes.start_source(b.ns, b.clock_topic)
                    w = make_worker(
                        node, plan, b.ns, cls, check_alive, processes.source_inputs[b.ns], processes.source_node(b.ns)
                    )
                    workers.append(w)
                    started.append((b, w))
            wait_started([w for _, w in started], plan.start_timeout_s)
            for b, w in started:  # a source discovered late (a loaded machine) must not act beside ours
                self._one_source(b, w, workers, processes, check_alive)
            for w in workers:
                w.wait_idle(max(find_s, 60.0))
        except BaseException:  # a later bridge refused: the handles already made go too
            for w in workers:
                w.close()
            raise
        return workers

    def _one_source(self, b: AttachedBridge, ours, workers: list, processes, check_alive) -> None:
        """Look again once the source eval started runs: discovery of a running one can take longer than the
        first look waited. --expert and a scripted source there: stop ours and use that one; else refuse."""
        sources, resets = settled_sources(self.node, b.ns)
        if command_publishers(self.node, b.ns) <= 1:
            return
        spec = processes.sources[b.ns].spec
        others = [s for s in sources if s != fqn(spec.name, spec.namespace)] or sources  # or: the same name as ours
        if self.plan.expert and not resets:
            self.print(f"{b.ns}: using the source already running there ({', '.join(others)})")
            ours.close()
            processes.stop_source(b.ns)
            workers[workers.index(ours)] = self.running_source(b, self.plan.find_timeout_s, check_alive)
            return
        raise EvalSetupError(
            f"{b.ns} already has a policy source ({', '.join(others)} publishes {ns_join(b.ns, 'commands')}): "
            "drop --policy.path to evaluate that one, or stop it first"
        )

    def running_source(self, b: AttachedBridge, timeout_s: float, check_alive):
        """The evaluator's handle of an attached bridge whose policy source already runs."""
        plan, node = self.plan, self.node
        w = self.cls(
            node,
            b.ns,
            plan.cameras[0] if plan.cameras else None,
            None,
            check_alive,
            stall_timeout_s=plan.stall_timeout_s,
            answers_final=None,
        )
        w.wait_ready(timeout_s, hint=no_source_message(b, timeout_s))
        sources, resets = settled_sources(node, b.ns)  # a policy node's ~/reset may show up after its publisher
        if (n := command_publishers(node, b.ns)) > 1:
            raise EvalSetupError(
                f"{ns_join(b.ns, 'commands')} has {n} publishers ({', '.join(sources)}); "
                "an evaluation needs exactly one policy source: stop the others"
            )
        if resets:  # a policy node: reset it before each episode, wait for its answer to the last step
            w.use_policy_node(next(iter(resets.values())))
            w.answers_final = True
            w.wait_ready(timeout_s)
        return w
