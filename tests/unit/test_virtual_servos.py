"""Emulated Feetech / Dynamixel servos on a pty, driven by LeRobot's real motor buses and SDKs."""

from __future__ import annotations

import json
import os
import termios
import time

import pytest
from lerobot.motors import Motor, MotorCalibration, MotorNormMode
from lerobot.motors.dynamixel import DynamixelMotorsBus
from lerobot.motors.feetech import FeetechMotorsBus

from lerobot_ros.hardware.virtual import VirtualArm, VirtualBus, VirtualServo, servo_model
from lerobot_ros.hardware.virtual.arms import MOTOR_NAMES, calibration_dict, write_calibration_file
from lerobot_ros.hardware.virtual.protocols import (
    DynamixelProtocol,
    FeetechProtocol,
    dxl_crc,
    dxl_stuff,
    dxl_unstuff,
)

BUSES = {"so101": FeetechMotorsBus, "koch": DynamixelMotorsBus}
pytestmark = pytest.mark.usefixtures("quick_gil_handoff")


def settle(predicate, timeout=2.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


class RetryingConnect:
    """LeRobot's handshake pings each motor once, and the Dynamixel SDK waits ~35 ms for a reply; on a
    starved CI machine a reply can miss that window. These tests are about the protocol, so the connect
    is retried and reads/writes get LeRobot's own `num_retry` (faults are injected with retries exhausted)."""

    RETRIED = {"read", "sync_read", "write", "sync_write", "ping"}

    def __init__(self, bus):
        self.bus = bus

    def __getattr__(self, name):
        attr = getattr(self.bus, name)
        if name in self.RETRIED:

            def call(*args, **kwargs):
                kwargs.setdefault("num_retry", 3)
                return attr(*args, **kwargs)

            return call
        return attr

    def connect(self, attempts: int = 3):
        for attempt in range(attempts):
            try:
                return self.bus.connect()
            except RuntimeError as exc:
                if "Missing motor IDs" not in str(exc) or attempt == attempts - 1:
                    raise
                self.bus.port_handler.closePort()


def _with_retries(fn):
    def call(*args, num_retry=0, **kwargs):
        return fn(*args, num_retry=max(num_retry, 3), **kwargs)

    return call


def lerobot_bus(arm: VirtualArm, norm=MotorNormMode.DEGREES):
    cal = {n: MotorCalibration(**c) for n, c in arm.calibration.items()}
    motors = {n: Motor(c["id"], arm.servo(n).model.name, norm) for n, c in arm.calibration.items()}
    bus = BUSES[arm.kind](arm.port, motors, cal)
    for name in ("_read", "_write", "_sync_read"):  # also the calls LeRobot makes internally
        setattr(bus, name, _with_retries(getattr(bus, name)))
    return RetryingConnect(bus)


@pytest.fixture(params=["so101", "koch"])
def arm(request):
    with VirtualArm(request.param, "follower") as a:
        yield a


# ----- protocol units --------------------------------------------------------------------------------
def test_dynamixel_crc_matches_the_protocol_reference_packet():
    # Robotis e-manual, Protocol 2.0 ping example for ID 1: FF FF FD 00 01 03 00 01 | 19 4E
    assert dxl_crc(bytes.fromhex("fffffd0001030001")) == 0x4E19


def test_dynamixel_byte_stuffing_round_trips():
    payload = bytes([0x55, 0x00, 0xFF, 0xFF, 0xFD, 0x10])
    stuffed = dxl_stuff(payload)
    assert stuffed == bytes([0x55, 0x00, 0xFF, 0xFF, 0xFD, 0xFD, 0x10])
    assert dxl_unstuff(stuffed) == payload


def test_packet_splitters_skip_noise_and_bad_checksums():
    ft = FeetechProtocol()
    good = FeetechProtocol.status(3, 0, b"\x01\x02")  # same framing as an instruction packet
    buf = bytearray(b"\x00\x13" + FeetechProtocol.corrupt(good) + good)
    packets = ft.split(buf)
    assert [(p.servo_id, p.instruction, p.params) for p in packets] == [(3, 0, b"\x01\x02")]
    dx = DynamixelProtocol()
    status = DynamixelProtocol.status(7, 0, b"\xff\xff\xfd")
    buf = bytearray(b"\x42" + DynamixelProtocol.corrupt(status) + status)
    packets = dx.split(buf)
    assert [(p.servo_id, p.instruction, p.params) for p in packets] == [(7, 0x55, b"\x00\xff\xff\xfd")]


def test_servo_model_lookup_uses_lerobot_tables_and_rejects_unknown_models():
    assert servo_model("sts3215").model_number == 777
    assert servo_model("xl330-m077").model_number == 1190
    assert servo_model("xl430-w250").table["Goal_Position"] == (116, 4)
    with pytest.raises(ValueError, match="no emulator for servo model 'xyz'"):
        servo_model("xyz")


def test_feetech_homing_offset_and_goal_clamp_in_registers():
    servo = VirtualServo(1, "sts3215", position=2000)
    servo.set_register("Homing_Offset", -100)  # Present = Actual - Homing_Offset
    assert servo.present_position() == 2100
    servo.set_register("Min_Position_Limit", 1500)
    servo.set_register("Max_Position_Limit", 2500)
    servo.set_register("Torque_Enable", 1)
    servo.set_register("Goal_Position", 4000)  # beyond the limit: the servo stops at 2500
    settle(lambda: servo.present_position() == 2500)
    servo.set_register("Torque_Enable", 0)
    servo.move_by_hand(1800)
    assert servo.present_position() == 1800 and servo.register("Goal_Position") == 1800


# ----- through LeRobot's buses and the real SDKs -----------------------------------------------------
def test_lerobot_bus_connects_reads_calibration_and_moves(arm):
    bus = lerobot_bus(arm)
    bus.connect()
    try:
        assert bus.is_calibrated
        assert bus.ping("shoulder_pan") == arm.servo("shoulder_pan").model.model_number
        start = bus.sync_read("Present_Position")
        assert set(start) == set(MOTOR_NAMES)
        assert all(abs(v) < 0.1 for k, v in start.items())  # arm starts at mid-range = 0 degrees
        bus.enable_torque()
        bus.sync_write("Goal_Position", {"shoulder_lift": 30.0, "elbow_flex": -20.0})
        settle(lambda: abs(bus.sync_read("Present_Position")["shoulder_lift"] - 30.0) < 0.3)
        now = bus.sync_read("Present_Position")
        assert now["elbow_flex"] == pytest.approx(-20.0, abs=0.3)
        assert now["shoulder_pan"] == pytest.approx(start["shoulder_pan"], abs=0.1)
        bus.write("Goal_Position", "wrist_flex", 15.0)
        settle(lambda: abs(bus.read("Present_Position", "wrist_flex") - 15.0) < 0.3)
        assert bus.read("Torque_Enable", "wrist_flex") == 1
        bus.disable_torque()
        arm.move_by_hand({"shoulder_pan": 0.5})
        assert bus.read("Present_Position", "shoulder_pan") == pytest.approx(28.6, abs=0.2)
    finally:
        bus.disconnect(disable_torque=True)


def test_broadcast_ping_finds_every_motor(arm):
    bus = lerobot_bus(arm)
    bus.connect()
    try:
        models = bus.broadcast_ping()
        assert models == {i + 1: arm.servo(n).model.model_number for i, n in enumerate(MOTOR_NAMES)}
    finally:
        bus.disconnect(disable_torque=False)


def test_missing_motor_fails_the_handshake_naming_it(arm):
    arm.bus.remove_motor(4)
    bus = lerobot_bus(arm)
    with pytest.raises(RuntimeError, match=r"Missing motor IDs:\s*\n\s*- 4"):
        bus.connect()
    bus.port_handler.closePort()


def test_silent_motor_and_bad_checksum_are_communication_errors(arm):
    bus = lerobot_bus(arm)
    bus.connect()
    try:
        arm.bus.faults.no_reply.add(2)
        with pytest.raises(ConnectionError, match="no status packet|There is no status packet"):
            bus.sync_read("Present_Position")
        arm.bus.faults.clear()
        arm.bus.faults.bad_checksum.add(3)
        with pytest.raises(ConnectionError, match="Incorrect status packet"):
            bus.read("Present_Position", "elbow_flex")
        arm.bus.faults.clear()
        assert set(bus.sync_read("Present_Position")) == set(MOTOR_NAMES)
    finally:
        bus.disconnect(disable_torque=False)


def test_unplugged_port_errors_then_replug_at_same_path_works(arm):
    bus = lerobot_bus(arm)
    bus.connect()
    arm.bus.unplug()
    assert not os.path.exists(arm.port)
    # the pty's far end is gone: the SDK's port flush (termios.tcflush) fails with EIO, as on an unplugged USB adapter
    with pytest.raises(termios.error, match="Input/output error"):
        bus.sync_read("Present_Position")
    bus.port_handler.is_open = False
    arm.bus.plug()
    bus2 = lerobot_bus(arm)
    bus2.connect()
    try:
        assert set(bus2.sync_read("Present_Position")) == set(MOTOR_NAMES)
    finally:
        bus2.disconnect(disable_torque=False)


def test_dynamixel_refuses_eeprom_writes_with_torque_on():
    with VirtualArm("koch", "follower") as arm:
        bus = lerobot_bus(arm)
        bus.connect()
        try:
            bus.enable_torque("elbow_flex")
            with pytest.raises(RuntimeError, match="Failed to write 'Operating_Mode'"):
                bus.write("Operating_Mode", "elbow_flex", 4)
            bus.disable_torque("elbow_flex")
            bus.write("Operating_Mode", "elbow_flex", 4)
            assert arm.servo("elbow_flex").register("Operating_Mode") == 4
        finally:
            bus.disconnect(disable_torque=False)


def test_calibration_file_matches_lerobot_format(tmp_path):
    path = write_calibration_file(tmp_path / "cal" / "arm.json", "so101", "follower")
    data = json.loads(path.read_text())
    assert data == calibration_dict("so101", "follower")
    assert set(data["gripper"]) == {"id", "drive_mode", "homing_offset", "range_min", "range_max"}
    with pytest.raises(ValueError, match="unknown arm 'ur5'"):
        calibration_dict("ur5", "follower")


def test_one_bus_one_protocol():
    with pytest.raises(ValueError, match="one bus speaks one protocol"):
        VirtualBus([VirtualServo(1, "sts3215"), VirtualServo(2, "xl330-m288")])
