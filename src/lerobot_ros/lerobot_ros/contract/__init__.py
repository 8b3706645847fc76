"""Layer 2: the topic contract — which ROS topic feeds which LeRobot feature, in which units, how aligned.

A contract is a YAML file (shipped ones: config/contracts/{so101,so101_sim,koch,metaworld,libero}.yaml;
schema reference: config/contracts/README.md)::

    version: 1                       # optional, default 1
    robot_type: so101_follower       # written to the dataset's info.json
    fps: 30                          # integer frame rate of the dataset / control loop
    description: free text
    task:                            # a plain string is the default task
      topic: /task                   # optional std_msgs/msg/String (or EpisodeStatus.task)
      metadata_key: task             # key in the bag's metadata custom_data
      default: "Pick the cube"
    episode_boundary:                # optional: split a bag where EpisodeStatus.episode_index changes
      topic: /sim/episode_status
    features:                        # LeRobot feature name -> topic settings ("action" is required)
      observation.state:
        topic: /follower/joint_states
        type: sensor_msgs/msg/JointState    # or Float64MultiArray, JointTrajectory, Image, CompressedImage
        qos: sensor                  # lerobot_ros.ros.qos name: sensor|reliable|latched|recording
        joints: [shoulder_pan, ...]  # select by joint name (JointState/JointTrajectory) in this order
        field: position              # JointState field
        slice: [0, 6]                # or indices: [...]: select by position (all vector types)
        names: [shoulder_pan.pos, ...]   # LeRobot value names (default <joint>.pos)
        transforms:                  # ROS units -> LeRobot units, applied in order, inverted for encode
          - rad2deg                  # also deg2rad, {scale: k}, {offset: c}, {clip: [lo, hi]}
          - {linear: {from: [-1.0, 1.0], to: [0, 100]}, only: [gripper]}
        timeline: header             # header stamp, or receive (log time; required for headerless types)
        alignment: {policy: interpolate, tolerance_ms: 100}   # hold|asof|nearest|interpolate
      observation.images.front:
        topic: /front/image_raw
        type: sensor_msgs/msg/Image
        shape: [480, 640, 3]         # dataset image shape (after transforms)
        transforms: [{crop: [0, 0, 480, 640]}, {resize: [480, 640]}]
        alignment: {policy: nearest, tolerance_ms: 50}        # never interpolate

Public API: `load_contract(path_or_short_name) -> Contract`; `Contract.fps`, `.robot_type`, `.features`,
`.observation_features`, `.action_feature`, `.task`, `.lerobot_features()`; per feature `decode(msg)`
(ROS -> LeRobot units) and `encode(values, stamp_ns)` (LeRobot units -> rclpy message).
"""

from lerobot_ros.contract.errors import ContractError
from lerobot_ros.contract.loader import contract_dirs, load_contract, parse_contract, shipped_contracts
from lerobot_ros.contract.messages import message_class, normalize_type
from lerobot_ros.contract.model import Alignment, Contract, EpisodeBoundary, Feature, TaskSource

__all__ = [
    "Alignment",
    "Contract",
    "ContractError",
    "EpisodeBoundary",
    "Feature",
    "TaskSource",
    "contract_dirs",
    "load_contract",
    "message_class",
    "normalize_type",
    "parse_contract",
    "shipped_contracts",
]
