"""`RosContractTeleop`: LeRobot's Teleoperator interface over a leader that publishes on ROS.

`get_action()` returns the newest leader message as the contract's action (`shoulder_pan.pos` ... in the
contract's units, e.g. degrees and a 0..100 gripper for the SO-101), when it is younger than `max_age_s`;
otherwise it raises naming the topic and its age, so a leader that stopped never keeps driving the follower
with its last pose. A joint state is read by joint name (order and extra joints do not matter).
"""

from __future__ import annotations

import re

import numpy as np
from lerobot.teleoperators.teleoperator import Teleoperator

from lerobot_ros.codecs import CodecError, joint_state_to_numpy
from lerobot_ros.contract import ContractError, load_contract
from lerobot_ros.plugins.teleop.config_ros_contract_teleop import TELEOP_TYPE, RosContractTeleopConfig
from lerobot_ros.plugins.topics import Stream, TopicCache, TopicError, non_finite

LEADER = "leader"


class RosContractTeleop(Teleoperator):
    """A leader on ROS topics giving the action of the robot a contract describes."""

    config_class = RosContractTeleopConfig
    name = TELEOP_TYPE

    def __init__(self, config: RosContractTeleopConfig):
        super().__init__(config)
        self.config = config
        self.contract = load_contract(config.contract)
        self.feature = self.contract.action_feature
        self.names = list(self.feature.names)
        self.joints = list(self.feature.joints or [n.removesuffix(".pos") for n in self.names])
        node = "lerobot_teleop_" + re.sub(r"[^A-Za-z0-9_]", "_", config.id or TELEOP_TYPE)
        self._cache = TopicCache(
            [Stream(LEADER, config.topic, config.msg_type, config.qos)],
            node_name=node,
            domain_id=config.domain_id,
            what=f"teleop {config.topic}",
            hint="start the leader's node (teleop_node) first, or check --teleop.topic",
        )

    @property
    def action_features(self) -> dict:
        return dict.fromkeys(self.names, float)

    @property
    def feedback_features(self) -> dict:
        return {}

    @property
    def is_connected(self) -> bool:
        return self._cache.is_open

    @property
    def is_calibrated(self) -> bool:
        return True  # the leader's own node holds its calibration

    def connect(self, calibrate: bool = True) -> None:
        self._cache.open(self.config.connect_timeout_s)

    def calibrate(self) -> None:
        pass

    def configure(self) -> None:
        pass

    def ros_values(self, msg) -> np.ndarray:
        """The leader's message in ROS units (radians), in the action's order."""
        try:
            if self.config.msg_type.endswith("/JointState"):
                return joint_state_to_numpy(msg, self.joints, "position")
            return self.feature.ros_values(msg)
        except (CodecError, ContractError) as exc:
            why = str(exc).removeprefix(f"{self.feature.topic} ({self.feature.name}): ")  # the follower's topic
            raise TopicError(f"{self.config.topic}: {why}") from None

    def get_action(self) -> dict[str, float]:
        msg, _age = self._cache.newest(LEADER, self.config.max_age_s)
        return self.action_from(msg)

    def action_from(self, msg) -> dict[str, float]:
        """One leader message as the contract's action in LeRobot units; TopicError for NaN or missing joints."""
        values = self.feature.to_lerobot(self.ros_values(msg))
        bad = non_finite(self.names, values)
        if bad:
            raise TopicError(f"{self.config.topic}: non-finite values for {', '.join(bad)}; is the leader healthy?")
        return {n: float(v) for n, v in zip(self.names, values, strict=True)}

    def send_feedback(self, feedback: dict) -> None:
        pass  # a ROS leader takes no force feedback through this plugin

    def disconnect(self) -> None:
        self._cache.close()
