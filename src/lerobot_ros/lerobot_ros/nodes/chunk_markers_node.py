"""chunk_markers_node: a policy's predicted chunk as rviz markers (rviz2 cannot show a JointTrajectory).

Subscribes `predicted_chunk` (trajectory_msgs/JointTrajectory; remap it to the policy's
`/policy/predicted_chunk`), runs the URDF's forward kinematics on every point and publishes `~/markers`
(visualization_msgs/MarkerArray, namespace "predicted_chunk"): the tip's path and points, fading with time,
and a ghost of the final pose. The geometry is lerobot_ros.viz.chunk_markers.

Parameters
  robot_description  URDF text; "" = take it from the latched `robot_description` topic (std_msgs/String,
                     transient local), as robot_state_publisher publishes it
  tip_link           link whose path is drawn (SO-101: gripper_frame_link, the gripper's tool frame)
  frame_id           frame of the markers ("" = the URDF's root link, e.g. base_link)
  joint_zero         mid_range (ROS 0 = middle of the URDF limits: the project's joint_states convention,
                     real SO-101 and MuJoCo twin) | urdf (positions are URDF joint values)
  ghost              draw the final pose's links
  line_width, sphere_size   marker sizes (m)
URDF joints the chunk lacks are held at their latest value on `joint_states` (sensor QoS), else at 0.
"""

from __future__ import annotations

from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from lerobot_ros.codecs import CodecError, joint_trajectory_to_chunk
from lerobot_ros.ros.entry import run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.robot_description import follow_robot_description
from lerobot_ros.viz import MarkerStyle, UrdfError, UrdfModel, chunk_markers, parse_urdf
from lerobot_ros.viz.config import ChunkMarkersConfig


class ChunkMarkersNode(Node):
    params_class = ChunkMarkersConfig

    def __init__(self, node_name: str = "chunk_markers", **kwargs):
        super().__init__(node_name, **kwargs)
        p = declare_params(self, ChunkMarkersConfig, on_change=self._on_params).values
        description, self.tip_link, self.frame_id, self.joint_zero = (
            p.robot_description,
            p.tip_link,
            p.frame_id,
            p.joint_zero,
        )
        self.style = MarkerStyle(line_width=p.line_width, sphere_size=p.sphere_size, ghost=p.ghost)
        self.model: UrdfModel | None = None
        self.hold: dict[str, float] = {}
        self.published = 0
        follow_robot_description(self, description, self._use_description)
        self.pub = self.create_publisher(MarkerArray, "~/markers", RELIABLE_QOS)
        self.create_subscription(JointTrajectory, "predicted_chunk", self.on_chunk, RELIABLE_QOS)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, SENSOR_QOS)

    def _on_params(self, new: ChunkMarkersConfig, changed: dict) -> None:
        """Marker looks and frame apply from the next chunk on."""
        self.frame_id = new.frame_id
        self.style = MarkerStyle(line_width=new.line_width, sphere_size=new.sphere_size, ghost=new.ghost)

    def _checked_model(self, text: str) -> UrdfModel:
        model = parse_urdf(text)
        if self.tip_link not in model.links:
            raise UrdfError(f"tip_link {self.tip_link!r} is not a link of the URDF (links: {', '.join(model.links)})")
        return model

    def _use_description(self, text: str) -> None:
        self.model = self._checked_model(text)
        self.get_logger().info(
            f"robot {self.model.name!r}: drawing {self.tip_link} in {self.frame_id or self.model.root}"
        )

    def on_joint_states(self, msg: JointState) -> None:
        self.hold.update(zip(msg.name, msg.position))

    def on_chunk(self, msg: JointTrajectory) -> None:
        if self.model is None:
            self.get_logger().warning(
                "predicted chunk before any robot_description: not drawn", throttle_duration_sec=5.0
            )
            return
        try:
            times_ns, positions = joint_trajectory_to_chunk(msg)
            markers = chunk_markers(
                self.model,
                self.tip_link,
                list(msg.joint_names),
                positions,
                times_ns * 1e-9,
                frame_id=self.frame_id,
                stamp=msg.header.stamp,
                hold=self.hold,
                joint_zero=self.joint_zero,
                style=self.style,
            )
        except (CodecError, ValueError) as exc:
            self.get_logger().warning(f"predicted chunk not drawn: {exc}", throttle_duration_sec=5.0)
            return
        self.pub.publish(markers)
        self.published += 1


def main(args=None) -> None:
    run_node(ChunkMarkersNode, args)


if __name__ == "__main__":
    main()
