"""policy_node in lockstep on simulated time: an SO-101 contract with one camera, observations of a plausible motion, and a Harness that publishes them, advances /clock and collects what the node sends."""

from __future__ import annotations

import itertools
import json

import numpy as np
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Image, JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from lerobot_ros.codecs import (
    ns_to_time,
    numpy_to_image,
    numpy_to_joint_state,
)
from lerobot_ros.ros.qos import RELIABLE_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.testing.policies import SO101_JOINTS

FPS = 10


PERIOD = 1_000_000_000 // FPS


T0 = 1000 * 1_000_000_000


_ns = itertools.count()


CONTRACT = """
version: 1
robot_type: so101_follower
fps: {fps}
task: {{default: "pick the cube"}}
features:
  action:
    topic: /{p}/follower/commands
    type: std_msgs/msg/Float64MultiArray
    qos: reliable
    names: [shoulder_pan.pos, shoulder_lift.pos, elbow_flex.pos, wrist_flex.pos, wrist_roll.pos, gripper.pos]
    transforms: [rad2deg]
    timeline: receive
  observation.state:
    topic: /{p}/follower/joint_states
    type: sensor_msgs/msg/JointState
    qos: reliable
    joints: [shoulder_pan, shoulder_lift, elbow_flex, wrist_flex, wrist_roll, gripper]
    transforms: [rad2deg]
    timeline: header
    alignment: {{policy: interpolate, tolerance_ms: 100}}
  observation.images.front:
    topic: /{p}/front/image_raw
    type: sensor_msgs/msg/Image
    qos: reliable
    shape: [{h}, {w}, 3]
    timeline: header
    alignment: {{policy: nearest, tolerance_ms: 50}}
"""


def write_contract(tmp_path, h=48, w=64):
    prefix = f"pn{next(_ns)}"
    path = tmp_path / f"{prefix}.yaml"
    path.write_text(CONTRACT.format(fps=FPS, p=prefix, h=h, w=w))
    return path, prefix


def observations(n, seed=0, h=48, w=64):
    """(joint radians (n, 6), images (n, h, w, 3)) of a plausible motion."""
    rng = np.random.default_rng(seed)
    joints = np.cumsum(rng.normal(scale=0.05, size=(n, 6)), axis=0)
    images = rng.integers(0, 256, (n, h, w, 3), dtype=np.uint8)
    return joints, images


class Harness:
    """Drives a PolicyNode in lockstep: publish one observation set, wait until received, advance /clock."""

    def __init__(self, ros, contract_path, prefix, policy_dir, **params):
        from lerobot_ros.nodes.policy_node import PolicyNode

        overrides = [
            Parameter("use_sim_time", value=True),
            Parameter("policy.path", value=str(policy_dir)),
            Parameter("contract", value=str(contract_path)),
            Parameter("policy.device", value="cpu"),
            Parameter("seed", value=0),
        ] + [Parameter(k, value=v) for k, v in params.items()]
        self.node = ros.add_node(PolicyNode(context=ros.context, parameter_overrides=overrides))
        self.probe = ros.create_node(f"probe_{prefix}")
        self.clock = self.probe.create_publisher(Clock, "/clock", 10)
        self.state = self.probe.create_publisher(JointState, f"/{prefix}/follower/joint_states", RELIABLE_QOS)
        self.image = self.probe.create_publisher(Image, f"/{prefix}/front/image_raw", RELIABLE_QOS)
        topic = self.node.action_topic
        msg_type = {"trajectory": JointTrajectory, "joint_state": JointState}.get(self.node.mode, Float64MultiArray)
        self.actions = MessageCollector(self.probe, msg_type, topic, RELIABLE_QOS)
        self.info = MessageCollector(self.probe, String, f"/{self.node.get_name()}/tick_info", RELIABLE_QOS)
        self.plans = MessageCollector(
            self.probe, JointTrajectory, f"/{self.node.get_name()}/predicted_chunk", RELIABLE_QOS
        )
        wait_until(
            lambda: (
                self.state.get_subscription_count()
                and self.image.get_subscription_count()
                and self.actions.subscription.get_publisher_count()
            ),
            10,
            what="discovery",
        )

    def publish(self, t_ns, joints=None, image=None):
        if joints is not None:
            self.state.publish(numpy_to_joint_state(SO101_JOINTS, position=joints, stamp_ns=t_ns))
        if image is not None:
            self.image.publish(numpy_to_image(image, "rgb8", t_ns))
        streams = (["observation.state"] if joints is not None else []) + (
            ["observation.images.front"] if image is not None else []
        )
        wait_until(
            lambda: all(self.node.resampler.latest_time(s) == t_ns for s in streams),
            10,
            what="observations at the node",
        )

    def tick(self, t_ns) -> dict:
        before = len(self.info.items)
        self.clock.publish(Clock(clock=ns_to_time(t_ns)))
        wait_until(
            lambda: self.node.loop.last_tick_ns is not None and self.node.loop.last_tick_ns >= t_ns,
            10,
            what=f"tick at {t_ns}",
        )
        self.info.wait_for(before + 1, timeout=120)  # reported after inference (a VLA's on a busy CPU)
        return json.loads(self.info.messages[-1].data)

    def call(self, service):
        client = self.probe.create_client(Trigger, f"/{self.node.get_name()}/{service}")
        assert client.wait_for_service(5.0)
        future = client.call_async(Trigger.Request())
        wait_until(future.done, 10, what=f"{service} reply")
        return future.result()
