"""Typed contract objects: a Contract holds Features; each Feature decodes ROS messages into LeRobot
values and encodes LeRobot values back into ROS messages (for publishing actions and for export)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any

import numpy as np

from lerobot_ros.codecs import (
    CodecError,
    chunk_to_joint_trajectory,
    compressed_from_cdr,
    compressed_to_numpy,
    float64_multi_array_to_numpy,
    image_from_cdr,
    image_to_rgb,
    joint_state_from_cdr,
    joint_state_to_numpy,
    joint_state_values,
    joint_trajectory_to_chunk,
    numpy_to_compressed,
    numpy_to_float64_multi_array,
    numpy_to_image,
    numpy_to_joint_state,
    time_to_ns,
)
from lerobot_ros.contract import messages as M
from lerobot_ros.contract.errors import ContractError

# message type -> reader of its serialized bytes (Feature.read): the per-frame observations of a controller
_RAW_READERS = {M.JOINT_STATE: joint_state_from_cdr, M.IMAGE: image_from_cdr, M.COMPRESSED: compressed_from_cdr}

if TYPE_CHECKING:
    from lerobot_ros.contract.transforms import ElementwisePath

ALIGNMENT_POLICIES = ("hold", "asof", "nearest", "interpolate")
TIMELINES = ("header", "receive")


@dataclass(frozen=True)
class Alignment:
    """How a stream's samples are placed on the frame grid (see lerobot_ros.resample)."""

    policy: str = "hold"
    tolerance_ns: int | None = None  # None: no limit (not allowed for asof)

    def to_dict(self) -> dict:
        tol = None if self.tolerance_ns is None else self.tolerance_ns / 1e6
        return {"policy": self.policy, "tolerance_ms": tol}


