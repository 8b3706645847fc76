"""The evaluator's side of a lockstep episode (eval/worker.BridgeWorker) against a bridge and a policy node that
are small rclpy nodes here, over real DDS: the protocol is reset -> status 0 -> action -> status 1 ... -> done, and
the policy node answers every observation, the final one included, then reports the tick on ~/tick_info.

Stand-ins (said here as the project asks): the bridge and the policy node are scripted so that the final answer
can be made slow on purpose, which a real policy does only on a slow machine (a VLA on a CPU takes seconds).
"""

from __future__ import annotations

import json
import threading

import pytest
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from lerobot_ros.codecs.time import ns_to_time, time_to_ns
from lerobot_ros.eval.worker import BridgeWorker, EvalError
from lerobot_ros.ros.qos import EPISODE_STATUS_QOS, RECORDING_QOS, RELIABLE_QOS
from lerobot_ros.ros.runtime import wait_until
from lerobot_ros_msgs.msg import EpisodeStatus
from lerobot_ros_msgs.srv import ResetEpisode

NS, STEPS, PERIOD_NS = "/wt", 2, 50_000_000


class ScriptedBridge:
    """Lockstep: a reset publishes status 0; each action steps the current episode; `done` after STEPS. Records
    which episode's observation each action answered, and the episode it stepped."""

    def __init__(self, node):
        self.node, self.lock = node, threading.Lock()
        self.episode, self.step, self.done = -1, 0, True
        self.stepped: list[tuple[int, int]] = []  # (episode stepped, episode the action was computed for)
        self.pub = node.create_publisher(EpisodeStatus, f"{NS}/episode_status", EPISODE_STATUS_QOS)
        node.create_subscription(Float64MultiArray, f"{NS}/commands", self.on_action, RELIABLE_QOS)
        node.create_service(ResetEpisode, f"{NS}/reset_episode", self.on_reset)

    def publish(self) -> None:
        msg = EpisodeStatus(episode_index=self.episode, step=self.step, done=self.done, task="scripted")
        msg.header.stamp = ns_to_time((self.episode * 100 + self.step + 1) * PERIOD_NS)
        self.pub.publish(msg)

    def on_reset(self, request, response):
        with self.lock:
            self.episode, self.step, self.done = self.episode + 1, 0, False
            self.publish()
            response.success, response.episode_index = True, self.episode
        return response

    def on_action(self, msg) -> None:
        with self.lock:
            if self.done:
                return  # the final observation's answer: rejected, as the sim bridge does
            self.stepped.append((self.episode, int(msg.data[0])))
            self.step += 1
            self.done = self.step >= STEPS
            self.publish()


class ScriptedPolicy:
    """Answers each status with an action carrying the status' episode, then its tick report, after `step_delay_s`
    (the final observation's answer after `final_delay_s`)."""

    def __init__(self, node, step_delay_s: float, final_delay_s: float):
        self.step_delay_s, self.final_delay_s = step_delay_s, final_delay_s
        self.actions = node.create_publisher(Float64MultiArray, f"{NS}/commands", RELIABLE_QOS)
        self.ticks = node.create_publisher(String, f"{NS}/policy_node/tick_info", RECORDING_QOS)
        node.create_subscription(EpisodeStatus, f"{NS}/episode_status", self.on_status, EPISODE_STATUS_QOS)
        node.create_service(Trigger, f"{NS}/policy_node/reset", lambda req, res: setattr(res, "success", True) or res)

    def on_status(self, msg) -> None:
        timer = threading.Timer(self.final_delay_s if msg.done else self.step_delay_s, lambda: self.answer(msg))
        timer.daemon = True  # one that never fires must not hold the test process
        timer.start()

    def answer(self, msg) -> None:
        self.actions.publish(Float64MultiArray(data=[float(msg.episode_index)]))
        self.ticks.publish(String(data=json.dumps({"t_ns": time_to_ns(msg.header.stamp), "published": True})))


@pytest.fixture
def sides(ros):
    bridge = ScriptedBridge(ros.create_node("scripted_bridge"))
    policy = ScriptedPolicy(ros.create_node("scripted_policy"), step_delay_s=1.0, final_delay_s=3.0)
    worker = BridgeWorker(
        ros.create_node("eval_worker"),
        NS,
        policy_reset=f"{NS}/policy_node/reset",
        stall_timeout_s=20.0,
        answers_final=True,
    )
    yield bridge, policy, worker
    worker.close()


