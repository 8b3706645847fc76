"""Wire protocols of the emulated servos: Feetech SCS/STS (protocol 0) and Dynamixel Protocol 2.0.

Each protocol splits a byte stream into instruction packets (dropping noise and packets with a bad
checksum, as a servo does) and answers them for a chain of `VirtualServo`s. Instructions: ping
(also broadcast), read, write, sync read, sync write. A `Faults` object decides who stays silent and
whose reply is corrupted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from lerobot_ros.hardware.virtual.servo import VirtualServo

BROADCAST_FEETECH = 0xFE
BROADCAST_DXL = 0xFE

INST_PING, INST_READ, INST_WRITE, INST_SYNC_READ, INST_SYNC_WRITE = 0x01, 0x02, 0x03, 0x82, 0x83


@dataclass
class Packet:
    servo_id: int
    instruction: int
    params: bytes


# Reply hook: (servo_id, status_bytes) -> bytes to send (b"" = stay silent).
ReplyFilter = Callable[[int, bytes], bytes]


def _no_filter(_id: int, data: bytes) -> bytes:
    return data


class WireProtocol(Protocol):
    """What a `VirtualBus` needs of a protocol: split a byte stream, answer a packet, corrupt a reply."""

    name: str

    def split(self, buf: bytearray) -> list[Packet]: ...

    def handle(self, packet: Packet, servos: Mapping[int, VirtualServo], reply: ReplyFilter = ...) -> bytes: ...

    def corrupt(self, status: bytes) -> bytes: ...


# ---------------------------------------------------------------------------------------------------
# Feetech SCS/STS: FF FF ID LEN INST PARAMS CHK, LEN = len(PARAMS) + 2, CHK = ~(ID+LEN+INST+PARAMS) & FF
# ---------------------------------------------------------------------------------------------------
def feetech_checksum(body: bytes) -> int:
    return (~sum(body)) & 0xFF


class FeetechProtocol:
    name = "feetech"

    def split(self, buf: bytearray) -> list[Packet]:
        """Consume complete packets from `buf` (in place)."""
        packets: list[Packet] = []
        while True:
            start = buf.find(b"\xff\xff")
            if start < 0:
                del buf[: max(0, len(buf) - 1)]
                return packets
            del buf[:start]
            # Runs of 0xFF: the ID is the first byte that is not 0xFF.
            while len(buf) > 2 and buf[2] == 0xFF:
                del buf[0]
            if len(buf) < 4:
                return packets
            length = buf[3]
            total = length + 4
            if length < 2:
                del buf[:2]
                continue
            if len(buf) < total:
                return packets
            raw = bytes(buf[:total])
            del buf[:total]
            if feetech_checksum(raw[2:-1]) != raw[-1]:
                continue  # a servo ignores a corrupted instruction
            packets.append(Packet(raw[2], raw[4], raw[5:-1]))

    @staticmethod
    def status(servo_id: int, error: int, params: bytes = b"") -> bytes:
        body = bytes([servo_id, len(params) + 2, error]) + params
        return b"\xff\xff" + body + bytes([feetech_checksum(body)])

    def handle(self, packet: Packet, servos: Mapping[int, VirtualServo], reply: ReplyFilter = _no_filter) -> bytes:
        out = bytearray()
        inst, p = packet.instruction, packet.params
        if inst == INST_SYNC_WRITE:
            addr, n = p[0], p[1]
            for i in range(2, len(p) - n + 1, n + 1):
                servo = servos.get(p[i])
                if servo is not None:
                    servo.write(addr, bytes(p[i + 1 : i + 1 + n]))
            return b""
        if inst == INST_SYNC_READ:
            addr, n = p[0], p[1]
            for sid in p[2:]:
                servo = servos.get(sid)
                if servo is not None:
                    out += reply(sid, self.status(sid, 0, servo.read(addr, n)))
            return bytes(out)
        targets = sorted(servos) if packet.servo_id == BROADCAST_FEETECH else [packet.servo_id]
        for sid in targets:
            servo = servos.get(sid)
            if servo is None:
                continue
            if inst == INST_PING:
                status = self.status(sid, 0)
            elif inst == INST_READ:
                status = self.status(sid, 0, servo.read(p[0], p[1]))
            elif inst == INST_WRITE:
                error = servo.write(p[0], bytes(p[1:]))
                status = self.status(sid, error)
            else:
                status = self.status(sid, 0x08)  # instruction error
            if packet.servo_id != BROADCAST_FEETECH or inst == INST_PING:
                out += reply(sid, status)
        return bytes(out)

    @staticmethod
    def corrupt(status: bytes) -> bytes:
        return status[:-1] + bytes([status[-1] ^ 0x5A])


# ---------------------------------------------------------------------------------------------------
# Dynamixel Protocol 2.0: FF FF FD 00 ID LEN_L LEN_H INST PARAMS CRC_L CRC_H, byte-stuffed, CRC-16 (0x8005)
# ---------------------------------------------------------------------------------------------------
def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _crc_table()


def dxl_crc(data: bytes) -> int:
    """CRC-16 (polynomial 0x8005, initial 0, not reflected) as Protocol 2.0 specifies."""
    crc = 0
    for b in data:
        crc = ((crc << 8) ^ _CRC_TABLE[((crc >> 8) ^ b) & 0xFF]) & 0xFFFF
    return crc


def dxl_stuff(payload: bytes) -> bytes:
    """Insert 0xFD after every FF FF FD inside the instruction/params field (the header is not part of it)."""
    out = bytearray()
    for b in payload:
        out.append(b)
        if b == 0xFD and len(out) >= 3 and out[-3] == 0xFF and out[-2] == 0xFF:
            out.append(0xFD)
    return bytes(out)


def dxl_unstuff(payload: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(payload):
        b = payload[i]
        out.append(b)
        if (
            b == 0xFD
            and len(out) >= 3
            and out[-3] == 0xFF
            and out[-2] == 0xFF
            and i + 1 < len(payload)
            and payload[i + 1] == 0xFD
        ):
            i += 1  # drop the stuffing byte
        i += 1
    return bytes(out)


class DynamixelProtocol:
    name = "dynamixel"
    HEADER = b"\xff\xff\xfd\x00"

    def split(self, buf: bytearray) -> list[Packet]:
        packets: list[Packet] = []
        while True:
            start = buf.find(self.HEADER)
            if start < 0:
                del buf[: max(0, len(buf) - 3)]
                return packets
            del buf[:start]
            if len(buf) < 7:
                return packets
            length = buf[5] | (buf[6] << 8)
            total = 7 + length
            if length < 3:
                del buf[:4]
                continue
            if len(buf) < total:
                return packets
            raw = bytes(buf[:total])
            del buf[:total]
            if dxl_crc(raw[:-2]) != (raw[-2] | (raw[-1] << 8)):
                continue
            body = dxl_unstuff(raw[7:-2])
            packets.append(Packet(raw[4], body[0], body[1:]))

    @classmethod
    def status(cls, servo_id: int, error: int, params: bytes = b"") -> bytes:
        payload = dxl_stuff(bytes([0x55, error]) + params)
        length = len(payload) + 2
        head = cls.HEADER + bytes([servo_id, length & 0xFF, length >> 8])
        crc = dxl_crc(head + payload)
        return head + payload + bytes([crc & 0xFF, crc >> 8])

    def handle(self, packet: Packet, servos: Mapping[int, VirtualServo], reply: ReplyFilter = _no_filter) -> bytes:
        out = bytearray()
        inst, p = packet.instruction, packet.params
        if inst == INST_SYNC_WRITE:
            addr, n = p[0] | (p[1] << 8), p[2] | (p[3] << 8)
            for i in range(4, len(p) - n + 1, n + 1):
                servo = servos.get(p[i])
                if servo is not None:
                    servo.write(addr, bytes(p[i + 1 : i + 1 + n]))
            return b""
        if inst == INST_SYNC_READ:
            addr, n = p[0] | (p[1] << 8), p[2] | (p[3] << 8)
            for sid in p[4:]:
                servo = servos.get(sid)
                if servo is not None:
                    out += reply(sid, self.status(sid, 0, servo.read(addr, n)))
            return bytes(out)
        targets = sorted(servos) if packet.servo_id == BROADCAST_DXL else [packet.servo_id]
        for sid in targets:
            servo = servos.get(sid)
            if servo is None:
                continue
            if inst == INST_PING:
                m = servo.model.model_number
                fw = servo.read(*servo.model.address("Firmware_Version"))[0]
                status = self.status(sid, 0, bytes([m & 0xFF, m >> 8, fw]))
            elif inst == INST_READ:
                addr, n = p[0] | (p[1] << 8), p[2] | (p[3] << 8)
                status = self.status(sid, 0, servo.read(addr, n))
            elif inst == INST_WRITE:
                status = self.status(sid, servo.write(p[0] | (p[1] << 8), bytes(p[2:])))
            else:
                status = self.status(sid, 0x02)  # instruction error
            if packet.servo_id != BROADCAST_DXL or inst == INST_PING:
                out += reply(sid, status)
        return bytes(out)

    @staticmethod
    def corrupt(status: bytes) -> bytes:
        return status[:-2] + bytes([status[-2] ^ 0x5A, status[-1]])


PROTOCOLS: dict[str, type[WireProtocol]] = {"feetech": FeetechProtocol, "dynamixel": DynamixelProtocol}
