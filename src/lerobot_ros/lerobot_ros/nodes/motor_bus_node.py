"""motor_bus_node: a Feetech or Dynamixel bus of custom motors (id, model, name from parameters).

The lower level under robot_node, for arms LeRobot has no class for. Same topics, watchdog, limits,
torque service, diagnostics and reconnects as robot_node; `joint_states` also carries velocity (rad/s)
and, where the motors report it, current in amperes in the `effort` field.
Angles are radians, 0 at the middle of each motor's position limits (from `calibration_file`, a
LeRobot calibration JSON, or else from the motors' own Min/Max_Position_Limit and Homing_Offset).

Parameters: `MotorBusConfig` (hardware/config.py; the loop, watchdog and shutdown ones are robot_node's, live the same way).
"""

from __future__ import annotations

from sensor_msgs.msg import JointState

from lerobot_ros.codecs import numpy_to_joint_state
from lerobot_ros.hardware.bus_device import MotorBusDevice
from lerobot_ros.hardware.config import MotorBusConfig
from lerobot_ros.nodes.robot_node import RobotNode
from lerobot_ros.ros.entry import run_node


class MotorBusNode(RobotNode):
    node_name = "motor_bus_node"
    params_class = MotorBusConfig

    def bus_port(self, p) -> str:
        return p.port

    def device_factory(self):
        p = self.params.values
        self.device_label = f"{p.bus_type} bus"

        def factory():
            return MotorBusDevice(
                p.bus_type,
                self.params.values.port,
                list(p.motor_names),
                list(p.motor_ids),
                list(p.motor_models),
                p.calibration_file,
            )

        return factory

    def joint_state(self, positions, stamp_ns: int) -> JointState:
        extra = getattr(self.arm.driver.device, "extra", {}) if self.arm.driver.device is not None else {}
        velocity = [extra.get("velocity", {}).get(n, 0.0) for n in self.arm.names]
        effort = extra.get("effort") or None
        if effort is not None:
            effort = [effort.get(n, 0.0) for n in self.arm.names]
        return numpy_to_joint_state(
            self.arm.names, positions, velocity, effort, stamp_ns=stamp_ns, frame_id=self.frame_id
        )


def main(args=None) -> None:
    run_node(MotorBusNode, args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
