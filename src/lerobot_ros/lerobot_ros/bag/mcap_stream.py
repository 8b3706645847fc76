"""Read a truncated MCAP front to back (writer killed before the summary/footer), and recover it.

`rosbags` needs the footer and rejects such files; the `mcap` package's StreamReader reads records in
order, so every complete chunk is still readable. Reading stops at the first incomplete record.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mcap.records import Channel, Footer, Message, Schema
from mcap.stream_reader import StreamReader

from lerobot_ros.bag.errors import BagError

if TYPE_CHECKING:
    from rosbags.interfaces import Connection


@dataclass
class StreamStats:
    """What a front-to-back read found."""

    complete: bool = False  # reached the footer (the file was not truncated)
    messages: int = 0
    bytes_read: int = 0
    file_size: int = 0
    stop_reason: str = ""


def iter_mcap_records(path: Path, stats: StreamStats) -> Iterator[object]:
    """Schema, Channel and Message records of `path` in file order, until the end or the first damaged record."""
    path = Path(path)
    stats.file_size = path.stat().st_size
    with path.open("rb") as fh:
        reader = StreamReader(fh, record_size_limit=stats.file_size + 1)
        records = reader.records
        while True:
            try:
                record = next(records)
            except StopIteration:
                break
            except Exception as exc:  # truncated or damaged: keep what came before
                if stats.messages == 0 and fh.tell() <= 8:
                    raise BagError(path, f"not an MCAP file ({type(exc).__name__}: {exc})") from None
                stats.stop_reason = f"{type(exc).__name__}: {exc}".strip(": ")
                break
            stats.bytes_read = fh.tell()
            if isinstance(record, Message):
                stats.messages += 1
                yield record
            elif isinstance(record, (Schema, Channel)):
                yield record
            elif isinstance(record, Footer):
                stats.complete = True


@dataclass
class RecoveryReport:
    """Result of `recover_mcap`: what was kept, per topic, and why reading stopped."""

    source: str
    output: str
    complete: bool
    messages: int
    topics: dict[str, int] = field(default_factory=dict)
    bytes_read: int = 0
    file_size: int = 0
    stop_reason: str = ""
    #: topics left out, with why (a message definition that cannot be parsed: the copy could not be read back)
    skipped: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _source_files(src: Path) -> list[Path]:
    if src.is_dir():
        files = sorted(src.glob("*.mcap"))
        if not files:
            raise BagError(src, "no .mcap file in this folder")
        return files
    if not src.is_file():
        raise BagError(src, "does not exist")
    return [src]


def recover_mcap(src, dst) -> RecoveryReport:
    """Write a readable rosbag2 (MCAP, with metadata.yaml) at folder `dst` from the complete chunks of `src`
    (a .mcap file, or a bag folder whose .mcap files lack their footer or whose metadata.yaml is missing)."""
    import yaml
    from rosbags.rosbag2 import StoragePlugin
    from rosbags.rosbag2.metadata import parse_qos
    from rosbags.typesys.store import Typestore  # noqa: F401  (typing only)

    from lerobot_ros.bag.typestore import make_typestore, types_from_definition
    from lerobot_ros.bag.writer import distro_writer_class

    src, dst = Path(src), Path(dst)
    if dst.exists():
        raise BagError(dst, "exists already; choose a new output folder")
    store = make_typestore()
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    conns: dict[int, Connection | None] = {}
    counts: dict[str, int] = {}
    skipped: dict[str, str] = {}
    total = StreamStats()
    sources = list(_source_files(src))  # a missing or empty source fails here, before anything is created
    tmp_parent = dst.with_name(f".{dst.name}.partial")
    if tmp_parent.exists():
        raise BagError(tmp_parent, "exists (left by an earlier run?); remove it first")
    tmp_parent.mkdir(parents=True)
    tmp = tmp_parent / dst.name
    writer = distro_writer_class(_source_distro(src))(tmp, version=9, storage_plugin=StoragePlugin.MCAP)
    try:
        writer.open()
        for path in sources:
            stats = StreamStats()
            for record in iter_mcap_records(path, stats):
                if isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, Message):
                    if record.channel_id in conns and conns[record.channel_id] is None:
                        continue  # a skipped topic
                    conn = conns.get(record.channel_id)
                    if conn is None:
                        channel = channels.get(record.channel_id)
                        if channel is None:
                            raise BagError(
                                path, f"a message on channel {record.channel_id} comes before its channel record"
                            )
                        schema = schemas.get(channel.schema_id)
                        if schema is None:
                            raise BagError(path, f"channel {channel.topic} has no schema record")
                        # the source's own definition and hash, copied; a bag without hashes (before Jazzy):
                        # the hash of the definition as the reader parses it (.msg, .idl, a service's .srv)
                        text, rihs01 = schema.data.decode(), channel.metadata.get("topic_type_hash", "")
                        try:
                            if not rihs01:
                                if schema.name not in store.fielddefs:
                                    store.register(types_from_definition(schema.name, schema.encoding, text))
                                rihs01 = store.hash_rihs01(schema.name)
                        except Exception as exc:  # noqa: BLE001 - rosbags' parse errors: that topic only
                            skipped[channel.topic] = (
                                f"its {schema.name} definition cannot be parsed ({type(exc).__name__})"
                            )
                            conns[record.channel_id] = None
                            continue
                        qos_text = channel.metadata.get("offered_qos_profiles", "")
                        qos = parse_qos(yaml.safe_load(qos_text) or []) if qos_text else []
                        conn = writer.add_connection(
                            channel.topic, schema.name, msgdef=text, rihs01=rihs01, offered_qos_profiles=qos
                        )
                        conns[record.channel_id] = conn
                    writer.write(conn, record.log_time, record.data)
                    counts[conn.topic] = counts.get(conn.topic, 0) + 1
            total.messages += stats.messages
            total.bytes_read += stats.bytes_read
            total.file_size += stats.file_size
            total.complete = stats.complete if total.stop_reason == "" else False
            if stats.stop_reason:
                total.stop_reason = f"{path.name}: {stats.stop_reason}"
        writer.close()
    except BaseException:
        with contextlib.suppress(Exception):
            writer.close()  # its file handle; the half-written copy goes with the folder
        _remove_tree(tmp_parent)
        raise
    tmp.rename(dst)
    tmp_parent.rmdir()
    return RecoveryReport(
        str(src),
        str(dst),
        total.complete,
        total.messages,
        counts,
        total.bytes_read,
        total.file_size,
        total.stop_reason,
        skipped,
    )


def _source_distro(src: Path) -> str:
    """The ros_distro the source bag's metadata.yaml names (a recorder writes it at open), else the typestore's."""
    import yaml

    from lerobot_ros.bag.typestore import TYPESTORE_DISTRO

    try:
        info = yaml.safe_load(((src if src.is_dir() else src.parent) / "metadata.yaml").read_text())[
            "rosbag2_bagfile_information"
        ]
        distro = str(info.get("ros_distro") or "")
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        distro = ""
    return distro if distro and distro != "rosbags" else TYPESTORE_DISTRO


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
