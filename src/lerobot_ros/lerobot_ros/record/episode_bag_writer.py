"""One rosbag2 (MCAP, format version 9) per episode, written on its own thread so DDS callbacks never block.

Callers hand over serialized CDR bytes exactly as received (`write(topic, stamp_ns, data)` only appends to
a queue). The writer thread uses the `rosbags` Writer (with a copy-saving MCAP storage, see fast_mcap_writer) and adds what
a recorder needs on top of it:

- time-bounded chunks: a chunk is closed and flushed to the OS at least every `flush_interval_s`, so a
  SIGKILL loses at most that much (rosbags alone closes a chunk only every 1 MiB, which is minutes of
  joint states); the bytes of every closed chunk are in the OS page cache and survive a killed process;
- a checkpoint after every flushed chunk (file offset, counts), so an I/O error such as a full disk cuts
  the file back to its last whole chunk and still writes the summary and metadata.yaml: the episode stops
  with a clear error and what was written stays readable;
- a low-free-space guard that stops the episode before the disk is actually full;
- a provisional metadata.yaml written at open (no messages yet, custom_data with outcome "recording"),
  replaced by the real one at close: a bag whose recorder was killed still carries its task and episode
  index into the converter's truncated-MCAP read and into `lerobot-ros repair`.
"""

from __future__ import annotations

import queue
import shutil
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import TypedDict

import yaml
from rosbags.interfaces import Connection, Qos
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.enums import CompressionFormat, CompressionMode

from lerobot_ros.bag.typestore import with_distro
from lerobot_ros.conventions.errors import UserError

from .fast_mcap_writer import FastMcapWriter
from .msgdefs import MessageDefinitions

UNFINISHED = "recording"  #: custom_data outcome of a bag whose recorder never closed it
_STOP = object()
_ADD = object()


@dataclass(frozen=True)
class WriterSettings:
    """How an episode bag is written; one source for the writer, the session, the node and `lerobot-ros record`.

    compression: MCAP chunk compression, "none" or "zstd"; flush_interval_s: the longest a chunk stays open
    (what a SIGKILL can lose); min_free_bytes: the episode stops before the disk has less free space.
    """

    compression: str = "none"
    flush_interval_s: float = 0.5
    min_free_bytes: int = 64 << 20

    COMPRESSIONS = ("none", "zstd")

    def __post_init__(self):
        if self.compression in (None, ""):
            object.__setattr__(self, "compression", "none")
        if self.compression not in self.COMPRESSIONS:
            raise ValueError(f"compression must be 'none' or 'zstd', not {self.compression!r}")
        if not self.flush_interval_s > 0:
            raise ValueError(f"flush_interval_s must be positive, got {self.flush_interval_s}")
        if self.min_free_bytes < 0:
            raise ValueError(f"the minimum free space must be >= 0, got {self.min_free_bytes} bytes")


class _Checkpoint(TypedDict):
    """The writer's state at the end of the last whole chunk on disk (see `_take_checkpoint`)."""

    offset: int
    nchunks: int
    counts: dict[int, int]
    channel_stats: dict[int, int]
    written: dict[str, int]
    times: tuple[int, int, int, int]


class BagWriteError(UserError, RuntimeError):
    """The bag could not be created or written (exists already, disk full, I/O error)."""


@dataclass
class BagResult:
    """What ended up in a closed bag."""

    path: Path
    counts: dict[str, int]  #: messages written per topic
    dropped: dict[str, int]  #: messages received but not written (only after an error), per topic
    start_ns: int  #: first message stamp (0 if empty)
    end_ns: int  #: last message stamp (0 if empty)
    error: str | None = None  #: why the episode stopped early, if it did
    readable: bool = True  #: summary + metadata.yaml written (else: needs `lerobot-ros repair`)
    custom_data: dict[str, str] = field(default_factory=dict)

    @property
    def message_count(self) -> int:
        return sum(self.counts.values())