@dataclass
class Feature:
    """One LeRobot feature fed by one topic."""

    name: str
    topic: str
    msg_type: str
    kind: str  # "vector", "image" or "flag" (std_msgs/Bool)
    qos: str
    timeline: str
    alignment: Alignment
    names: list[str] = dc_field(default_factory=list)  # vector: LeRobot value names
    shape: tuple[int, ...] = ()
    joints: list[str] | None = None  # JointState / JointTrajectory selector (ROS joint names)
    field: str = "position"  # JointState field
    indices: list[int] | None = None  # Float64MultiArray / JointState selector by position
    transforms: list[Any] = dc_field(default_factory=list)  # numeric (vector) or image transforms, in order
    fps: float = 30.0

    # ---- ROS -> LeRobot -------------------------------------------------------------------------
    @property
    def is_image(self) -> bool:
        return self.kind == "image"

    @property
    def is_flag(self) -> bool:
        return self.kind == "flag"

    def frame_value(self, value):
        """A resampled value as the dataset stores it: bool (1,) for a flag, the value itself otherwise."""
        return np.asarray(value) >= 0.5 if self.is_flag else value

    @property
    def has_header(self) -> bool:
        return M.FEATURE_TYPES[self.msg_type][1]

    def stamp_ns(self, msg, receive_ns: int) -> int:
        """The time of a message on this feature's timeline (header stamp or receive/log time)."""
        if self.timeline == "header":
            return time_to_ns(msg.header.stamp)
        return int(receive_ns)

    def ros_values(self, msg) -> np.ndarray:
        """The selected raw values of a vector message, in ROS units (float64)."""
        try:
            if self.msg_type == M.JOINT_STATE:
                if self.joints is not None:
                    return joint_state_to_numpy(msg, self.joints, self.field)
                values = np.asarray(getattr(msg, self.field), dtype=np.float64)
            elif self.msg_type == M.FLOAT64_ARRAY:
                values = float64_multi_array_to_numpy(msg).reshape(-1)
            elif self.msg_type == M.BOOL:
                return np.array([1.0 if msg.data else 0.0])
            elif self.msg_type == M.TRAJECTORY:
                _times, chunk = joint_trajectory_to_chunk(msg, self.joints)
                if chunk.shape[0] == 0:
                    raise ContractError(f"JointTrajectory on {self.topic} has no points")
                values = chunk[0]
                if self.joints is not None:
                    return values
            else:
                raise ContractError(f"{self.name} is an image feature, not a vector")
        except CodecError as exc:
            raise ContractError(f"{self.topic} ({self.name}): {exc}") from None
        if self.indices is not None:
            if values.size <= max(self.indices):
                raise ContractError(
                    f"{self.topic} ({self.name}): message has {values.size} values, the contract selects index {max(self.indices)}"
                )
            return values[self.indices]
        if values.size != len(self.names):
            raise ContractError(
                f"{self.topic} ({self.name}): message has {values.size} values, expected {len(self.names)}"
            )
        return values

    def to_lerobot(self, ros_values: np.ndarray) -> np.ndarray:
        """Apply the unit transforms: ROS units -> LeRobot units (float32)."""
        values = np.asarray(ros_values, dtype=np.float64)
        for t in self.transforms:
            values = t.forward(values)
        return values.astype(np.float32)

    def to_ros(self, values) -> np.ndarray:
        """Undo the unit transforms: LeRobot units -> ROS units (float64); works on (D,) and (T, D)."""
        out = np.asarray(values, dtype=np.float64)
        for t in reversed(self.transforms):
            out = t.inverse(out)
        return out

    def to_ros_values(self, values) -> list[float]:
        """`to_ros` of one (D,) vector as a list of floats: the action of a tick (see `elementwise`)."""
        flat = values.tolist() if isinstance(values, np.ndarray) and values.ndim == 1 else None
        if flat is None:
            flat = np.asarray(values, dtype=np.float64).reshape(-1).tolist()
        path = self.elementwise
        if path is None or len(flat) != path.width:
            return self.to_ros(np.asarray(flat, dtype=np.float64)).tolist()
        return path.inverse(flat)

    @property
    def resizes(self) -> bool:
        """A resize transform fixes the output size, so input sizes may change along a bag."""
        from lerobot_ros.contract.transforms import Resize

        return any(isinstance(t, Resize) for t in self.transforms)

    def raw_image(self, msg) -> np.ndarray:
        """(H, W, 3) uint8 RGB of an image message before crop/resize (may view the message buffer)."""
        try:
            if self.msg_type == M.COMPRESSED:
                return compressed_to_numpy(msg, "rgb8")
            return image_to_rgb(msg)
        except CodecError as exc:
            raise ContractError(f"{self.topic} ({self.name}): {exc}") from None

    def finish_image(self, img: np.ndarray) -> np.ndarray:
        """Apply crop/resize and check the contract's shape; the result owns its memory."""
        for t in self.transforms:
            img = t.apply(img)
        if img.shape != self.shape:
            raise ContractError(
                f"{self.topic} ({self.name}): image is {img.shape[0]}x{img.shape[1]}, the contract expects "
                f"{self.shape[0]}x{self.shape[1]}; fix `shape` or add a `resize` transform"
            )
        if img.flags.owndata and img.flags.c_contiguous:
            return img
        return np.array(img, dtype=np.uint8, order="C", copy=True)

    def decode_image(self, msg) -> np.ndarray:
        """(H, W, 3) uint8 RGB after crop/resize, owning its memory; checks the contract's shape."""
        return self.finish_image(self.raw_image(msg))

    @property
    def reads_raw(self) -> bool:
        """A controller may subscribe to this feature's serialized bytes (`raw=True`) and `read` them: a JointState
        read from CDR skips rclpy's message object on the per-tick path, an Image (or CompressedImage) its object
        and two copies of the pixels (codecs.cdr)."""
        return self.msg_type in _RAW_READERS

    def read(self, msg):
        """The message a `reads_raw` subscription's bytes hold (a duck-typed view); any other message as it came.
        CodecError when the bytes are malformed."""
        if not isinstance(msg, bytes):
            return msg
        if not self.reads_raw:
            raise ContractError(f"{self.topic} ({self.name}): {self.msg_type} is not read from serialized bytes")
        return _RAW_READERS[self.msg_type](msg)

    def decode(self, msg) -> np.ndarray:
        """ROS message -> LeRobot value: float32 (D,) vector or uint8 (H, W, 3) image."""
        if self.is_image:
            return self.decode_image(msg)
        path = self.elementwise
        if path is not None and self.msg_type == M.JOINT_STATE and self.joints is not None:
            try:  # a robot's state, every tick: plain floats (see `elementwise`)
                values = joint_state_values(msg, self.joints, self.field)
            except CodecError as exc:
                raise ContractError(f"{self.topic} ({self.name}): {exc}") from None
            return np.array(path.forward(values), dtype=np.float32)
        return self.to_lerobot(self.ros_values(msg))

    @functools.cached_property
    def elementwise(self) -> ElementwisePath | None:
        """This vector feature's transforms on plain floats, for one (D,) value per call (None: not a vector)."""
        from lerobot_ros.contract.transforms import ElementwisePath

        if self.kind != "vector":
            return None
        try:
            return ElementwisePath(self.transforms, len(self.names))
        except (TypeError, ValueError):
            return None

    # ---- LeRobot -> ROS -------------------------------------------------------------------------
    def encode(self, values, stamp_ns: int | None = None, frame_id: str = ""):
        """LeRobot value -> rclpy message on this feature's type.

        Vectors: (D,) values; a JointTrajectory feature also takes a (T, D) chunk (points 1/fps apart).
        Images: (H, W, 3) uint8 RGB (raw rgb8, or jpeg for CompressedImage).
        """
        if self.is_image:
            pixels = np.asarray(values)
            if self.msg_type == M.COMPRESSED:
                return numpy_to_compressed(pixels, "rgb8", "jpeg", stamp_ns=stamp_ns, frame_id=frame_id)
            return numpy_to_image(pixels, "rgb8", stamp_ns=stamp_ns, frame_id=frame_id)
        if self.is_flag:
            from std_msgs.msg import Bool

            return Bool(data=bool(np.asarray(values, dtype=np.float64).reshape(-1)[0] >= 0.5))
        ros = self.to_ros(values)
        width = len(self.names)
        if ros.shape[-1] != width:
            raise ContractError(f"{self.name} needs {width} values, got shape {ros.shape}")
        joint_names = self.joints or [n.removesuffix(".pos") for n in self.names]
        if self.msg_type == M.TRAJECTORY:
            return chunk_to_joint_trajectory(
                joint_names, ros.reshape(-1, width), self.fps, stamp_ns=stamp_ns, frame_id=frame_id
            )
        if ros.ndim != 1:
            raise ContractError(f"{self.name} takes one ({width},) vector, got shape {ros.shape}")
        if self.msg_type == M.JOINT_STATE:
            return numpy_to_joint_state(joint_names, **{self.field: ros}, stamp_ns=stamp_ns, frame_id=frame_id)
        return numpy_to_float64_multi_array(ros)

    def lerobot_feature(self, use_video: bool = True) -> dict:
        """This feature's entry in the `features` dict of `LeRobotDataset.create` (as lerobot-record writes it)."""
        if self.is_image:
            return {
                "dtype": "video" if use_video else "image",
                "shape": tuple(self.shape),
                "names": ["height", "width", "channels"],
                "info": {"is_depth_map": False},
            }
        if self.is_flag:  # as LeRobot's DAgger rollout writes `intervention`
            return {"dtype": "bool", "shape": (1,), "names": None}
        return {"dtype": "float32", "shape": (len(self.names),), "names": list(self.names)}


