"""Emulated Feetech (SCS/STS) and Dynamixel (Protocol 2.0) servo chains on pseudo-terminals.

The real SDKs (`scservo_sdk`, `dynamixel_sdk`), through LeRobot's motor buses, open the pty by path and
talk to the emulator unchanged. Control tables come from LeRobot's own tables, so addresses and sizes
are exactly what LeRobot reads and writes.
"""

from lerobot_ros.hardware.virtual.arms import ARM_PRESETS, VirtualArm, start_virtual_arm
from lerobot_ros.hardware.virtual.bus import Faults, VirtualBus
from lerobot_ros.hardware.virtual.servo import ServoModel, VirtualServo, servo_model

__all__ = [
    "ARM_PRESETS",
    "Faults",
    "ServoModel",
    "VirtualArm",
    "VirtualBus",
    "VirtualServo",
    "servo_model",
    "start_virtual_arm",
]
