"""listener: subscribes to `joint_states` and `camera/image_raw`, decodes them, reports what arrived.

With parameter `count` > 0 it exits after that many joint states and images, printing one summary
line (JSON) on stdout: the smallest end-to-end check that DDS, messages and codecs work.
"""

from __future__ import annotations

import json

from rclpy.node import Node
from sensor_msgs.msg import Image, JointState

from lerobot_ros.codecs import image_to_rgb, joint_state_to_numpy
from lerobot_ros.nodes.talker import SO101_JOINTS
from lerobot_ros.ros.entry import run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import SENSOR_QOS
from lerobot_ros.ros.smoke import ListenerConfig


class Listener(Node):
    params_class = ListenerConfig

    def __init__(self, **kwargs):
        super().__init__("listener", **kwargs)
        self.params = declare_params(self, ListenerConfig)
        self.joints: list = []
        self.image_shapes: list[tuple[int, ...]] = []
        self.create_subscription(JointState, "joint_states", self.on_joints, SENSOR_QOS)
        self.create_subscription(Image, "camera/image_raw", self.on_image, SENSOR_QOS)

    def on_joints(self, msg: JointState) -> None:
        self.joints.append(joint_state_to_numpy(msg, SO101_JOINTS))
        self.maybe_finish()

    def on_image(self, msg: Image) -> None:
        self.image_shapes.append(image_to_rgb(msg).shape)
        self.maybe_finish()

    def summary(self) -> dict:
        return {
            "joint_states": len(self.joints),
            "images": len(self.image_shapes),
            "image_shape": list(self.image_shapes[-1]) if self.image_shapes else None,
            "last_positions_rad": [round(float(v), 4) for v in self.joints[-1]] if self.joints else None,
        }

    @property
    def count(self) -> int:
        return self.params.values.count

    def maybe_finish(self) -> None:
        if self.count > 0 and len(self.joints) >= self.count and len(self.image_shapes) >= self.count:
            print(json.dumps(self.summary()), flush=True)
            raise SystemExit(0)


def main(args=None) -> None:
    run_node(Listener, args)


if __name__ == "__main__":
    main()
