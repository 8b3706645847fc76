"""motor_bus_node: a Feetech or Dynamixel bus of custom motors (id, model, name from parameters).

The lower level under robot_node, for arms LeRobot has no class for. Same topics, watchdog, limits,
torque service, diagnostics and reconnects as robot_node; `joint_states` also carries velocity (rad/s)
and, where the motors report it, current in amperes in the `effort` field.
Angles are radians, 0 at the middle of each motor's position limits (from `calibration_file`, a
LeRobot calibration JSON, or else from the motors' own Min/Max_Position_Limit and Homing_Offset).

Parameters: bus_type (feetech | dynamixel), port, motor_names, motor_ids, motor_models,
calibration_file, rate_hz, watchdog_s, torque_off_on_shutdown, frame_id.
"""

from __future__ import annotations

from sensor_msgs.msg import JointState

from lerobot_ros.codecs import numpy_to_joint_state
from lerobot_ros.hardware.bus_device import MotorBusDevice
from lerobot_ros.nodes.robot_node import RobotNode
from lerobot_ros.ros.entry import run_node


class MotorBusNode(RobotNode):
    node_name = "motor_bus_node"

    def device_factory(self, p, torque_off: bool):
        bus_type = p("bus_type", "feetech")
        names = list(p("motor_names", ["joint1"]))
        ids = list(p("motor_ids", [1]))
        models = list(p("motor_models", ["sts3215"]))
        calibration_file = p("calibration_file", "")
        self.device_label = f"{bus_type} bus"

        def factory():
            return MotorBusDevice(bus_type, self.port, names, ids, models, calibration_file)

        return factory

    def joint_state(self, positions, stamp_ns: int) -> JointState:
        extra = getattr(self.driver.device, "extra", {}) if self.driver.device is not None else {}
        velocity = [extra.get("velocity", {}).get(n, 0.0) for n in self.names]
        effort = extra.get("effort") or None
        if effort is not None:
            effort = [effort.get(n, 0.0) for n in self.names]
        return numpy_to_joint_state(self.names, positions, velocity, effort, stamp_ns=stamp_ns, frame_id=self.frame_id)


def main(args=None) -> None:
    run_node(MotorBusNode, args)


if __name__ == "__main__":
    main()
