"""A rosbags typestore with the standard ROS 2 types plus this project's interfaces (lerobot_ros_msgs)."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore


def _interface_dirs() -> list[Path]:
    here = Path(__file__).resolve()
    return [
        here.parents[4] / "msgs" / "lerobot_ros_msgs" / "msg",  # checkout
        Path(sys.prefix) / "share" / "lerobot_ros_msgs" / "msg",  # installed
    ]


def project_types() -> dict:
    """Field definitions of lerobot_ros_msgs/msg/* from their .msg files."""
    types: dict = {}
    for folder in _interface_dirs():
        if folder.is_dir():
            for msg in sorted(folder.glob("*.msg")):
                types.update(get_types_from_msg(msg.read_text(), f"lerobot_ros_msgs/msg/{msg.stem}"))
            if types:
                break
    return types


STORE = Stores.LATEST


def distro_of(store: Stores) -> str:
    """The ROS 2 distribution whose definitions `store` holds (LATEST is an alias of one, e.g. jazzy)."""
    import importlib

    fielddefs = importlib.import_module(f"rosbags.typesys.stores.{store.value}").FIELDDEFS
    for candidate in Stores:
        if candidate.value.startswith("ros2_"):
            module = importlib.import_module(f"rosbags.typesys.stores.{candidate.value}")
            if module.FIELDDEFS is fielddefs:
                return candidate.value.removeprefix("ros2_")
    return store.value.removeprefix("ros2_")


def with_distro(metadata: str, distro: str) -> str:
    """rosbags' metadata text (metadata.yaml, the MCAP metadata record) naming `distro` instead of 'rosbags'."""
    return metadata.replace("ros_distro: rosbags", f"ros_distro: {distro}")


#: the distro name written into bags as ros_distro: the one whose message definitions (and hashes) they carry
TYPESTORE_DISTRO = distro_of(STORE)


@functools.lru_cache(maxsize=1)
def _base() -> Typestore:
    store = get_typestore(STORE)
    store.register(project_types())
    return store


def make_typestore(shared: bool = False) -> Typestore:
    """A typestore with the LATEST ROS 2 types + lerobot_ros_msgs. `shared=True` returns the process-wide
    instance (building one costs ~0.5 s): never register types into it; take a private copy for that."""
    if shared:
        return _base()
    store = get_typestore(Stores.EMPTY)
    store.register(_base().fielddefs)
    return store


def cdr_deserialize(store: Typestore, raw, msgtype: str):
    """(message, used bytes) of CDR data, ignoring trailing bytes after the message.

    rclpy's serialize_message (and so some recorders) can report a buffer a few bytes longer than the
    message (seen with empty float64 sequences); rosbags' own deserialize_cdr rejects that.
    """
    if len(raw) < 4 or bytes(raw[:2]) not in (b"\x00\x00", b"\x00\x01"):
        raise ValueError("invalid or unsupported CDR encapsulation")
    msgdef = store.get_msgdef(msgtype)
    func = msgdef.deserialize_cdr_le if raw[1] else msgdef.deserialize_cdr_be
    message, pos = func(memoryview(raw)[4:], 0, msgdef.cls, store)
    return message, pos + 4


_SEPARATOR = "=" * 80


def types_from_definition(msgtype: str, fmt: str, text: str) -> dict:
    """Field definitions from a stored definition: .msg text (ros2msg, with its `MSG:` dependency
    sections), .idl text, or for a service's types (`pkg/srv/Name_Event|_Request|_Response`) the .srv
    text rosbag2 stores for service-event topics: request `---` response, plus the event wrapper
    (service_msgs/msg/ServiceEventInfo info, request[<=1], response[<=1]) as rosidl generates it."""
    from rosbags.typesys import get_types_from_idl

    if fmt not in ("MSG", "ros2msg"):
        return get_types_from_idl(text.split("\n", 1)[1] if text.startswith(_SEPARATOR) else text)
    pkg, kind, name = (msgtype.split("/") + ["", ""])[:3]
    if kind != "srv":
        return get_types_from_msg(text, msgtype)
    base = name
    for suffix in ("_Event", "_Request", "_Response"):
        if name.endswith(suffix):
            base = name[: -len(suffix)]
    main, _sep, deps = text.partition("\n" + _SEPARATOR)
    deps = (_SEPARATOR + deps) if _sep else ""
    lines = main.split("\n")
    cut = next((i for i, line in enumerate(lines) if line.strip() == "---"), len(lines))
    request, response = "\n".join(lines[:cut]), "\n".join(lines[cut + 1 :])
    prefix = f"{pkg}/srv/{base}"
    types = dict(get_types_from_msg(request + "\n" + deps, f"{prefix}_Request"))
    types.update(get_types_from_msg(response + "\n" + deps, f"{prefix}_Response"))
    event = f"service_msgs/msg/ServiceEventInfo info\n{prefix}_Request[<=1] request\n{prefix}_Response[<=1] response\n"
    types.update(get_types_from_msg(event, f"{prefix}_Event"))
    # rosbags' .msg parser files every name under <pkg>/msg/; a service's types live under <pkg>/srv/
    return _renamed(types, f"{pkg}/srv/msg/", f"{pkg}/srv/")


def _renamed(value, old: str, new: str):
    if isinstance(value, str):
        return new + value[len(old) :] if value.startswith(old) else value
    if isinstance(value, dict):
        return {_renamed(k, old, new): _renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_renamed(v, old, new) for v in value)
    return value
