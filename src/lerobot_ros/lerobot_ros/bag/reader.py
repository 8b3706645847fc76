"""Read rosbag2 bags (folders of split files, bare .mcap/.db3; MCAP and sqlite3; zstd per file or per
message; metadata versions 1 to 9) and truncated MCAP files, behind one interface.

Every message the storage files hold is yielded, matched by topic (and type) only. `rosbags`' own
directory reader matches a storage connection to metadata.yaml's by the whole extension, QoS text
included, so a bag whose metadata.yaml serializes QoS differently from its storage (rosbag2's own v4/v5
bags, a hand-edited metadata.yaml) yields nothing there. Here metadata.yaml only orders the files,
names the compression and custom data, and is compared with the storage counts (one note when they differ).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from lerobot_ros.bag.errors import BagError
from lerobot_ros.bag.layout import BagLayout, resolve
from lerobot_ros.bag.mcap_stream import StreamStats, iter_mcap_records
from lerobot_ros.bag.typestore import cdr_deserialize, make_typestore, types_from_definition


class BagMessage(NamedTuple):
    """One stored message: topic, type, log (receive) time in ns and its raw CDR bytes."""

    topic: str
    msgtype: str
    log_time_ns: int
    data: bytes


@dataclass
class TopicInfo:
    """A topic as the storage holds it; `qos_text` and `metadata_count` are metadata.yaml's, for reports."""

    msgtype: str
    count: int
    qos_text: str = ""
    metadata_count: int | None = None


class _File:
    """One storage file: opened with rosbags' storage reader, or read front to back (a truncated MCAP)."""

    def __init__(self, path: Path, storage, stats: StreamStats | None = None):
        self.path, self.storage, self.stats = path, storage, stats


