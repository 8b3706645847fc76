"""Read rosbag2 bags (folders, bare .mcap/.db3; MCAP and sqlite3; zstd; versions 8 and 9) with `rosbags`,
and truncated MCAP files front to back (see mcap_stream), behind one interface."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import yaml

from lerobot_ros.bag.errors import BagError
from lerobot_ros.bag.mcap_stream import StreamStats, iter_mcap_records
from lerobot_ros.bag.typestore import cdr_deserialize, make_typestore


@dataclass
class TopicInfo:
    msgtype: str
    count: int


class BagReader:
    """One bag. `topics`, `custom_data`, `messages(topics)` -> (topic, msgtype, log_time_ns, raw CDR), `deserialize`.

    Falls back to a front-to-back MCAP read when rosbags cannot open the bag (no footer, no metadata.yaml);
    `truncated` then says so and `stream_stats` says where reading stopped.
    """

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.exists():
            raise BagError(self.path, "does not exist")
        self.typestore = make_typestore(shared=True)  # copied on the first type the bag itself defines
        self._private_store = False
        self.truncated = False
        self.stream_stats: StreamStats | None = None
        self.custom_data: dict[str, str] = {}
        self.storage = "sqlite3" if self._files(".db3") else "mcap"
        self._reader = None
        self._topics: dict[str, TopicInfo] | None = None
        try:
            from rosbags.rosbag2 import Reader

            reader = Reader(self.path)
            reader.open()
        except BagError:
            raise
        except Exception as exc:  # rosbags raises several types; decide by storage
            if self.storage == "mcap" and self._files(".mcap"):
                self._open_stream(exc)
                return
            raise BagError(self.path, f"cannot be read ({_one_line(exc)})") from None
        self._reader = reader
        self.custom_data = dict(reader.storage.metadata.custom or {}) if hasattr(reader.storage, "metadata") else {}
        self._topics = {}
        for conn in reader.connections:
            info = self._topics.get(conn.topic)
            if info is not None and info.msgtype != conn.msgtype:
                raise BagError(self.path, f"topic {conn.topic} carries two types ({info.msgtype}, {conn.msgtype})")
            self._register(conn.msgtype, conn.msgdef.format.name if conn.msgdef else "NONE", conn.msgdef.data if conn.msgdef else "")
            self._topics[conn.topic] = TopicInfo(conn.msgtype, (info.count if info else 0) + conn.msgcount)

    # -- opening ---------------------------------------------------------------------------------
    def _files(self, suffix: str) -> list[Path]:
        if self.path.is_dir():
            return sorted(self.path.glob(f"*{suffix}"))
        return [self.path] if self.path.suffix == suffix else []

    def _open_stream(self, exc: Exception) -> None:
        self.truncated = True
        self.stream_stats = StreamStats(stop_reason=_one_line(exc))
        meta = self.path / "metadata.yaml" if self.path.is_dir() else None
        if meta is not None and meta.is_file():
            info = (yaml.safe_load(meta.read_text()) or {}).get("rosbag2_bagfile_information", {})
            self.custom_data = dict(info.get("custom_data") or {})
        # one scan for the topic table (counts of complete chunks only)
        topics: dict[str, TopicInfo] = {}
        for topic, msgtype, _t, _raw in self.messages():
            info = topics.setdefault(topic, TopicInfo(msgtype, 0))
            info.count += 1
        self._topics = topics
        if not topics:
            why = self.stream_stats.stop_reason if self.stream_stats else ""
            raise BagError(self.path, f"damaged or truncated MCAP with no complete message chunk ({why})")

    def _register(self, msgtype: str, fmt: str, text: str) -> None:
        if msgtype in self.typestore.fielddefs or not text:
            return
        from rosbags.typesys import get_types_from_idl, get_types_from_msg

        if not self._private_store:
            self.typestore, self._private_store = make_typestore(), True
        try:
            if fmt in ("MSG", "ros2msg"):
                self.typestore.register(get_types_from_msg(text, msgtype))
            else:
                self.typestore.register(get_types_from_idl(text.split("\n", 1)[1] if text.startswith("=" * 80) else text))
        except Exception:  # an unparsable definition only matters if the topic is used
            pass

    # -- reading ---------------------------------------------------------------------------------
    @property
    def topics(self) -> dict[str, TopicInfo]:
        return dict(self._topics or {})

    @property
    def message_count(self) -> int:
        return sum(t.count for t in (self._topics or {}).values())

    def messages(self, topics: Iterable[str] | None = None) -> Iterator[tuple[str, str, int, bytes]]:
        """(topic, msgtype, log_time_ns, raw) in storage order (log time order for rosbag2 writers)."""
        wanted = None if topics is None else set(topics)
        if self._reader is not None:
            conns = [c for c in self._reader.connections if wanted is None or c.topic in wanted]
            if not conns:
                return
            try:
                for conn, t, raw in self._reader.messages(conns):
                    yield conn.topic, conn.msgtype, t, _maybe_zstd(raw)
            except BagError:
                raise
            except Exception as exc:
                raise BagError(self.path, f"damaged while reading ({_one_line(exc)})") from None
            return
        yield from self._stream_messages(wanted)

    def _stream_messages(self, wanted) -> Iterator[tuple[str, str, int, bytes]]:
        from mcap.records import Channel, Message, Schema

        schemas, channels = {}, {}
        total = StreamStats(stop_reason=self.stream_stats.stop_reason if self.stream_stats else "")
        for path in self._files(".mcap"):
            stats = StreamStats()
            for record in iter_mcap_records(path, stats):
                if isinstance(record, Schema):
                    schemas[record.id] = record
                    self._register(record.name, record.encoding, record.data.decode())
                elif isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, Message):
                    channel = channels.get(record.channel_id)
                    if channel is None or (wanted is not None and channel.topic not in wanted):
                        continue
                    schema = schemas.get(channel.schema_id)
                    data = _maybe_zstd(record.data)
                    yield channel.topic, schema.name if schema else "", record.log_time, data
            total.messages += stats.messages
            total.bytes_read += stats.bytes_read
            total.file_size += stats.file_size
            total.stop_reason = stats.stop_reason or total.stop_reason
        self.stream_stats = total

    def deserialize(self, raw, msgtype: str, topic: str = ""):
        """A rosbags message object from CDR bytes; an unknown type is a BagError naming topic and type."""
        if msgtype not in self.typestore.fielddefs:
            raise BagError(
                self.path,
                f"unknown message type {msgtype!r} on {topic or 'a topic'}: the bag has no definition and it is not a standard ROS 2 type",
            )
        try:
            return cdr_deserialize(self.typestore, raw, msgtype)[0]
        except Exception as exc:
            raise BagError(self.path, f"cannot deserialize a {msgtype} on {topic} ({_one_line(exc)})") from None

    def close(self) -> None:
        if self._reader is not None:
            try:
                self._reader.close()
            finally:
                self._reader = None

    def __enter__(self) -> "BagReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _maybe_zstd(raw):
    """Per-message zstd (rosbag2 compression_mode: message) is recognised by its magic, so bare storage
    files without their metadata.yaml read too. CDR data never starts with these bytes."""
    if bytes(raw[:4]) == _ZSTD_MAGIC:
        import zstandard

        return zstandard.ZstdDecompressor().decompress(raw, max_output_size=1 << 31)
    return raw


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) < 200 else text[:197] + "..."


def open_bag(path) -> BagReader:
    return BagReader(path)
