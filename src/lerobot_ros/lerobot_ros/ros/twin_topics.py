"""The topics a composed twin adds to sim_bridge_node's: one driver's topics per part (each arm of the bimanual
twin: `<part>/joint_states` with the arm's own names, `<part>/commands`) and a mobile base's (`cmd_vel` in, `odom`
out, odom -> base_link as REP 105 names them). A twin with neither adds nothing."""

from __future__ import annotations

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import CodecError, float64_multi_array_to_numpy, numpy_to_joint_state
from lerobot_ros.codecs.odometry import fill_planar_odometry
from lerobot_ros.ros.qos import RELIABLE_QOS
from lerobot_ros.sim.bridge import SimBridge
from lerobot_ros.sim.stepping import Frame


class TwinTopics:
    """Parts and base of `bridge`'s twin on `node`; `publish(frame)` after the bridge's own topics."""

    def __init__(self, node, bridge: SimBridge, qos):
        self.node, self.bridge = node, bridge
        self.part_pubs = {part: node.create_publisher(JointState, f"{part}/joint_states", qos) for part in bridge.parts}
        for part in bridge.parts:
            node.create_subscription(
                Float64MultiArray, f"{part}/commands", lambda m, part=part: self.on_part_commands(part, m), RELIABLE_QOS
            )
        self.odom_pub = node.create_publisher(Odometry, "odom", qos) if bridge.sim.has_base else None
        self._odom = Odometry()
        self._odom.header.frame_id, self._odom.child_frame_id = "odom", "base_link"
        if bridge.sim.has_base:
            node.create_subscription(Twist, "cmd_vel", self.on_cmd_vel, RELIABLE_QOS)

    def publish(self, frame: Frame) -> None:
        obs, stamp = frame.observation, frame.stamp_ns
        for part, (index, names) in self.bridge.parts.items():
            self.part_pubs[part].publish(numpy_to_joint_state(names, obs.state[index], stamp_ns=stamp))
        if obs.base is not None and self.odom_pub is not None:
            b = obs.base
            self.odom_pub.publish(fill_planar_odometry(self._odom, stamp, b.x, b.y, b.yaw, b.vx, b.vy, b.wz))

    def on_part_commands(self, part: str, msg: Float64MultiArray) -> None:
        try:
            values = float64_multi_array_to_numpy(msg).reshape(-1)
        except CodecError as exc:
            self.bridge.malformed(f"{part}/commands: {exc}")
            return
        self.bridge.part_command(part, values)

    def on_cmd_vel(self, msg: Twist) -> None:
        refused = self.bridge.sim.drive(msg.linear.x, msg.linear.y, msg.angular.z)
        if refused:
            self.node.get_logger().warning(f"cmd_vel refused ({refused}): the base stops", throttle_duration_sec=1.0)
