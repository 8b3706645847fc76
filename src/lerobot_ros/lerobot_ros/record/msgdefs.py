"""Message definitions (schema text + RIHS01 hash) for any installed ROS 2 message type.

A bag needs the definition of every type it stores so that `ros2 bag play`, Foxglove and `rosbags` can
decode it. The recorder is generic over types, so definitions come from rosbags' built-in store and, for
types it lacks (our own lerobot_ros_msgs, a vendor's messages), from the `.msg` files that every
installed interface package ships under `share/<pkg>/msg/`.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.base import Nodetype

from lerobot_ros.bag.typestore import distro_of
from lerobot_ros.conventions.errors import UserError


class UnknownMessageType(UserError, LookupError):
    """No definition for a message type: neither in rosbags' store nor as an installed .msg file."""


def share_prefixes() -> list[Path]:
    """Install prefixes to search for share/<pkg>/msg/*.msg: AMENT_PREFIX_PATH, then this Python's prefix."""
    prefixes = [Path(p) for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    prefixes.append(Path(sys.prefix))
    return prefixes


def _referenced_types(fields) -> set[str]:
    names: set[str] = set()

    def visit(desc) -> None:
        kind, arg = desc
        if kind == Nodetype.NAME:
            names.add(arg)
        elif kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            visit(arg[0])

    for _name, desc in fields:
        visit(desc)
    return names


class MessageDefinitions:
    """Thread-safe cache: `get("sensor_msgs/msg/Image") -> (msgdef_text, "RIHS01_...")`."""

    def __init__(self, store: Stores = Stores.ROS2_KILTED, prefixes: list[Path] | None = None):
        self.typestore = get_typestore(store)
        self.distro = distro_of(store)  #: the distribution these definitions (and hashes) are from: a bag's ros_distro
        self.prefixes = prefixes if prefixes is not None else share_prefixes()
        self._cache: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def get(self, msgtype: str) -> tuple[str, str]:
        msgtype = normalize_type(msgtype)
        with self._lock:
            if msgtype not in self._cache:
                self._ensure(msgtype, set())
                msgdef, _ = self.typestore.generate_msgdef(msgtype, ros_version=2)
                self._cache[msgtype] = (msgdef, self.typestore.hash_rihs01(msgtype))
            return self._cache[msgtype]

    def _ensure(self, msgtype: str, seen: set[str]) -> None:
        if msgtype in self.typestore.fielddefs or msgtype in seen:
            return
        seen.add(msgtype)
        path = self._find_msg_file(msgtype)
        types = get_types_from_msg(path.read_text(), msgtype)
        for dep in _referenced_types(types[msgtype][1]):
            self._ensure(dep, seen)
        self.typestore.register(types)

    def _find_msg_file(self, msgtype: str) -> Path:
        pkg, _, name = msgtype.split("/")
        for prefix in self.prefixes:
            candidate = prefix / "share" / pkg / "msg" / f"{name}.msg"
            if candidate.is_file():
                return candidate
        raise UnknownMessageType(
            f"no definition for message type {msgtype!r}: not in rosbags' store and no "
            f"share/{pkg}/msg/{name}.msg under {[str(p) for p in self.prefixes]}; install or source its package"
        )


def normalize_type(msgtype: str) -> str:
    """'sensor_msgs/Image' or 'sensor_msgs/msg/Image' -> 'sensor_msgs/msg/Image'."""
    parts = msgtype.strip().split("/")
    if len(parts) == 2:
        return f"{parts[0]}/msg/{parts[1]}"
    if len(parts) == 3 and parts[1] == "msg":
        return msgtype.strip()
    raise ValueError(f"not a ROS 2 message type: {msgtype!r} (expected 'pkg/msg/Name')")
