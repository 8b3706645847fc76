"""A chain of emulated servos behind a pseudo-terminal, served by one thread, with injectable faults.

The port a client opens is a symlink to the pty's slave side, so `unplug()` then `plug()` gives a new
pty at the same path, as re-plugging a USB adapter does. The emulator keeps its own handle on the slave
side so a client closing the port never breaks the server.
"""

from __future__ import annotations

import os
import select
import tempfile
import threading
import tty
from dataclasses import dataclass, field
from pathlib import Path

from lerobot_ros.hardware.virtual.priority import make_this_thread_realtime
from lerobot_ros.hardware.virtual.protocols import PROTOCOLS
from lerobot_ros.hardware.virtual.servo import VirtualServo


@dataclass
class Faults:
    """What goes wrong on the bus. Edit the sets at any time; the server reads them per packet.

    no_reply: servo ids that stop answering (still on the bus, a crashed or unpowered motor).
    bad_checksum: servo ids whose replies carry a wrong checksum/CRC.
    corrupt_count: when > 0, only that many replies are corrupted (then bad_checksum ids heal).
    """

    no_reply: set[int] = field(default_factory=set)
    bad_checksum: set[int] = field(default_factory=set)
    corrupt_count: int = 0

    def clear(self) -> None:
        self.no_reply.clear()
        self.bad_checksum.clear()
        self.corrupt_count = 0


class VirtualBus:
    """Serves `servos` (id -> VirtualServo, all of one family) on a pty linked at `port`; `realtime`: from a
    SCHED_FIFO thread where permitted (an emulator process answering within the SDK's timeout, see `priority`)."""

    def __init__(
        self,
        servos: list[VirtualServo],
        port: str | os.PathLike | None = None,
        name: str = "bus",
        realtime: bool = False,
    ):
        if not servos:
            raise ValueError("a virtual bus needs at least one servo")
        families = {s.model.family for s in servos}
        if len(families) != 1:
            raise ValueError(f"one bus speaks one protocol; got servos of families {sorted(families)}")
        self.family = families.pop()
        self.protocol = PROTOCOLS[self.family]()
        self.servos: dict[int, VirtualServo] = {s.id: s for s in servos}
        self.missing: dict[int, VirtualServo] = {}
        self.faults = Faults()
        self.name = name
        self._tmpdir: str | None
        if port is None:
            self._tmpdir = tempfile.mkdtemp(prefix="lerobot_ros_vbus_")
            port = os.path.join(self._tmpdir, name)
        else:
            self._tmpdir = None
        self.port = str(port)
        self.packets_served = 0
        self._want_realtime = realtime
        self.realtime = False  # whether the serving thread runs SCHED_FIFO (known once plug() returns)
        self._serving = threading.Event()
        self._master = self._slave = -1
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # ----- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> VirtualBus:
        self.plug()
        return self

    def plug(self) -> None:
        """Create a pty and point the port path at it; start serving."""
        with self._lock:
            if self._thread is not None:
                return
            master, slave = os.openpty()
            tty.setraw(slave)
            self._master, self._slave = master, slave
            link = Path(self.port)
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(os.ttyname(slave))
            self._stop.clear()
            self._serving.clear()
            self._thread = threading.Thread(target=self._serve, name=f"vbus-{self.name}", daemon=True)
            self._thread.start()
            self._serving.wait(5.0)  # the thread has its scheduling: `realtime` is settled

    def unplug(self) -> None:
        """Pull the cable: stop serving, close the pty, remove the port path."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._stop.set()
            if thread is not None:
                thread.join(timeout=2.0)
            for fd in (self._master, self._slave):
                if fd >= 0:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self._master = self._slave = -1
            link = Path(self.port)
            if link.is_symlink():
                link.unlink()

    def close(self) -> None:
        self.unplug()
        if self._tmpdir:
            try:
                os.rmdir(self._tmpdir)
            except OSError:
                pass

    def __enter__(self) -> VirtualBus:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- faults ------------------------------------------------------------------------------------
    def remove_motor(self, servo_id: int) -> None:
        """Take a motor off the bus (a cut daisy-chain cable)."""
        self.missing[servo_id] = self.servos.pop(servo_id)

    def _reply(self, servo_id: int, status: bytes) -> bytes:
        faults = self.faults
        if servo_id in faults.no_reply:
            return b""
        if servo_id in faults.bad_checksum:
            if faults.corrupt_count > 0:
                faults.corrupt_count -= 1
                if faults.corrupt_count == 0:
                    faults.bad_checksum.clear()
            return self.protocol.corrupt(status)
        return status

    # ----- server ------------------------------------------------------------------------------------
    def _serve(self) -> None:
        self.realtime = make_this_thread_realtime() if self._want_realtime else False
        self._serving.set()
        buf = bytearray()
        master = self._master
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([master], [], [], 0.1)
                if not ready:
                    continue
                chunk = os.read(master, 4096)
            except (OSError, ValueError):
                return
            if not chunk:
                continue
            buf += chunk
            for packet in self.protocol.split(buf):
                self.packets_served += 1
                reply = self.protocol.handle(packet, dict(self.servos), self._reply)
                if reply:
                    try:
                        os.write(master, reply)
                    except OSError:
                        return

    # ----- convenience for tests and the CLI -----------------------------------------------------------
    def positions(self) -> dict[int, int]:
        """Present_Position register of every servo on the bus."""
        return {sid: s.present_position() for sid, s in self.servos.items()}