class BagReader:
    """One bag. `topics`, `custom_data`, `notes`, `messages(topics)` -> BagMessage, `deserialize`.

    A storage file that rosbags cannot open (an MCAP without its footer) is read front to back;
    `truncated` then says so and `stream_stats` says where reading stopped.
    """

    def __init__(self, path):
        self.path = Path(path)
        self.layout: BagLayout = resolve(self.path)
        self.storage = self.layout.storage
        self.custom_data: dict[str, str] = dict(self.layout.custom_data)
        self.ros_distro = self.layout.ros_distro
        self.notes: list[str] = list(self.layout.notes)
        self.typestore = make_typestore(shared=True)  # copied on the first type the bag itself defines
        self._private_store = False
        self.truncated = False
        self.stream_stats: StreamStats | None = None
        self._tmp: Path | None = None
        self._files: list[_File] = []
        self._topics: dict[str, TopicInfo] = {}
        try:
            for path in self.layout.files:
                self._files.append(self._open_file(path))
            self._build_topics()
        except BaseException:
            self.close()
            raise

    # -- opening ---------------------------------------------------------------------------------
    def _open_file(self, path: Path) -> _File:
        if self.layout.compression_mode == "file" or path.suffix == ".zstd":
            path = self._decompressed(path)
        from rosbags.rosbag2.storage_mcap import McapReader
        from rosbags.rosbag2.storage_sqlite3 import Sqlite3Reader

        storage = (Sqlite3Reader if path.suffix == ".db3" else McapReader)(path)
        try:
            storage.open()
        except Exception as exc:  # rosbags raises several types
            if path.suffix != ".mcap":
                raise BagError(path, f"cannot be read ({_one_line(exc)})") from None
            self.truncated = True
            return _File(path, None, StreamStats(stop_reason=_one_line(exc)))
        for conn in storage.connections:
            if conn.msgdef is not None:
                self._register(conn.msgtype, conn.msgdef.format.name, conn.msgdef.data)
        return _File(path, storage)

    def _decompressed(self, path: Path) -> Path:
        """A zstd-compressed storage file (compression_mode: file) unpacked into a private temp folder."""
        import zstandard

        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="lerobot_ros_bag_"))
        out = self._tmp / (path.stem if path.suffix == ".zstd" else path.name)
        try:
            with path.open("rb") as src, out.open("wb") as dst:
                zstandard.ZstdDecompressor().copy_stream(src, dst)
        except zstandard.ZstdError as exc:
            raise BagError(path, f"cannot be decompressed ({_one_line(exc)})") from None
        return out

    def _build_topics(self) -> None:
        topics: dict[str, TopicInfo] = {}
        for f in self._files:
            if f.storage is not None:
                pairs = [(c.topic, c.msgtype, c.msgcount) for c in f.storage.connections]
            else:  # one scan for the counts of the complete chunks
                counts: dict[tuple[str, str], int] = {}
                for m in self._stream_file(f, None):
                    counts[(m.topic, m.msgtype)] = counts.get((m.topic, m.msgtype), 0) + 1
                pairs = [(t, ty, n) for (t, ty), n in counts.items()]
            for topic, msgtype, count in pairs:
                info = topics.get(topic)
                if info is not None and info.msgtype != msgtype:
                    raise BagError(self.path, f"topic {topic} carries two types ({info.msgtype}, {msgtype})")
                if info is None:
                    topics[topic] = info = TopicInfo(msgtype, 0)
                info.count += count
        for name, meta in self.layout.topics.items():
            info = topics.get(name)
            if info is None and meta.count == 0:
                topics[name] = info = TopicInfo(meta.msgtype, 0)  # declared, never published
            if info is not None:
                info.qos_text, info.metadata_count = meta.qos_text, meta.count
        self._topics = topics
        if self.truncated:
            stats = [f.stats for f in self._files if f.stats is not None]
            self.stream_stats = StreamStats(
                complete=False,
                messages=sum(s.messages for s in stats),
                bytes_read=sum(s.bytes_read for s in stats),
                file_size=sum(s.file_size for s in stats),
                stop_reason="; ".join(s.stop_reason for s in stats if s.stop_reason),
            )
            if not any(i.count for i in topics.values()):
                raise BagError(
                    self.path,
                    f"damaged or truncated MCAP with no complete message chunk ({self.stream_stats.stop_reason})",
                )
        elif self.layout.has_metadata:
            self._compare_counts()

    def _compare_counts(self) -> None:
        """One note when metadata.yaml's message counts differ from what the storage holds."""
        diffs = [
            f"{name} {info.metadata_count} vs {info.count}"
            for name, info in sorted(self._topics.items())
            if info.metadata_count is not None and info.metadata_count != info.count
        ]
        diffs += [
            f"{name} {meta.count} vs 0"
            for name, meta in sorted(self.layout.topics.items())
            if name not in self._topics and meta.count
        ]
        if diffs:
            meta_total = sum(m.count for m in self.layout.topics.values())
            self.notes.append(
                f"metadata.yaml says {meta_total} messages, the storage holds {self.message_count}; "
                f"read the storage (metadata vs storage: {', '.join(diffs)})"
            )

    def _register(self, msgtype: str, fmt: str, text: str) -> None:
        if msgtype in self.typestore.fielddefs or not text:
            return
        try:
            types = types_from_definition(msgtype, fmt, text)
        except Exception:  # an unparsable definition only matters if the topic is used (deserialize says so)
            return
        if not self._private_store:
            self.typestore, self._private_store = make_typestore(), True
        try:
            self.typestore.register(types)
        except Exception:
            pass

    # -- reading ---------------------------------------------------------------------------------
    @property
    def topics(self) -> dict[str, TopicInfo]:
        return dict(self._topics)

    @property
    def message_count(self) -> int:
        return sum(t.count for t in self._topics.values())

    def messages(self, topics: Iterable[str] | None = None) -> Iterator[BagMessage]:
        """Every stored message of `topics` (all without), file by file in the layout's order, each file in
        log-time order (rosbags sorts MCAP chunks; sqlite3 by timestamp)."""
        wanted = None if topics is None else set(topics)
        for f in self._files:
            if f.storage is None:
                yield from self._stream_file(f, wanted)
                continue
            conns = [c for c in f.storage.connections if wanted is None or c.topic in wanted]
            if not conns:
                continue
            try:
                for conn, t, raw in f.storage.messages(conns):
                    yield BagMessage(conn.topic, conn.msgtype, t, _maybe_zstd(raw))
            except BagError:
                raise
            except Exception as exc:
                raise BagError(f.path, f"damaged while reading ({_one_line(exc)})") from None

    def _stream_file(self, f: _File, wanted) -> Iterator[BagMessage]:
        from mcap.records import Channel, Message, Schema

        schemas, channels = {}, {}
        stats = StreamStats()
        for record in iter_mcap_records(f.path, stats):
            if isinstance(record, Schema):
                schemas[record.id] = record
                self._register(record.name, record.encoding, record.data.decode(errors="replace"))
            elif isinstance(record, Channel):
                channels[record.id] = record
            elif isinstance(record, Message):
                channel = channels.get(record.channel_id)
                if channel is None or (wanted is not None and channel.topic not in wanted):
                    continue
                schema = schemas.get(channel.schema_id)
                yield BagMessage(
                    channel.topic, schema.name if schema else "", record.log_time, _maybe_zstd(record.data)
                )
        stats.stop_reason = stats.stop_reason or (f.stats.stop_reason if f.stats else "")
        f.stats = stats

    def deserialize(self, raw, msgtype: str, topic: str = ""):
        """A rosbags message object from CDR bytes; an unknown type is a BagError naming topic and type."""
        if msgtype not in self.typestore.fielddefs:
            raise BagError(
                self.path,
                f"unknown message type {msgtype!r} on {topic or 'a topic'}: the bag has no usable definition and it is not a standard ROS 2 type",
            )
        try:
            return cdr_deserialize(self.typestore, raw, msgtype)[0]
        except Exception as exc:
            raise BagError(self.path, f"cannot deserialize a {msgtype} on {topic} ({_one_line(exc)})") from None

    def close(self) -> None:
        files, self._files = self._files, []
        for f in files:
            if f.storage is not None:
                try:
                    f.storage.close()
                except Exception:
                    pass
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> BagReader:
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
