"""Turn the MCAP of a killed recorder (no summary, no footer, no metadata.yaml) into a readable bag.

`rosbags` rejects such a file ("File end magic is invalid"). The `mcap` package's stream reader reads
records front to back; every chunk that was completely written is recovered (schemas, channels and
messages), the partial chunk at the end is dropped. The result is written as a fresh rosbag2 directory
with the `rosbags` Writer, so `rosbags` and `ros2 bag` read it, with the episode's custom_data taken from
the recorder's sidecar file.

This is the recorder's own small recovery step; see lerobot_ros.bag for the converter's reader.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from mcap.records import Channel, Message, Schema
from mcap.stream_reader import StreamReader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.metadata import parse_qos
from rosbags.typesys import get_types_from_msg

from .bag_writer import read_sidecar
from .msgdefs import MessageDefinitions


class RecoverError(RuntimeError):
    """The input is not an MCAP file we can recover anything from."""


@dataclass
class RecoverResult:
    src: Path
    dst: Path
    counts: dict[str, int] = field(default_factory=dict)
    bytes_read: int = 0
    bytes_total: int = 0
    stopped_because: str = ""

    @property
    def message_count(self) -> int:
        return sum(self.counts.values())


def find_mcap(path: str | Path) -> Path:
    """The .mcap of a bag directory, or the file itself."""
    path = Path(path)
    if path.is_file():
        return path
    if path.is_dir():
        files = sorted(path.glob("*.mcap"))
        if len(files) == 1:
            return files[0]
        if not files:
            raise RecoverError(f"{path} holds no .mcap file; only MCAP bags can be repaired")
        raise RecoverError(f"{path} holds {len(files)} .mcap files; pass the one to repair")
    raise RecoverError(f"{path} does not exist")


def _definition(msgdefs: MessageDefinitions, schema: Schema) -> tuple[str, str]:
    """msgdef text and RIHS01 hash of a recovered schema (installed type first, else the schema text)."""
    try:
        return msgdefs.get(schema.name)
    except Exception:
        text = schema.data.decode()
        first = text.split("\n" + "=" * 80 + "\n")[0]
        msgdefs.typestore.register(get_types_from_msg(first, schema.name))
        return text, msgdefs.typestore.hash_rihs01(schema.name)


def _complete_records(fh, result: RecoverResult):
    """The records of an MCAP stream up to where it is damaged (a record cut short, a bad length...)."""
    records = iter(StreamReader(fh, skip_magic=False).records)
    while True:
        try:
            record = next(records)
        except StopIteration:
            result.stopped_because = "end of file"
            return
        except Exception as exc:  # EndOfFile, struct.error ...: the damaged tail starts here
            result.stopped_because = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            return
        yield record


def recover_mcap_bag(src: str | Path, dst: str | Path) -> RecoverResult:
    """Copy every message of complete chunks of `src` (bag dir or .mcap) into a new bag dir `dst`."""
    mcap_path = find_mcap(src)
    dst = Path(dst)
    if dst.exists():
        raise RecoverError(f"{dst} exists already; choose another output (a bag is never overwritten)")
    result = RecoverResult(Path(src), dst, bytes_total=mcap_path.stat().st_size)
    sidecar = read_sidecar(mcap_path.parent)
    msgdefs = MessageDefinitions()
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    conns: dict[int, object] = {}
    writer = Writer(dst, version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    try:
        with open(mcap_path, "rb") as fh:
            for record in _complete_records(fh, result):
                if isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, Message) and record.channel_id in channels:
                    channel = channels[record.channel_id]
                    conn = conns.get(record.channel_id)
                    if conn is None:
                        schema = schemas[channel.schema_id]
                        msgdef, rihs01 = _definition(msgdefs, schema)
                        qos_text = channel.metadata.get("offered_qos_profiles", "")
                        qos = parse_qos(yaml.safe_load(qos_text) if qos_text else [])
                        conn = conns[record.channel_id] = writer.add_connection(
                            channel.topic, schema.name, msgdef=msgdef, rihs01=rihs01,
                            serialization_format=channel.message_encoding, offered_qos_profiles=qos)
                    writer.write(conn, record.log_time, record.data)
                    result.counts[channel.topic] = result.counts.get(channel.topic, 0) + 1
            result.bytes_read = fh.tell()
        custom = dict(sidecar.get("custom_data", {}))
        custom.setdefault("outcome", "interrupted")
        custom["repaired_from"] = str(mcap_path)
        for key, value in custom.items():
            writer.set_custom_data(key, str(value))
        writer.close()
    except BaseException:
        writer.abort()
        shutil.rmtree(dst, ignore_errors=True)
        raise
    if not result.counts and not channels:
        shutil.rmtree(dst, ignore_errors=True)
        raise RecoverError(f"{mcap_path}: no complete chunk found ({result.stopped_because}); nothing to recover")
    return result

