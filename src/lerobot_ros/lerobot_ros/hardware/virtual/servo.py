"""One emulated servo: a control table (LeRobot's addresses and sizes) plus first-order motion to the goal.

Physics is evaluated lazily from the monotonic clock whenever the servo is read or written, so an idle
emulator costs no CPU. Position registers follow each family's convention, as LeRobot's buses expect:
Feetech `Present_Position = actual - Homing_Offset` (sign-magnitude fields, wrapped to one turn) and
Dynamixel `Present_Position = actual + Homing_Offset` (two's complement fields). A Feetech servo in
velocity mode (`Operating_Mode` 1, as LeKiwi's wheels run) follows `Goal_Velocity` (steps/s) with the
same first-order lag and turns without limit.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

from lerobot.motors.dynamixel import tables as dxl_tables
from lerobot.motors.encoding_utils import (
    decode_sign_magnitude,
    decode_twos_complement,
    encode_sign_magnitude,
    encode_twos_complement,
)
from lerobot.motors.feetech import tables as ft_tables

FEETECH = "feetech"
DYNAMIXEL = "dynamixel"

#: Feetech Operating_Mode of a wheel: Goal_Velocity drives it (LeRobot's OperatingMode.VELOCITY).
FEETECH_VELOCITY_MODE = 1

#: Dynamixel error byte for a write the servo refuses (EEPROM while torque is on): "access error".
DXL_ACCESS_ERROR = 0x07


@dataclass(frozen=True)
class ServoModel:
    """What distinguishes one servo model on the wire: family, model number, control table, defaults."""

    name: str
    family: str
    model_number: int
    table: dict[str, tuple[int, int]]
    resolution: int
    eeprom_end: int  # addresses below this are EEPROM
    defaults: dict[str, int] = field(default_factory=dict)

    def address(self, name: str) -> tuple[int, int]:
        try:
            return self.table[name]
        except KeyError:
            raise KeyError(f"{self.name} has no register {name!r}") from None


_FEETECH_DEFAULTS = {
    "Firmware_Major_Version": 3,
    "Firmware_Minor_Version": 10,
    "Baud_Rate": 0,
    "Return_Delay_Time": 250,
    "Response_Status_Level": 1,
    "Min_Position_Limit": 0,
    "Max_Position_Limit": 4095,
    "Max_Temperature_Limit": 70,
    "Max_Voltage_Limit": 140,
    "Min_Voltage_Limit": 40,
    "Max_Torque_Limit": 1000,
    "Phase": 0x0C,
    "P_Coefficient": 32,
    "D_Coefficient": 32,
    "Protection_Current": 500,
    "Overload_Torque": 80,
    "Torque_Limit": 1000,
    "Present_Voltage": 120,
    "Present_Temperature": 31,
    "Maximum_Acceleration": 254,
}

_DXL_DEFAULTS = {
    "Firmware_Version": 52,
    "Baud_Rate": 3,
    "Return_Delay_Time": 250,
    "Operating_Mode": 3,
    "Protocol_Type": 2,
    "Temperature_Limit": 70,
    "Max_Voltage_Limit": 70,
    "Min_Voltage_Limit": 35,
    "Max_Position_Limit": 4095,
    "Min_Position_Limit": 0,
    "Status_Return_Level": 2,
    "Position_P_Gain": 800,
    "Present_Input_Voltage": 50,
    "Present_Temperature": 30,
}

_DXL_12V = {"xl430-w250", "xm430-w350", "xm540-w270", "xc430-w150", "xh540-w150"}


def servo_model(name: str) -> ServoModel:
    """The emulated model for a LeRobot model name (e.g. "sts3215", "xl330-m288", "xl430-w250")."""
    if name in ft_tables.MODEL_NUMBER_TABLE and ft_tables.MODEL_PROTOCOL.get(name) == 0:
        return ServoModel(
            name=name,
            family=FEETECH,
            model_number=ft_tables.MODEL_NUMBER_TABLE[name],
            table=ft_tables.MODEL_CONTROL_TABLE[name],
            resolution=ft_tables.MODEL_RESOLUTION[name],
            eeprom_end=40,
            defaults=_FEETECH_DEFAULTS,
        )
    if name in dxl_tables.MODEL_NUMBER_TABLE:
        defaults = dict(_DXL_DEFAULTS)
        if name in _DXL_12V:
            defaults.update(Max_Voltage_Limit=140, Min_Voltage_Limit=60, Present_Input_Voltage=120)
        return ServoModel(
            name=name,
            family=DYNAMIXEL,
            model_number=dxl_tables.MODEL_NUMBER_TABLE[name],
            table=dxl_tables.MODEL_CONTROL_TABLE[name],
            resolution=dxl_tables.MODEL_RESOLUTION[name],
            eeprom_end=64,
            defaults=defaults,
        )
    known = sorted(
        [m for m, p in ft_tables.MODEL_PROTOCOL.items() if p == 0 and m in ft_tables.MODEL_NUMBER_TABLE]
        + list(dxl_tables.MODEL_NUMBER_TABLE)
    )
    raise ValueError(f"no emulator for servo model {name!r}; emulated models: {', '.join(known)}")


class VirtualServo:
    """A servo's register file and its motion; thread-safe (the pty thread and test code share it)."""

    def __init__(self, servo_id: int, model: ServoModel | str, position: float | None = None, tau_s: float = 0.04):
        self.model = servo_model(model) if isinstance(model, str) else model
        self.id = int(servo_id)
        self.tau_s = float(tau_s)
        self.mem = bytearray(256)
        self._lock = threading.RLock()
        self._signed = self._signed_fields()
        for name, value in self.model.defaults.items():
            if name in self.model.table:
                self._set_raw(name, value)
        self._set_raw("ID", self.id)
        self._set_raw("Model_Number", self.model.model_number)
        self._actual = float(self.model.resolution // 2 if position is None else position)
        self._target = self._actual
        self._velocity = 0.0
        self._t = time.monotonic()
        self._refresh()
        self.set_register("Goal_Position", self.present_position())

    # ----- register encoding -------------------------------------------------------------------------
    def _signed_fields(self) -> dict[str, tuple]:
        if self.model.family == FEETECH:
            bits = ft_tables.MODEL_ENCODING_TABLE.get(self.model.name, {})
            return {
                name: (lambda v, b=b: encode_sign_magnitude(v, b), lambda v, b=b: decode_sign_magnitude(v, b))
                for name, b in bits.items()
            }
        sizes = dxl_tables.MODEL_ENCODING_TABLE.get(self.model.name, {})
        return {
            name: (lambda v, n=n: encode_twos_complement(v, n), lambda v, n=n: decode_twos_complement(v, n))
            for name, n in sizes.items()
        }

    def _get_raw(self, name: str) -> int:
        addr, size = self.model.address(name)
        return int.from_bytes(self.mem[addr : addr + size], "little")

    def _set_raw(self, name: str, value: int) -> None:
        addr, size = self.model.address(name)
        self.mem[addr : addr + size] = (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def register(self, name: str) -> int:
        """A register's value, sign-decoded as LeRobot decodes it."""
        with self._lock:
            self._refresh()
            raw = self._get_raw(name)
            return self._signed[name][1](raw) if name in self._signed else raw

    def set_register(self, name: str, value: int) -> None:
        """Set a register directly (test/set-up access: no EEPROM protection, side effects applied)."""
        with self._lock:
            if name in self._signed:
                addr, size = self.model.address(name)
                limit = (1 << (8 * size - 1)) - 1 if self.model.family == DYNAMIXEL else None
                value = self._signed[name][0](int(max(-limit - 1, min(limit, value))) if limit else int(value))
            self._set_raw(name, value)
            addr, size = self.model.address(name)
            self._after_write(addr, size)

    # ----- positions ---------------------------------------------------------------------------------
    def _offset_sign(self) -> int:
        return -1 if self.model.family == FEETECH else 1

    def _homing(self) -> int:
        return self.register_nolock("Homing_Offset")

    def register_nolock(self, name: str) -> int:
        raw = self._get_raw(name)
        return self._signed[name][1](raw) if name in self._signed else raw

    def _to_present(self, actual: float) -> float:
        present = actual + self._offset_sign() * self._homing()
        if self.model.family == FEETECH:
            present %= self.model.resolution
        return present

    def _to_actual(self, present: float) -> float:
        return present - self._offset_sign() * self._homing()

    def present_position(self) -> int:
        with self._lock:
            self._advance()
            return int(round(self._to_present(self._actual)))

    def turned_steps(self) -> float:
        """Where the shaft really is, in steps, unwrapped (a wheel's whole travel: tests compare odometry with it)."""
        with self._lock:
            self._advance()
            return self._actual

    def move_by_hand(self, present: float) -> None:
        """Put the joint at `present` (register units), as a hand moving a leader arm would.

        With torque on the servo pulls back towards its goal afterwards, like the real one.
        """
        with self._lock:
            self._advance()
            self._actual = self._to_actual(float(present))
            if not self.torque_enabled:
                self._target = self._actual
            self._refresh()

    @property
    def torque_enabled(self) -> bool:
        return self.register_nolock("Torque_Enable") != 0

    def _goal_limits(self) -> tuple[int, int] | None:
        lo, hi = self.register_nolock("Min_Position_Limit"), self.register_nolock("Max_Position_Limit")
        if self.model.family == FEETECH:
            return None if lo == 0 and hi == 0 else (lo, hi)  # 0/0: multi-turn, no limits
        return (lo, hi) if self.register_nolock("Operating_Mode") == 3 else None  # only in position mode

    # ----- dynamics ----------------------------------------------------------------------------------
    @property
    def velocity_mode(self) -> bool:
        return self.model.family == FEETECH and self.register_nolock("Operating_Mode") == FEETECH_VELOCITY_MODE

    def _advance(self) -> None:
        now = time.monotonic()
        dt = now - self._t
        self._t = now
        if dt <= 0:
            return
        if self.velocity_mode:  # the speed follows the goal with lag tau; the angle is its exact integral
            goal = float(self.register_nolock("Goal_Velocity")) if self.torque_enabled else 0.0
            decay = math.exp(-dt / self.tau_s)
            self._actual += goal * dt + (self._velocity - goal) * self.tau_s * (1.0 - decay)
            self._velocity = goal + (self._velocity - goal) * decay
            self._target = self._actual
        elif self.torque_enabled:
            before = self._actual
            self._actual = self._target + (self._actual - self._target) * math.exp(-dt / self.tau_s)
            self._velocity = (self._actual - before) / dt
        else:
            self._target = self._actual
            self._velocity = 0.0

    def _refresh(self) -> None:
        """Recompute the read-only 'Present_*' registers from the motion state."""
        self._advance()
        t = self.model.table
        present = int(round(self._to_present(self._actual)))
        error = self._target - self._actual
        if self.model.family == FEETECH:
            self._set_raw("Present_Position", encode_sign_magnitude(present, 15))
            self._set_raw("Present_Velocity", encode_sign_magnitude(int(max(-32767, min(32767, self._velocity))), 15))
            load = int(max(-1000, min(1000, error * 2)))
            self._set_raw("Present_Load", encode_sign_magnitude(load, 10))
            self._set_raw("Moving", int(abs(self._velocity) > 1.0 if self.velocity_mode else abs(error) > 1.0))
            if "Present_Current" in t:
                self._set_raw("Present_Current", min(abs(load) // 2, 2000))
            if not self.torque_enabled:
                self._set_raw("Goal_Position", encode_sign_magnitude(present, 15))
        else:
            self._set_raw("Present_Position", encode_twos_complement(present, 4))
            rpm_units = int(self._velocity / self.model.resolution * 60.0 / 0.229)
            self._set_raw("Present_Velocity", encode_twos_complement(rpm_units, 4))
            current = int(max(-1750, min(1750, error)))
            self._set_raw("Present_Current", encode_twos_complement(current, 2))
            self._set_raw("Moving", int(abs(error) > 1.0))
            if not self.torque_enabled:
                self._set_raw("Goal_Position", encode_twos_complement(present, 4))

    def _after_write(self, addr: int, size: int) -> None:
        def touches(name: str) -> bool:
            a, s = self.model.table[name]
            return addr < a + s and a < addr + size

        if touches("Torque_Enable"):
            self._target = self._actual  # enabling holds where the joint is; disabling lets it go
        if touches("Goal_Position") and self.torque_enabled:
            goal = self.register_nolock("Goal_Position")
            limits = self._goal_limits()
            if limits is not None:
                goal = max(limits[0], min(limits[1], goal))
            self._target = self._to_actual(goal)

    # ----- wire-level access (used by the protocol handlers) -----------------------------------------
    def read(self, addr: int, length: int) -> bytes:
        with self._lock:
            self._refresh()
            return bytes(self.mem[addr : addr + length])

    def write(self, addr: int, data: bytes) -> int:
        """Write bytes at `addr`; returns the status error byte (0, or the family's access error)."""
        with self._lock:
            self._advance()
            if self.model.family == DYNAMIXEL and addr < self.model.eeprom_end and self.torque_enabled:
                return DXL_ACCESS_ERROR
            self.mem[addr : addr + len(data)] = data
            self._after_write(addr, len(data))
            self._refresh()
            return 0