@dataclass
class TaskSource:
    """Where an episode's task string comes from, in order: command line, topic, bag metadata, default."""

    topic: str | None = None
    msg_type: str = M.STRING
    metadata_key: str = "task"
    default: str | None = None


@dataclass
class EpisodeBoundary:
    """A topic whose messages split one bag into several episodes (EpisodeStatus: a new episode_index)."""

    topic: str
    msg_type: str = M.EPISODE_STATUS


@dataclass
class Contract:
    """A validated contract: robot_type, fps, features (action first, then observations), task source."""

    robot_type: str
    fps: int
    features: dict[str, Feature]
    task: TaskSource = dc_field(default_factory=TaskSource)
    episode_boundary: EpisodeBoundary | None = None
    description: str = ""
    source: str | None = None  # path it was loaded from
    raw: dict = dc_field(default_factory=dict, repr=False)  # the YAML mapping, for storing with a dataset

    @property
    def period_ns(self) -> int:
        return int(round(1e9 / self.fps))

    @property
    def action_feature(self) -> Feature:
        return self.features["action"]

    @property
    def observation_features(self) -> dict[str, Feature]:
        return {k: f for k, f in self.features.items() if k != "action"}

    @property
    def image_features(self) -> dict[str, Feature]:
        return {k: f for k, f in self.features.items() if f.is_image}

    def feature_by_topic(self, topic: str) -> list[Feature]:
        return [f for f in self.features.values() if f.topic == topic]

    @property
    def topics(self) -> dict[str, str]:
        """topic -> message type of every topic the contract reads (features, task, episode boundary)."""
        out = {f.topic: f.msg_type for f in self.features.values()}
        if self.task.topic:
            out[self.task.topic] = self.task.msg_type
        if self.episode_boundary:
            out[self.episode_boundary.topic] = self.episode_boundary.msg_type
        return out

    def lerobot_features(self, use_video: bool = True) -> dict[str, dict]:
        """The `features` argument of `LeRobotDataset.create` (same layout as lerobot-record's)."""
        return {name: f.lerobot_feature(use_video) for name, f in self.features.items()}
