"""Emulated SO-100/SO-101 (Feetech STS3215) and Koch (Dynamixel XL330/XL430) arms with their calibration.

A virtual arm is a `VirtualBus` whose servos already hold a calibration (homing offsets, position
limits) that matches a LeRobot calibration file written beside it, so LeRobot connects without the
interactive calibration step. Joint angles follow the project's ROS convention: radians, 0 at the
middle of the calibrated range.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from lerobot_ros.conventions.joints import ARM_JOINTS
from lerobot_ros.hardware.virtual.bus import VirtualBus
from lerobot_ros.hardware.virtual.servo import VirtualServo

MOTOR_NAMES = ARM_JOINTS  # every preset below has these six motors, in this bus order

# Calibrated ranges (Present_Position units, after homing) per joint, and homing offsets per role:
# leader and follower differ, as two real arms do, so tests exercise the unit conversions.
_SO_RANGES = [(1000, 3100), (900, 3200), (850, 3050), (870, 3200), (0, 4095), (2000, 3500)]
_KOCH_RANGES = [(0, 4095), (1000, 3100), (950, 3150), (900, 3200), (0, 4095), (1900, 3000)]


@dataclass(frozen=True)
class ArmPreset:
    """A LeRobot arm: servo models per joint, LeRobot type names, calibration ranges and offsets."""

    models: dict[str, tuple[str, ...]]  # role -> model per joint
    lerobot_types: dict[str, str]  # role -> LeRobot robot/teleoperator type
    ranges: list[tuple[int, int]]
    offsets: dict[str, tuple[int, ...]]
    ids: dict[str, tuple[int, ...]] | None = None  # role -> bus id per joint (default 1..6)
    drive_modes: dict[str, tuple[int, ...]] | None = None  # role -> Dynamixel Drive_Mode per joint (default 0)

    def id_of(self, role: str, joint: int) -> int:
        return self.ids[role][joint] if self.ids else joint + 1


ARM_PRESETS: dict[str, ArmPreset] = {
    "so101": ArmPreset(
        models={"follower": ("sts3215",) * 6, "leader": ("sts3215",) * 6},
        lerobot_types={"follower": "so101_follower", "leader": "so101_leader"},
        ranges=_SO_RANGES,
        offsets={"follower": (12, -35, 60, -8, 0, 25), "leader": (-20, 44, -13, 7, 0, -31)},
    ),
    "so100": ArmPreset(
        models={"follower": ("sts3215",) * 6, "leader": ("sts3215",) * 6},
        lerobot_types={"follower": "so100_follower", "leader": "so100_leader"},
        ranges=_SO_RANGES,
        offsets={"follower": (5, -15, 30, -8, 0, 12), "leader": (-10, 22, -6, 3, 0, -16)},
    ),
    "koch": ArmPreset(
        models={
            "follower": ("xl430-w250", "xl430-w250", "xl330-m288", "xl330-m288", "xl330-m288", "xl330-m288"),
            "leader": ("xl330-m077",) * 6,
        },
        lerobot_types={"follower": "koch_follower", "leader": "koch_leader"},
        ranges=_KOCH_RANGES,
        offsets={"follower": (1024, -512, 300, -200, 0, 150), "leader": (-700, 250, -90, 400, 0, -60)},
    ),
    "omx": ArmPreset(  # ROBOTIS OpenMANIPULATOR-X as LeRobot's omx_follower / omx_leader drive it
        models={
            "follower": ("xl430-w250",) * 3 + ("xl330-m288",) * 3,
            "leader": ("xl330-m288",) * 5 + ("xl330-m077",),
        },
        lerobot_types={"follower": "omx_follower", "leader": "omx_leader"},
        # LeRobot's OMX classes use factory calibration (full turn, no offset; inverted leader gripper, offset 100).
        ranges=[(0, 4095)] * 6,
        offsets={"follower": (0,) * 6, "leader": (0, 0, 0, 0, 0, 100)},
        ids={"follower": (11, 12, 13, 14, 15, 16), "leader": (1, 2, 3, 4, 5, 6)},
        drive_modes={"follower": (0,) * 6, "leader": (0, 0, 0, 0, 0, 1)},
    ),
}

TICKS_PER_RAD = 4095 / (2 * math.pi)  # LeRobot's degree conversion uses max_res = resolution - 1


def calibration_dict(kind: str, role: str) -> dict[str, dict[str, int]]:
    """The LeRobot calibration (as its JSON file holds it) of a virtual arm."""
    preset = _preset(kind, role)
    return {
        name: {
            "id": preset.id_of(role, i),
            "drive_mode": preset.drive_modes[role][i] if preset.drive_modes else 0,
            "homing_offset": preset.offsets[role][i],
            "range_min": preset.ranges[i][0],
            "range_max": preset.ranges[i][1],
        }
        for i, name in enumerate(MOTOR_NAMES)
    }


def write_calibration_file(path: str | os.PathLike, kind: str, role: str) -> Path:
    """Write the arm's calibration where LeRobot (or robot_node's calibration_file) reads it; atomic."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(calibration_dict(kind, role), indent=4))
    os.replace(tmp, path)
    return path


