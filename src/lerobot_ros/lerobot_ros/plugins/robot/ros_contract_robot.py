"""`RosContractRobot`: LeRobot's Robot interface over a contract's topics, for LeRobot's CLIs.

Features carry LeRobot's names and units, as `lerobot-ros convert` writes them from the same contract: each
name of `observation.state` (`shoulder_pan.pos` ... in the contract's units) is a float, each
`observation.images.<key>` an `(H, W, 3)` image under `<key>`; the action is the contract's action names.
`get_observation()` returns the newest message of each topic when it is younger than `max_age_s`, else raises
naming the stale topic (never zeros, never an old value passed off as new). `send_action()` publishes and
returns what was sent; it takes floats or 0-d tensors (lerobot-replay sends those) and refuses NaN.
"""

from __future__ import annotations

import re
from functools import cached_property

import numpy as np
from lerobot.robots.robot import Robot

from lerobot_ros.contract import Contract, ContractError, load_contract
from lerobot_ros.plugins.robot.config_ros_contract_robot import ROBOT_TYPE, RosContractRobotConfig
from lerobot_ros.plugins.topics import ContractTopics, TopicError

STATE = "observation.state"
IMAGE_PREFIX = "observation.images."
SINGLE_IMAGE = "observation.image"  # LeRobot's sim envs' one camera (Meta-World): camera key "image"


def camera_key(feature_name: str) -> str:
    """The key of an image feature in the robot's observation (and in `robot.cameras`): `observation.images.front`
    -> `front`, `observation.image` -> `image` (lerobot-record then writes it as `observation.images.image`)."""
    return "image" if feature_name == SINGLE_IMAGE else feature_name.removeprefix(IMAGE_PREFIX)


def plugin_contract(path_or_name: str) -> Contract:
    """The contract, checked for what the LeRobot interface can express: one `observation.state` vector plus
    images (LeRobot's CLIs fold every float observation into `observation.state`)."""
    contract = load_contract(path_or_name)
    for name, feature in contract.observation_features.items():
        if feature.is_image:
            if not name.startswith(IMAGE_PREFIX) and name != SINGLE_IMAGE:
                raise ContractError(
                    f"image feature {name!r} must be named {IMAGE_PREFIX}<camera> (or {SINGLE_IMAGE}) for LeRobot's CLIs"
                )
        elif name != STATE:
            raise ContractError(
                f"{name!r}: the {ROBOT_TYPE} robot maps {STATE} and {IMAGE_PREFIX}* (LeRobot folds every float "
                "observation into observation.state); rename or drop it in the contract"
            )
        if "/" in camera_key(name):
            raise ContractError(f"{name!r}: LeRobot feature keys may not contain '/'")
    return contract


class ContractCamera:
    """One image topic of the contract, shaped like a LeRobot camera (`read`, `async_read`, `read_latest`) so
    `robot.cameras` says how many image streams there are (lerobot-record sizes its image writers by it)."""

    def __init__(self, topics: ContractTopics, feature_name: str, max_age_s: float):
        self._topics, self._name, self._max_age_s = topics, feature_name, max_age_s
        shape = topics.contract.features[feature_name].shape
        self.height, self.width = int(shape[0]), int(shape[1])
        self.fps = topics.contract.fps

    @property
    def is_connected(self) -> bool:
        return self._topics.is_open

    def read(self) -> np.ndarray:
        return self._topics.decode(self._name, self._max_age_s)

    def async_read(self, timeout_ms: float = 200) -> np.ndarray:
        return self._topics.decode(self._name, max(self._max_age_s, timeout_ms / 1000.0))

    def read_latest(self, max_age_ms: int = 500) -> np.ndarray:
        return self._topics.decode(self._name, max_age_ms / 1000.0)


class RosContractRobot(Robot):
    """A robot whose state, images and commands are ROS 2 topics named by a contract."""

    config_class = RosContractRobotConfig
    name = ROBOT_TYPE

    def __init__(self, config: RosContractRobotConfig):
        super().__init__(config)
        self.config = config
        self.contract = plugin_contract(config.contract)
        # the dataset's robot_type (lerobot-record writes robot.name), as lerobot-ros convert writes it
        self.name = self.robot_type = self.contract.robot_type
        node_name = "lerobot_" + re.sub(r"[^A-Za-z0-9_]", "_", config.id or ROBOT_TYPE)
        self.topics = ContractTopics(self.contract, node_name=node_name, domain_id=config.domain_id)
        self.cameras = {
            camera_key(name): ContractCamera(self.topics, name, config.max_age_s)
            for name in self.contract.image_features
        }
        if config.check_on_create:
            self.topics.open(config.connect_timeout_s)

    @cached_property
    def _state_names(self) -> list[str]:
        feature = self.contract.features.get(STATE)
        return list(feature.names) if feature is not None else []

    @cached_property
    def _action_names(self) -> list[str]:
        return list(self.contract.action_feature.names)

    @property
    def observation_features(self) -> dict:
        features: dict = dict.fromkeys(self._state_names, float)
        for name, feature in self.contract.image_features.items():
            features[camera_key(name)] = tuple(int(x) for x in feature.shape)
        return features

    @property
    def action_features(self) -> dict:
        return dict.fromkeys(self._action_names, float)

    @property
    def is_connected(self) -> bool:
        return self.topics.is_open

    @property
    def is_calibrated(self) -> bool:
        return True  # the robot's own driver node holds the calibration

    def connect(self, calibrate: bool = True) -> None:
        self.topics.open(self.config.connect_timeout_s)

    def calibrate(self) -> None:
        pass

    def configure(self) -> None:
        pass

    def get_observation(self) -> dict:
        if not self.topics.is_open:
            raise TopicError(f"{self} is not connected: call connect() first")
        obs: dict = {}
        if self._state_names:
            state = self.topics.decode(STATE, self.config.max_age_s)
            obs.update(zip(self._state_names, (float(v) for v in state), strict=True))
        for name in self.contract.image_features:
            obs[camera_key(name)] = self.topics.decode(name, self.config.max_age_s)
        return obs

    def send_action(self, action: dict) -> dict:
        missing = [n for n in self._action_names if n not in action]
        if missing:
            raise ValueError(f"action lacks {', '.join(missing)} (the contract's action is {self._action_names})")
        values = np.array([float(action[n]) for n in self._action_names], dtype=np.float64)
        sent = self.topics.publish_action(values)
        return {n: float(v) for n, v in zip(self._action_names, sent, strict=True)}

    def disconnect(self) -> None:
        self.topics.close()
