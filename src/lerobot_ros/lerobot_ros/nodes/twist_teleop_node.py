"""twist_teleop: drive a mobile base from this terminal's keys or a gamepad, publishing geometry_msgs/Twist on
`cmd_vel` at `fps` (remap it: `-r cmd_vel:=/lekiwi/teleop/cmd_vel` to record LeKiwi's base as part of its
action, `/base/cmd_vel` to drive base_node directly).

Keys: teleop_twist_keyboard's layout (i forward, `,` back, j / l turn, Shift strafes; k or space stop; q/z,
w/x, e/c speeds), read without an X display; a key holds its motion for `key_hold_s` after its last
auto-repeat. `input:=joy`: sensor_msgs/Joy on `joy_topic` (ROS's joy driver), left stick forward/left, right
stick turns, the left bumper held for any motion (`deadman`); a pad silent for `input_timeout_s` stops the base.
When nothing is pressed the node publishes a zero twist, so the base stands still rather than timing out.
End of input (Ctrl-D) or Ctrl-C ends it. The mappings are lerobot_ros.teleop.base_inputs.

Parameters: `TwistTeleopConfig` (teleop/config.py).
"""

from __future__ import annotations

import sys
import threading
import time

from geometry_msgs.msg import Twist
from rclpy.node import Node
from rclpy.task import Future
from sensor_msgs.msg import Joy

from lerobot_ros.ros.entry import run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.teleop.base_inputs import KEY_HELP, STILL, JoyTwist, KeyTwist, Twist3
from lerobot_ros.teleop.config import TwistTeleopConfig
from lerobot_ros.teleop.inputs import InputWatch
from lerobot_ros.teleop.terminal import TerminalKeys


class TwistTeleop(Node):
    params_class = TwistTeleopConfig

    def __init__(self, **kwargs):
        super().__init__(kwargs.pop("node_name", "twist_teleop"), **kwargs)
        self.params = declare_params(self, TwistTeleopConfig, on_change=self._on_params)
        p = self.params.values
        self.keys_twist = KeyTwist(speed=p.speed, turn=p.turn, hold_s=p.key_hold_s)
        self.joy = self._joy_mapping(p)
        self.watch = InputWatch(p.input_timeout_s)
        self._joy_twist: Twist3 = STILL
        self._lock = threading.Lock()
        self.pub = self.create_publisher(Twist, "cmd_vel", RELIABLE_QOS)
        self.exit_future = Future()  # run_node spins until it is done (the keyboard's end of input)
        self.keys: TerminalKeys | None = None
        if p.input == "joy":
            self.create_subscription(Joy, p.joy_topic, self.on_joy, SENSOR_QOS)
            print(
                f"reading {p.joy_topic}: left stick drives, right stick turns, hold button {p.deadman}", file=sys.stderr
            )
        else:
            self.keys = TerminalKeys().open()
            threading.Thread(target=self._read_keys, name="twist-keys", daemon=True).start()
            print(KEY_HELP, file=sys.stderr, flush=True)
        self.create_timer(1.0 / p.fps, self.on_tick)

    @staticmethod
    def _joy_mapping(p: TwistTeleopConfig) -> JoyTwist:
        return JoyTwist(p.axis_x, p.axis_y, p.axis_yaw, p.deadman, speed=p.speed, turn=p.turn)

    def _on_params(self, new: TwistTeleopConfig, changed: dict) -> None:
        with self._lock:
            self.keys_twist.speed, self.keys_twist.turn, self.keys_twist.hold_s = new.speed, new.turn, new.key_hold_s
            self.joy = self._joy_mapping(new)
            self.watch.timeout_s = new.input_timeout_s

    def _read_keys(self) -> None:
        assert self.keys is not None
        while True:
            try:
                key = self.keys.read_key()
            except OSError:
                key = b""
            if not key:
                break
            with self._lock:
                before = (self.keys_twist.speed, self.keys_twist.turn)
                known = self.keys_twist.press(key, time.monotonic())
                after = (self.keys_twist.speed, self.keys_twist.turn)
            if known and after != before:
                print(f"speed {after[0]:.3g} m/s, turn {after[1]:.3g} rad/s", file=sys.stderr, flush=True)
        if not self.exit_future.done():
            self.exit_future.set_result(0)

    def on_joy(self, msg: Joy) -> None:
        with self._lock:
            self._joy_twist = self.joy.twist(msg.axes, msg.buttons)
            self.watch.seen(time.monotonic())

    def current(self, now: float) -> Twist3:
        with self._lock:
            if self.keys is not None:
                return self.keys_twist.twist(now)
            return STILL if self.watch.stale(now) else self._joy_twist

    def on_tick(self) -> None:
        x, y, yaw = self.current(time.monotonic())
        msg = Twist()
        msg.linear.x, msg.linear.y, msg.angular.z = x, y, yaw
        self.pub.publish(msg)

    def close(self) -> None:
        if self.keys is not None:
            self.keys.close()


def main(args=None) -> None:
    run_node(TwistTeleop, args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