def wait_matched(worker) -> None:
    node = worker.node
    wait_until(
        lambda: (
            node.count_publishers(f"{NS}/episode_status") >= 1
            and node.count_subscribers(f"{NS}/commands") >= 1
            and worker.reset_client.service_is_ready()
            and worker.policy_client.service_is_ready()
        ),
        20,
        what="the scripted sides discovered",
    )


def test_a_slow_answer_to_the_final_observation_never_steps_the_next_episode(sides):
    """The final answer takes 3 s, each step 1 s (the evaluator used to wait 2 s for the final answer, then reset: the
    late answer stepped the next episode): each episode is stepped only by
    actions computed on its own observations, and the next reset waits for that answer."""
    bridge, policy, worker = sides
    wait_matched(worker)
    results = [worker.run_episode(i, seed=i, record_video=False)[0] for i in range(2)]
    assert [len(r.rewards) for r in results] == [STEPS, STEPS]
    assert bridge.stepped == [(0, 0), (0, 0), (1, 1), (1, 1)], "an action of episode 0 stepped episode 1"
    assert worker._last_tick[0] == (100 + STEPS + 1) * PERIOD_NS  # the final tick's report was in before returning


def test_a_policy_node_that_never_answers_the_final_observation_is_one_clear_error(sides):
    bridge, policy, worker = sides
    policy.step_delay_s, policy.final_delay_s = 0.0, 1e6  # the final answer never comes, within the test
    worker.stall_timeout_s = 1.0
    wait_matched(worker)
    with pytest.raises(
        EvalError,
        match=r"^/wt: the policy node did not answer the final observation of episode 0 "
        r"within 1 s \(its answer would step the next episode; see its log\)$",
    ):
        worker.run_episode(0, seed=0, record_video=False)


def test_readiness_does_not_count_the_evaluators_own_subscriptions(ros):
    """--record subscribes the evaluator to every observation topic (and the commands): the policy node counts as
    wired only once a subscription of another node is on its inputs."""
    import time

    from sensor_msgs.msg import JointState

    ScriptedBridge(ros.create_node("scripted_bridge"))
    ScriptedPolicy(ros.create_node("scripted_policy"), 0.0, 0.0)
    node = ros.create_node("eval_worker")
    worker = BridgeWorker(
        node, NS, policy_reset=f"{NS}/policy_node/reset", answers_final=True, source_inputs=(f"{NS}/joint_states",)
    )
    node.create_subscription(JointState, f"{NS}/joint_states", lambda msg: None, RECORDING_QOS)  # a tape's
    node.create_subscription(Float64MultiArray, f"{NS}/commands", lambda msg: None, RECORDING_QOS)
    wait_matched(worker)
    time.sleep(0.5)
    assert not worker.ready()
    with pytest.raises(EvalError, match=f"nothing subscribes {NS}/joint_states"):
        worker.wait_ready(0.5)
    ros.create_node("policy_inputs").create_subscription(
        JointState, f"{NS}/joint_states", lambda msg: None, RECORDING_QOS
    )
    worker.wait_ready(10.0)
    worker.close()


def test_a_started_source_counts_as_ready_only_once_it_publishes_itself(ros):
    """--attach with --expert: the launch's own expert already publishes NS/commands while the one eval started is
    still importing. Readiness waits for the started one (by node name); counting any publisher let eval compare
    sources before its own had appeared, and both then stepped the episode (84 steps instead of 47)."""
    ScriptedBridge(ros.create_node("scripted_bridge"))
    ros.create_node("scripted_expert", namespace=NS).create_publisher(Float64MultiArray, "commands", RELIABLE_QOS)
    node = ros.create_node("eval_worker")
    worker = BridgeWorker(node, NS, source_node=f"{NS}/eval_expert")
    wait_until(lambda: node.count_publishers(f"{NS}/commands") >= 1 and worker.reset_client.service_is_ready(), 20)
    assert not worker.ready()
    with pytest.raises(EvalError, match=f"1 action publisher\\(s\\) on {NS}/commands, none of them {NS}/eval_expert"):
        worker.wait_ready(0.5)
    ros.create_node("eval_expert", namespace=NS).create_publisher(Float64MultiArray, "commands", RELIABLE_QOS)
    worker.wait_ready(10.0)
    worker.close()
