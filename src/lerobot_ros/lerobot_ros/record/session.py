"""Episodes of a recording session: numbering, directories, outcomes, and the bag writer of the current one.

No ROS here: the node feeds it serialized messages and calls start/stop; tests drive it directly.
Episode directories are `<output_dir>/episode_<index:06d>`; the index continues after the highest one
already in the output directory, so a restarted recorder never overwrites (or reuses) an episode.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rosbags.interfaces import Qos

from lerobot_ros.conventions.errors import UserError

from .episode_bag_writer import BagResult, BagWriteError, EpisodeBagWriter, WriterSettings
from .live_qa import StreamQA, TopicQA
from .msgdefs import MessageDefinitions

OUTCOMES = ("success", "failure", "discard")
#: A message stamped this far before the newest one of the episode means the clock jumped back (a simulator
#: restarted under use_sim_time, a wall clock set back). Callbacks stamp in arrival order, so real messages are
#: never this far apart backwards; a bag's log times must not run backwards (readers would interleave them).
CLOCK_JUMP_NS = 50_000_000
_EPISODE_DIR = re.compile(r"^episode_(\d+)$")


class EpisodeError(UserError, RuntimeError):
    """An episode request that cannot be honoured now (already recording, nothing to stop, bad outcome)."""


@dataclass
class TopicSpec:
    topic: str
    msgtype: str
    offered_qos: list[Qos]
    expected_hz: float | None = None  # for QA: the rate the contract needs (its fps); None: no rate check
    policy: str = "hold"  # for QA: the contract's alignment of this stream
    tolerance_ns: int | None = None


def episode_dir_name(index: int) -> str:
    return f"episode_{index:06d}"


def next_free_index(output_dir: Path) -> int:
    """One past the highest episode index present in `output_dir` (0 for a new directory)."""
    highest = -1
    if output_dir.is_dir():
        for child in output_dir.iterdir():
            match = _EPISODE_DIR.match(child.name)
            if match:
                highest = max(highest, int(match.group(1)))
    return highest + 1


class EpisodeSession:
    """Owns the current episode's bag; thread-safe (DDS callbacks write while services start/stop)."""

    def __init__(
        self,
        output_dir: str | Path,
        *,
        writer: WriterSettings | None = None,
        stall_timeout_s: float = 1.0,
        contract_text: str = "",
        contract_path: str = "",
        task_key: str = "task",
        on_error: Callable[[str], None] | None = None,
        clock_ns: Callable[[], int] = time.time_ns,
    ):
        self.output_dir = Path(output_dir)
        self.writer_settings = writer or WriterSettings()
        self.stall_timeout_s = stall_timeout_s
        self.contract_text = contract_text
        self.contract_path = contract_path
        self.task_key = task_key
        self.on_error = on_error
        self.clock_ns = clock_ns
        self.msgdefs = MessageDefinitions()
        self.topics: dict[str, TopicSpec] = {}
        self.task = ""
        self.index = next_free_index(self.output_dir)
        self.writer: EpisodeBagWriter | None = None
        self.qa: StreamQA | None = None
        self.started_ns = 0
        self.started_mono = 0.0
        self.last_result: BagResult | None = None
        self.last_error: str | None = None
        #: (newest stamp before, the stamp that went back) once the clock jumped back in this episode; from then
        #: on the episode takes no more messages and the recorder ends it (recorder.Recorder.tick)
        self.clock_jump: tuple[int, int] | None = None
        self._newest_ns = 0
        self._lock = threading.RLock()

    # ---- topics ---------------------------------------------------------------------------------
    def add_topic(self, spec: TopicSpec) -> None:
        """Make a topic part of every episode from now on (and of the current one, if recording)."""
        self.msgdefs.get(spec.msgtype)  # fail early on a type we cannot describe
        with self._lock:
            if spec.topic in self.topics:
                return
            self.topics[spec.topic] = spec
            if self.writer is not None:
                assert self.qa is not None  # start() sets the QA before the writer
                self.writer.add_topic(spec.topic, spec.msgtype, spec.offered_qos)
                self.qa.add_stream(spec.topic, spec.expected_hz, spec.policy, spec.tolerance_ns)

    # ---- episode control ------------------------------------------------------------------------
    @property
    def recording(self) -> bool:
        return self.writer is not None

    def start(self, task: str | None = None) -> tuple[int, Path]:
        """Open the next episode's bag; `task` None or empty keeps the current task."""
        with self._lock:
            if self.writer is not None:
                raise EpisodeError(f"episode {self.index} is already recording; stop it first")
            if task:
                self.task = task
            self.index = max(self.index, next_free_index(self.output_dir))
            path = self.output_dir / episode_dir_name(self.index)
            self.started_ns = self.clock_ns()
            custom = {
                "task": self.task,
                "episode_index": str(self.index),
                "start_ns": str(self.started_ns),
                "contract_path": self.contract_path,
                "contract": self.contract_text,
                "recorder": "lerobot_ros.episode_recorder",
            }
            custom[self.task_key] = self.task
            writer = EpisodeBagWriter(
                path,
                settings=self.writer_settings,
                msgdefs=self.msgdefs,
                on_error=self._writer_error,
                custom_data=custom,
            )
            writer.open()  # BagWriteError for an existing dir or a full disk
            for spec in self.topics.values():
                writer.add_topic(spec.topic, spec.msgtype, spec.offered_qos)
            self.qa = StreamQA(stall_timeout_s=self.stall_timeout_s)
            for spec in self.topics.values():
                self.qa.add_stream(spec.topic, spec.expected_hz, spec.policy, spec.tolerance_ns)
            self.started_mono = time.monotonic()
            self.last_error = None
            self.clock_jump = None
            self._newest_ns = 0
            self.writer = writer
            return self.index, path

    def write(self, topic: str, stamp_ns: int, data: bytes) -> None:
        """Called from DDS callbacks for every received message; drops it when no episode is recording."""
        writer = self.writer
        if writer is None or self.clock_jump is not None:
            return
        if stamp_ns < self._newest_ns - CLOCK_JUMP_NS:
            self.clock_jump = (self._newest_ns, stamp_ns)
            return
        self._newest_ns = max(self._newest_ns, stamp_ns)
        if writer.write(topic, stamp_ns, data):
            qa = self.qa
            if qa is not None:
                qa.observe(topic, stamp_ns)

    def stop(self, outcome: str = "success", note: str = "") -> BagResult | None:
        """Close the current episode; 'discard' deletes it (returns None). The next episode gets a new index.
        `note` (why it ended, e.g. the clock jumped back) goes into the bag's custom data as `ended`."""
        if outcome not in OUTCOMES:
            raise EpisodeError(f"unknown outcome {outcome!r}; use one of {', '.join(OUTCOMES)}")
        with self._lock:
            writer, self.writer = self.writer, None
            if writer is None:
                raise EpisodeError("no episode is recording")
            if outcome == "discard":
                writer.discard()
                self.last_result = None
                return None  # the index is reused: a discarded episode leaves no directory behind
            # after a jump back the clock reads earlier than the episode's messages: it ended at the jump
            stop_ns = self.clock_jump[0] if self.clock_jump is not None else self.clock_ns()
            qa_report = self.qa.report(self.started_ns, stop_ns) if self.qa is not None else {}
            result = writer.close(
                {
                    "outcome": outcome,
                    "stop_ns": str(stop_ns),
                    "qa": json.dumps(qa_report, sort_keys=True),
                    **({"ended": note} if note else {}),
                }
            )
            self.index += 1
            self.last_result = result
            return result

    def close(self, outcome: str = "interrupted") -> BagResult | None:
        """Shut down: close a running episode properly (SIGTERM / Ctrl-C), marking its outcome."""
        with self._lock:
            if self.writer is None:
                return None
            writer, self.writer = self.writer, None
            result = writer.close({"outcome": outcome, "stop_ns": str(self.clock_ns())})
            self.index += 1
            self.last_result = result
            return result

    # ---- status ---------------------------------------------------------------------------------
    def qa_snapshot(self) -> dict[str, TopicQA]:
        """Live QA of the running episode ({} when idle)."""
        qa = self.qa
        if qa is None or self.writer is None:
            return {}
        return qa.snapshot(self.clock_ns(), self.started_ns)

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started_mono if self.writer is not None else 0.0

    def counts(self) -> dict[str, int]:
        writer = self.writer
        if writer is None:
            return {}
        return {t: writer.received.get(t, 0) for t in self.topics}

    def _writer_error(self, message: str) -> None:
        self.last_error = message
        if self.on_error is not None:
            self.on_error(message)


__all__ = ["EpisodeSession", "EpisodeError", "TopicSpec", "BagWriteError", "OUTCOMES", "next_free_index"]