def _preset(kind: str, role: str) -> ArmPreset:
    if kind not in ARM_PRESETS:
        raise ValueError(f"unknown arm {kind!r}; choose one of {', '.join(sorted(ARM_PRESETS))}")
    if role not in ("leader", "follower"):
        raise ValueError(f"unknown role {role!r}; use leader or follower")
    return ARM_PRESETS[kind]


class VirtualArm:
    """One emulated arm (leader or follower) on its own pty, calibrated; joint access in radians."""

    def __init__(
        self,
        kind: str,
        role: str,
        port: str | os.PathLike | None = None,
        tau_s: float = 0.04,
        realtime: bool = False,
    ):
        preset = _preset(kind, role)
        self.kind, self.role = kind, role
        self.calibration = calibration_dict(kind, role)
        servos = []
        for i, name in enumerate(MOTOR_NAMES):
            cal = self.calibration[name]
            servo = VirtualServo(cal["id"], preset.models[role][i], tau_s=tau_s)
            servo.set_register("Homing_Offset", cal["homing_offset"])
            servo.set_register("Min_Position_Limit", cal["range_min"])
            servo.set_register("Max_Position_Limit", cal["range_max"])
            if cal["drive_mode"]:
                servo.set_register("Drive_Mode", cal["drive_mode"])
            servo.move_by_hand(self._mid(name))
            servos.append(servo)
        self.bus = VirtualBus(servos, port=port, name=f"{kind}_{role}", realtime=realtime)
        self.lerobot_type = preset.lerobot_types[role]

    @property
    def port(self) -> str:
        return self.bus.port

    def servo(self, name: str) -> VirtualServo:
        sid = self.calibration[name]["id"]
        return self.bus.servos.get(sid) or self.bus.missing[sid]

    def _mid(self, name: str) -> float:
        cal = self.calibration[name]
        return (cal["range_min"] + cal["range_max"]) / 2

    def limits_rad(self, name: str) -> tuple[float, float]:
        cal = self.calibration[name]
        half = (cal["range_max"] - cal["range_min"]) / 2 / TICKS_PER_RAD
        return -half, half

    def joint_positions(self) -> dict[str, float]:
        """Present joint angles in radians (0 = middle of the calibrated range)."""
        return {n: (self.servo(n).present_position() - self._mid(n)) / TICKS_PER_RAD for n in MOTOR_NAMES}

    def move_by_hand(self, radians: dict[str, float]) -> None:
        """Move joints as a hand would (a leader arm being driven by its operator)."""
        for name, rad in radians.items():
            self.servo(name).move_by_hand(self._mid(name) + rad * TICKS_PER_RAD)

    def goal_registers(self) -> dict[str, int]:
        return {n: self.servo(n).register("Goal_Position") for n in MOTOR_NAMES}

    def write_calibration(self, path: str | os.PathLike) -> Path:
        return write_calibration_file(path, self.kind, self.role)

    def start(self) -> VirtualArm:
        self.bus.start()
        return self

    def close(self) -> None:
        self.bus.close()

    def __enter__(self) -> VirtualArm:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def start_virtual_arm(
    kind: str,
    role: str,
    port: str | os.PathLike | None = None,
    calibration_file: str | os.PathLike | None = None,
) -> VirtualArm:
    """Start an emulated arm; write its LeRobot calibration file first if a path is given."""
    arm = VirtualArm(kind, role, port=port)
    if calibration_file is not None:
        arm.write_calibration(calibration_file)
    return arm.start()
