"""A bare LeRobot motor bus (Feetech or Dynamixel) dressed as a robot, for custom arms in motor_bus_node.

Motors come from parameters (id, model, name). Calibration comes from a LeRobot calibration file when
one is given, otherwise from the motors' own registers (homing offset and position limits), so angles
are 0 at the middle of each motor's position limits. Position is read in LeRobot's degree mode;
velocity and current are read raw and converted to rad/s and amperes.
"""

from __future__ import annotations

import math
from pathlib import Path

from lerobot_ros.hardware.devices import DeviceConfigError, unreadable_calibration

# Raw register units -> SI: Feetech velocity is steps/s, current 6.5 mA; Dynamixel X velocity 0.229 rpm, current 1 mA.
_VELOCITY_SCALE = {"feetech": 2 * math.pi / 4096, "dynamixel": 0.229 * 2 * math.pi / 60}
_CURRENT_SCALE = {"feetech": 0.0065, "dynamixel": 0.001}


class MotorBusDevice:
    """The subset of LeRobot's Robot interface that `ArmDriver` uses, over one motor bus."""

    def __init__(
        self, bus_type: str, port: str, names, ids, models, calibration_file: str = "", torque_on_connect: bool = True
    ):
        from lerobot.motors import Motor, MotorCalibration, MotorNormMode

        if bus_type not in _VELOCITY_SCALE:
            raise DeviceConfigError(f"bus_type {bus_type!r} is not supported; use feetech or dynamixel")
        if not port:
            raise DeviceConfigError("parameter 'port' is empty: set it to the bus's serial port")
        names, ids, models = list(names), [int(i) for i in ids], list(models)
        if not names or not (len(names) == len(ids) == len(models)):
            raise DeviceConfigError(
                f"motor_names ({len(names)}), motor_ids ({len(ids)}) and motor_models ({len(models)}) must be non-empty lists of equal length"
            )
        if bus_type == "feetech":
            from lerobot.motors.feetech import FeetechMotorsBus as Bus
        else:
            from lerobot.motors.dynamixel import DynamixelMotorsBus as Bus
        unknown = [m for m in models if m not in Bus.model_ctrl_table]
        if unknown:
            raise DeviceConfigError(
                f"unknown {bus_type} motor model(s) {unknown}; known: {', '.join(sorted(Bus.model_number_table))}"
            )
        motors = {n: Motor(i, m, MotorNormMode.DEGREES) for n, i, m in zip(names, ids, models)}
        calibration = None
        self.calibration_fpath = Path(calibration_file).expanduser() if calibration_file else Path("")
        if calibration_file:
            if not self.calibration_fpath.is_file():
                raise DeviceConfigError(
                    f"no calibration file at {self.calibration_fpath}; leave calibration_file empty to use the motors' own limits"
                )
            import draccus

            try:
                with open(self.calibration_fpath) as f, draccus.config_type("json"):
                    # draccus decodes a dict of dataclasses as LeRobot does; its stub's TypeVar is bound to dataclasses
                    calibration = draccus.load(dict[str, MotorCalibration], f)  # type: ignore[type-var]
            except Exception as exc:  # noqa: BLE001 - draccus and json raise their own types
                raise unreadable_calibration(self.calibration_fpath, exc) from None
            missing = [n for n in names if n not in calibration]
            if missing:
                raise DeviceConfigError(
                    f"calibration file {self.calibration_fpath} has no entry for motor(s) {missing}"
                )
        self.bus_type = bus_type
        self.bus = Bus(port, motors, calibration)
        self.calibration = calibration or {}
        self.torque_on_connect = torque_on_connect
        self.extra: dict[str, dict[str, float]] = {}

    def connect(self, calibrate: bool = False) -> None:
        self.bus.connect()
        if not self.calibration:
            self.calibration = self.bus.read_calibration()
            self.bus.calibration = self.calibration
        if self.torque_on_connect:
            present = self.bus.sync_read("Present_Position")
            self.bus.sync_write("Goal_Position", present)
            self.bus.enable_torque()

    @property
    def is_calibrated(self) -> bool:
        return self.bus.is_calibrated

    def get_observation(self) -> dict[str, float]:
        pos = self.bus.sync_read("Present_Position")
        vel = self.bus.sync_read("Present_Velocity", normalize=False)
        cur = self.bus.sync_read("Present_Current", normalize=False) if self._has("Present_Current") else {}
        self.extra = {
            "velocity": {n: v * _VELOCITY_SCALE[self.bus_type] for n, v in vel.items()},
            "effort": {n: c * _CURRENT_SCALE[self.bus_type] for n, c in cur.items()},
        }
        return {f"{n}.pos": v for n, v in pos.items()}

    def send_action(self, action: dict[str, float]) -> dict[str, float]:
        goals = {k.removesuffix(".pos"): v for k, v in action.items()}
        self.bus.sync_write("Goal_Position", goals)
        return action

    def _has(self, register: str) -> bool:
        return all(register in self.bus.model_ctrl_table[m.model] for m in self.bus.motors.values())

    def disconnect(self) -> None:
        self.bus.disconnect(disable_torque=True)