class EpisodeBagWriter:
    """Writes one bag directory; see the module docstring. Not reusable: one instance per episode."""

    def __init__(
        self,
        path: str | Path,
        *,
        settings: WriterSettings | None = None,
        msgdefs: MessageDefinitions | None = None,
        on_error: Callable[[str], None] | None = None,
        custom_data: dict[str, str] | None = None,
    ):
        self.path = Path(path)
        settings = settings or WriterSettings()
        self.settings = settings
        self.compression = "zstd" if settings.compression == "zstd" else None
        self.flush_interval_s = float(settings.flush_interval_s)
        self.min_free_bytes = int(settings.min_free_bytes)
        self.msgdefs = msgdefs or MessageDefinitions()
        self.on_error = on_error
        self.custom_data: dict[str, str] = dict(custom_data or {})
        self.error: str | None = None
        self.received: dict[str, int] = defaultdict(int)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._writer: Writer | None = None
        self._conns: dict[str, Connection] = {}
        self._thread: threading.Thread | None = None
        self._accepting = False
        self._result: BagResult | None = None
        self._written: dict[str, int] = defaultdict(int)
        self._checkpoint: _Checkpoint | None = None
        self._chunk_since: float | None = None
        self._chunks_seen = 0
        self._next_space_check = 0.0

    # ---- caller side (any thread) -------------------------------------------------------------
    def open(self) -> EpisodeBagWriter:
        """Create the bag directory (never an existing one) and start the writer thread."""
        if self.path.exists():
            raise BagWriteError(f"{self.path} exists already; an episode directory is never overwritten")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # an unwritable or missing output folder: one line, nothing made
            raise BagWriteError(f"cannot create {self.path.parent}: {exc.strerror or exc}") from None
        self._check_free_space(raise_error=True)
        writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        writer.STORAGE_PLUGINS = {**Writer.STORAGE_PLUGINS, StoragePlugin.MCAP: FastMcapWriter}
        if self.compression:
            writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
        try:
            writer.open()
        except Exception as exc:  # rosbags raises WriterError for an existing dir, OSError for the rest
            raise BagWriteError(f"cannot create bag {self.path}: {exc}") from exc
        self._writer = writer
        self._storage().ros_distro = self.msgdefs.distro
        try:
            self._write_provisional_metadata()
            self._take_checkpoint()
        except OSError as exc:  # the disk filled (or the folder went) right after opening: no half episode left
            self._writer = None
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - the folder goes anyway
                pass
            shutil.rmtree(self.path, ignore_errors=True)
            raise BagWriteError(f"cannot write bag {self.path}: {exc.strerror or exc}") from None
        self._accepting = True
        self._thread = threading.Thread(target=self._run, name=f"bag-writer:{self.path.name}", daemon=True)
        self._thread.start()
        return self

    def add_topic(self, topic: str, msgtype: str, offered_qos: Iterable[Qos] = ()) -> None:
        """Declare a topic (once) before its first message; the definition is looked up here, not later."""
        msgdef, rihs01 = self.msgdefs.get(msgtype)
        self._queue.put((_ADD, topic, msgtype, msgdef, rihs01, list(offered_qos)))

    def write(self, topic: str, stamp_ns: int, data: bytes) -> bool:
        """Queue one serialized message; never blocks. False once the writer stopped taking messages."""
        self.received[topic] += 1
        if not self._accepting:
            return False
        self._queue.put((topic, stamp_ns, data))
        return True

    @property
    def backlog(self) -> int:
        """Messages queued but not yet written."""
        return self._queue.qsize()

    def written(self) -> dict[str, int]:
        return dict(self._written)

    def close(self, custom_data: dict[str, str] | None = None, timeout: float = 120.0) -> BagResult:
        """Write everything queued, then the summary and metadata.yaml (with `custom_data` merged in)."""
        if self._result is not None:
            return self._result
        self._accepting = False
        if self._thread is None:
            raise BagWriteError(f"bag {self.path} was never opened")
        self._queue.put((_STOP, dict(custom_data or {})))
        self._thread.join(timeout=timeout)
        if self._thread.is_alive():
            raise BagWriteError(f"bag writer for {self.path} did not finish within {timeout:.0f} s")
        assert self._result is not None
        return self._result

    def discard(self) -> None:
        """Stop and delete the whole episode directory (outcome 'discard')."""
        try:
            self.close({"outcome": "discard"})
        except BagWriteError:
            pass
        shutil.rmtree(self.path, ignore_errors=True)

    # ---- writer thread --------------------------------------------------------------------------
    def _open_writer(self) -> Writer:
        """The rosbags Writer; open() sets it before the writer thread starts."""
        assert self._writer is not None
        return self._writer

    def _storage(self) -> FastMcapWriter:
        """The open writer's storage: open() installs FastMcapWriter as the MCAP plugin."""
        storage = self._open_writer().storage
        assert isinstance(storage, FastMcapWriter)
        return storage

    def _run(self) -> None:
        final: dict[str, str] = {}
        poll = max(0.01, self.flush_interval_s / 4)
        while True:
            try:
                item = self._queue.get(timeout=poll)
            except queue.Empty:
                item = None
            if item is not None and item[0] is _STOP:
                final = item[1]
                break
            if item is not None and self.error is None:
                try:
                    self._handle(item)
                except OSError as exc:
                    self._fail(f"write failed: {exc}", io_error=True)
                except Exception as exc:  # a bug or bad input must not kill the thread silently
                    self._fail(f"write failed: {type(exc).__name__}: {exc}")
            if self.error is None:
                try:
                    self._maybe_flush()
                except OSError as exc:
                    self._fail(f"write failed: {exc}", io_error=True)
        self._finish(final)

    def _handle(self, item: tuple) -> None:
        writer = self._open_writer()
        if item[0] is _ADD:
            _, topic, msgtype, msgdef, rihs01, qos = item
            if topic not in self._conns:
                self._conns[topic] = writer.add_connection(
                    topic, msgtype, msgdef=msgdef, rihs01=rihs01, offered_qos_profiles=qos
                )
            return
        topic, stamp_ns, data = item
        conn = self._conns.get(topic)
        if conn is None:
            raise BagWriteError(f"message on undeclared topic {topic!r}; call add_topic first")
        if self._chunk_since is None:
            self._chunk_since = time.monotonic()
        writer.write(conn, stamp_ns, data)
        self._written[topic] += 1
        storage = self._storage()
        if len(storage.chunks) != self._chunks_seen:  # rosbags closed a full (1 MiB) chunk by itself
            self._flush_file()

    def _maybe_flush(self) -> None:
        if self._chunk_since is not None and time.monotonic() - self._chunk_since >= self.flush_interval_s:
            storage = self._storage()
            if storage.chunk.bio.tell():
                storage.close_chunk()
            self._flush_file()

    def _flush_file(self) -> None:
        storage = self._storage()
        storage.bio.flush()
        self._chunks_seen = len(storage.chunks)
        self._chunk_since = None if not storage.chunk.bio.tell() else time.monotonic()
        self._take_checkpoint()
        now = time.monotonic()
        if now >= self._next_space_check:
            self._next_space_check = now + 1.0
            self._check_free_space(raise_error=False)

    def _take_checkpoint(self) -> None:
        """Remember the state at the end of the last whole chunk on disk."""
        writer, storage = self._open_writer(), self._storage()
        self._checkpoint = {
            "offset": storage.bio.tell(),
            "nchunks": len(storage.chunks),
            "counts": dict(writer.counts),
            "channel_stats": dict(storage.channel_stats),
            "written": dict(self._written),
            "times": (writer.min_timestamp, writer.max_timestamp, storage.message_start_time, storage.message_end_time),
        }

    def _check_free_space(self, raise_error: bool) -> None:
        try:
            free = shutil.disk_usage(self.path if self.path.exists() else self.path.parent).free
        except OSError:
            return
        if free < self.min_free_bytes:
            msg = (
                f"disk nearly full: {free / 2**20:.0f} MiB free under {self.path.parent} "
                f"(minimum {self.min_free_bytes / 2**20:.0f} MiB); free space or choose another output dir"
            )
            if raise_error:
                raise BagWriteError(msg)
            self._fail(msg)

    def _fail(self, message: str, io_error: bool = False) -> None:
        """Stop taking messages; after an I/O error, cut the file back to its last whole chunk."""
        self._accepting = False
        self.error = message
        if io_error:
            try:
                self._rollback()
            except OSError as exc:  # the device is gone (a USB disk pulled): the thread must still finish
                self.error += f"; cutting the bag back to its last whole chunk failed: {exc}"
        if self.on_error is not None:
            try:
                self.on_error(message)
            except Exception:
                pass

    def _rollback(self) -> None:
        writer, storage, cp = self._open_writer(), self._storage(), self._checkpoint
        assert cp is not None  # open() takes the first checkpoint before the writer thread starts
        try:
            storage.bio.close()
        except OSError:
            pass
        with open(storage.path, "r+b") as fh:
            fh.truncate(cp["offset"])
        # rosbags annotates bio as the BufferedWriter its "xb" open gives; "r+b" (an existing file) gives a
        # BufferedRandom, which has the same write/seek/tell/flush.
        storage.bio = open(storage.path, "r+b")  # type: ignore[assignment]  # noqa: SIM115 - the writer owns it from here
        storage.bio.seek(cp["offset"])
        del storage.chunks[cp["nchunks"] :]
        storage.chunk = type(storage.chunk)(2**63 - 1, 0, BytesIO(), defaultdict(list))
        writer.counts.update(cp["counts"])
        storage.channel_stats.update(cp["channel_stats"])
        for conn_id in list(writer.counts):
            writer.counts[conn_id] = cp["counts"].get(conn_id, 0)
            storage.channel_stats[conn_id] = cp["channel_stats"].get(conn_id, 0)
        self._written = defaultdict(int, cp["written"])
        writer.min_timestamp, writer.max_timestamp, storage.message_start_time, storage.message_end_time = cp["times"]

    def _finish(self, final: dict[str, str]) -> None:
        # Whatever is still queued after an error is dropped (and counted as such).
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        writer = self._open_writer()
        self.custom_data.update({k: str(v) for k, v in final.items()})
        if self.error:
            self.custom_data["error"] = self.error
        for key, value in self.custom_data.items():
            writer.set_custom_data(key, str(value))
        readable = True
        try:
            writer.close()
            meta, tmp = self.path / "metadata.yaml", self.path / "metadata.yaml.tmp"
            tmp.write_text(with_distro(meta.read_text(), self.msgdefs.distro))
            tmp.replace(meta)
        except OSError as exc:
            readable = False
            self.error = (self.error + "; " if self.error else "") + f"closing the bag failed: {exc}"
            try:
                storage = writer.storage  # None once writer.close() itself got through
                if isinstance(storage, FastMcapWriter):
                    storage.bio.close()
            except Exception:
                pass
        start = writer.min_timestamp if writer.max_timestamp else 0
        written = dict(self._written)
        dropped = {t: n - written.get(t, 0) for t, n in self.received.items() if n - written.get(t, 0) > 0}
        self._result = BagResult(
            self.path, written, dropped, start, writer.max_timestamp, self.error, readable, dict(self.custom_data)
        )

    def _write_provisional_metadata(self) -> None:
        """metadata.yaml for the time until close: our custom_data, no messages (rosbags overwrites it)."""
        mcap = self._storage().path.name
        info = {
            "version": 9,
            "storage_identifier": "mcap",
            "relative_file_paths": [mcap],
            "duration": {"nanoseconds": 0},
            "starting_time": {"nanoseconds_since_epoch": 0},
            "message_count": 0,
            "topics_with_message_count": [],
            "compression_format": "",
            "compression_mode": "",
            "files": [
                {
                    "path": mcap,
                    "starting_time": {"nanoseconds_since_epoch": 0},
                    "duration": {"nanoseconds": 0},
                    "message_count": 0,
                }
            ],
            "custom_data": {**{k: str(v) for k, v in self.custom_data.items()}, "outcome": UNFINISHED},
            "ros_distro": self.msgdefs.distro,
        }
        tmp = self.path / "metadata.yaml.tmp"
        tmp.write_text(yaml.safe_dump({"rosbag2_bagfile_information": info}, sort_keys=False))
        tmp.replace(self.path / "metadata.yaml")


def read_custom_data(bag_dir: str | Path) -> dict[str, str]:
    """custom_data of a bag directory's metadata.yaml ({} when there is none)."""
    try:
        doc = yaml.safe_load((Path(bag_dir) / "metadata.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return {}
    return dict((doc.get("rosbag2_bagfile_information") or {}).get("custom_data") or {})
