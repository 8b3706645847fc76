"""Write rosbag2 bags (MCAP or sqlite3, version 8 or 9, optional zstd) from rclpy messages.

`BagWriter` serves the exporter; `write_bag` is the one-call form tests use to make bags from numpy data.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lerobot_ros.bag.errors import BagError
from lerobot_ros.bag.typestore import TYPESTORE_DISTRO, cdr_deserialize, make_typestore, with_distro
from lerobot_ros.conventions.qos import PROFILE_NAMES, QOS_SPECS


def _qos(name: str):
    """The rosbags Qos written into metadata.yaml for profile `name` (what `ros2 bag play` offers on replay):
    the same numbers as the live profile of that name (lerobot_ros.conventions.qos)."""
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    spec = QOS_SPECS[name]
    zero = QosTime(0, 0)
    return Qos(
        QosHistory.KEEP_LAST,
        spec.depth,
        QosReliability.RELIABLE if spec.reliable else QosReliability.BEST_EFFORT,
        QosDurability.TRANSIENT_LOCAL if spec.latched else QosDurability.VOLATILE,
        zero,
        zero,
        QosLiveliness.AUTOMATIC,
        zero,
        False,
    )


def distro_writer_class(ros_distro: str = TYPESTORE_DISTRO):
    """rosbags' Writer with what rosbag2's own storage plugins write and rosbags does not: each MCAP
    channel's `topic_type_hash` (RIHS01, next to offered_qos_profiles) and `ros_distro` naming the distro
    of the definitions (default: the typestore's) instead of 'rosbags' (metadata.yaml, the MCAP metadata
    record and the sqlite3 schema table)."""
    from io import BytesIO

    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.rosbag2.storage_mcap import Channel, McapWriter, write_channel, write_string
    from rosbags.rosbag2.storage_sqlite3 import Sqlite3Writer

    def distro(metadata: str) -> str:
        return with_distro(metadata, ros_distro)

    class Mcap(McapWriter):
        def add_connection(self, connection, offered_qos_profiles: str) -> None:
            metadata = BytesIO()
            for key, value in (("offered_qos_profiles", offered_qos_profiles), ("topic_type_hash", connection.digest)):
                write_string(metadata, key)
                write_string(metadata, value)
            channel = Channel(
                connection.id,
                connection.msgtype,
                connection.topic,
                connection.ext.serialization_format,
                metadata.getvalue(),
            )
            self.channels.append(channel)
            self.channel_stats[connection.id] = 0
            write_channel(self.chunk.bio, channel, self.schemas)

        def close(self, version: int, metadata: str) -> None:
            super().close(version, distro(metadata))

    class Sqlite3(Sqlite3Writer):
        def close(self, version: int, metadata: str) -> None:
            self.cursor.execute("UPDATE schema SET ros_distro = ?", (ros_distro,))
            super().close(version, distro(metadata))

    class DistroWriter(Writer):
        STORAGE_PLUGINS = {StoragePlugin.MCAP: Mcap, StoragePlugin.SQLITE3: Sqlite3}

        def close(self) -> None:
            super().close()
            self.metapath.write_text(distro(self.metapath.read_text()))

    return DistroWriter


class BagWriter:
    """Context manager: `add_topic(topic, msgtype, qos)` then `write(topic, t_ns, msg)` (rclpy message or CDR bytes).

    Writes into `<path>.partial` and renames on a clean close, so an interrupted write leaves no bag.
    """

    def __init__(
        self,
        path,
        storage: str = "mcap",
        version: int = 9,
        compression: str | None = None,
        custom_data: dict | None = None,
    ):
        from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin

        self.path = Path(path)
        if self.path.exists():
            raise BagError(self.path, "exists already; choose a new output path")
        if storage not in ("mcap", "sqlite3"):
            raise BagError(self.path, f"unknown storage {storage!r}; use mcap or sqlite3")
        self._tmp_parent = self.path.with_name(f".{self.path.name}.partial")
        if self._tmp_parent.exists():
            raise BagError(self._tmp_parent, "exists (left by an earlier run?); remove it first")
        self._tmp_parent.mkdir(parents=True)
        self._tmp = self._tmp_parent / self.path.name
        plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
        self._writer = distro_writer_class()(self._tmp, version=version, storage_plugin=plugin)
        if compression == "zstd":
            mode = CompressionMode.STORAGE if storage == "mcap" else CompressionMode.MESSAGE
            self._writer.set_compression(mode, CompressionFormat.ZSTD)
        elif compression == "zstd-file":
            self._writer.set_compression(CompressionMode.FILE, CompressionFormat.ZSTD)
        elif compression:
            raise BagError(self.path, f"unknown compression {compression!r}; use zstd")
        for key, value in (custom_data or {}).items():
            self._writer.set_custom_data(str(key), str(value))
        self.typestore = make_typestore()
        self._conns: dict[str, object] = {}
        self._types: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self._writer.open()

    def add_topic(self, topic: str, msgtype: str, qos: str = "reliable") -> None:
        if topic in self._conns:
            return
        if msgtype not in self.typestore.fielddefs:
            raise BagError(self.path, f"no message definition for {msgtype}")
        self._conns[topic] = self._writer.add_connection(
            topic,
            msgtype,
            typestore=self.typestore,
            offered_qos_profiles=[_qos(qos if qos in PROFILE_NAMES else "reliable")],
        )
        self._types[topic] = msgtype
        self.counts[topic] = 0

    def write(self, topic: str, t_ns: int, msg) -> None:
        if isinstance(msg, (bytes, bytearray, memoryview)):
            raw = msg
        else:
            from rclpy.serialization import serialize_message

            raw = serialize_message(msg)
            if msgtype := self._types.get(topic):  # drop trailing bytes rclpy may append (see cdr_deserialize)
                used = cdr_deserialize(self.typestore, raw, msgtype)[1]
                raw = raw[: used + (-used % 4)]
        self._writer.write(self._conns[topic], int(t_ns), raw)
        self.counts[topic] += 1

    def close(self) -> Path:
        self._writer.close()
        self._tmp.rename(self.path)
        self._tmp_parent.rmdir()
        return self.path

    def abort(self) -> None:
        import shutil

        try:
            self._writer.close()
        except Exception:
            pass
        shutil.rmtree(self._tmp_parent, ignore_errors=True)

    def __enter__(self) -> BagWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_bag(
    path,
    messages: Iterable[tuple[str, str, int, object]],
    storage: str = "mcap",
    version: int = 9,
    compression: str | None = None,
    custom_data: dict | None = None,
    qos: dict[str, str] | None = None,
) -> Path:
    """Write (topic, msgtype, log_time_ns, rclpy message or CDR bytes) tuples to a new bag folder at `path`."""
    with BagWriter(path, storage, version, compression, custom_data) as writer:
        for topic, msgtype, t_ns, msg in messages:
            writer.add_topic(topic, msgtype, (qos or {}).get(topic, "reliable"))
            writer.write(topic, t_ns, msg)
    return Path(path)
