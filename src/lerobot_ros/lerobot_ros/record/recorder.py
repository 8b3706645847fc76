"""The episode recorder without ROS: what episode_recorder does on each control tick, command and service.

`EpisodeRecorder` (the node) only moves things between ROS and this: it feeds messages (`message`),
service and keyboard requests (`start`, `stop`, `command`) and a periodic `tick`, and publishes what
`status()` and `diagnostics()` return. Here the typed actions of `EpisodeControl` are carried out on the
`EpisodeSession`; the automatic loop's first episode waits for every wanted topic; a writer error ends
the session; a stop request (Ctrl-C / SIGTERM) first drains what DDS already delivered. When the session
is over `exit_code` is set: the node then ends its executor (it never raises out of a callback).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import NamedTuple, Protocol

from lerobot_ros.configs import live_names
from lerobot_ros.processes.memory import release_free_heap

from .config import RecorderConfig
from .episode_bag_writer import BagResult, BagWriteError, WriterSettings
from .episode_loop import IDLE, RECORDING, RESETTING, Action, EpisodeControl, Finish, Start, Stop
from .live_qa import ERROR, OK, WARN  # diagnostic_msgs/DiagnosticStatus levels
from .session import EpisodeError, EpisodeSession
from .streams import RecordingPlan, WantedTopic, plan_from_contract, plan_from_topics

IGNORED_TOPICS = frozenset({"/rosout", "/parameter_events", "/diagnostics"})  # never recorded by all_topics
BACKLOG_WARN = 500  # queued messages (~5 s of 3 cameras) before /diagnostics warns
QUIET_S = 0.25  # draining ends once no message arrived for this long (or after drain_s)

#: settings `reconfigure` applies while recording (the node's other parameters are read-only)
RECONFIGURABLE = live_names(RecorderConfig)


class Log(Protocol):
    """What the recorder logs through: an rclpy logger or a `logging.Logger`."""

    def info(self, message: str) -> object: ...
    def warning(self, message: str) -> object: ...
    def error(self, message: str) -> object: ...


class Status(NamedTuple):
    """The contents of one lerobot_ros_msgs/EpisodeStatus."""

    episode_index: int
    step: int
    done: bool
    success: bool
    task: str


class Diagnostic(NamedTuple):
    """The contents of one diagnostic_msgs/DiagnosticStatus."""

    level: int
    name: str
    message: str
    values: dict[str, str]


class Recorder:
    """Episode control, topic readiness, draining and the status/QA reports of one recording session."""

    def __init__(
        self,
        session: EpisodeSession,
        control: EpisodeControl,
        wanted: Iterable[WantedTopic],
        log: Log,
        *,
        now: float,
        all_topics: bool = False,
        fps: float | None = None,
        task: str = "",
        default_task: str = "",
        task_topic: tuple[str, str] | None = None,
        default_outcome: str = "success",
        exit_when_done: bool = True,
        wait_for_topics_s: float = 10.0,
        drain_s: float = 2.0,
        progress_period_s: float = 1.0,
        on_status: Callable[[Status], None] | None = None,
        on_saved: Callable[[BagResult], None] | None = None,
    ):
        self.session, self.control, self.log = session, control, log
        self.wanted: dict[str, WantedTopic] = {}
        for w in wanted:
            self.wanted.setdefault(w.topic, w)  # a contract's topic wins over the same one listed again
        self.subscribed: set[str] = set()
        self.all_topics = all_topics
        self.fps = fps
        self._last_done: tuple[int, bool] | None = None  # (index, success) of the episode that ended last
        self.default_task = default_task
        session.task = task or default_task
        # (topic, type) whose newest message is the task of the next episode, unless `task` was given: a latched
        # task published before an episode starts is not in that episode's bag, so it goes into its metadata
        self.task_topic = None if task else task_topic
        #: the contract's task topic: metadata, not data; once `task` is given, nothing waits for it
        self._task_topic_name = task_topic[0] if task_topic else None
        self.default_outcome = default_outcome
        self.exit_when_done = exit_when_done
        self.wait_for_topics_s = wait_for_topics_s
        self.drain_s = drain_s
        self.progress_period_s = progress_period_s
        self.on_status = on_status
        self.on_saved = on_saved
        self.exit_code: int | None = None  # set when the session is over: the node stops spinning
        self.stop_requested: float | None = None
        self._born = now
        self._last_message = 0.0
        self._last_progress = float("-inf")  # the first tick reports
        self._warned_missing = False
        if not self.wanted and not all_topics:
            raise ValueError("nothing to record: set `contract`, `topics` or `all_topics:=true`")

    # ---- topics ---------------------------------------------------------------------------------
    def offer(self, topics: Iterable[str]) -> None:
        """all_topics: every topic in the graph becomes wanted, except ROS's own and our status."""
        if self.all_topics:
            for name in topics:
                if name not in self.wanted and name not in IGNORED_TOPICS and not name.endswith("episode_status"):
                    self.wanted[name] = WantedTopic(name, None, None)

    def missing(self) -> list[str]:
        return [t for t in self.wanted if t not in self.subscribed]

    def message(self, topic: str, stamp_ns: int, data: bytes, now: float) -> None:
        self._last_message = now
        self.session.write(topic, stamp_ns, data)
        if self.task_topic is not None and topic == self.task_topic[0]:
            self._take_task(topic, self.task_topic[1], data)

    def _take_task(self, topic: str, msgtype: str, data: bytes) -> None:
        from lerobot_ros.bag.typestore import cdr_deserialize, make_typestore

        try:
            msg, _used = cdr_deserialize(make_typestore(shared=True), data, msgtype)
            text = str(msg.task if hasattr(msg, "task") else msg.data)
        except Exception as exc:  # a malformed message: keep the task we have, say so once per message
            self.log.warning(f"{topic}: cannot read the task ({type(exc).__name__}: {exc})")
            return
        if text and text != self.session.task:
            self.session.task = text

    # ---- requests -------------------------------------------------------------------------------
    def start(self, task: str | None, now: float) -> str:
        """The start_episode service; EpisodeError / BagWriteError when it cannot start."""
        message = self._start(task)
        self.control.started(now)
        return message

    def stop(self, outcome: str | None, now: float) -> tuple[str, str]:
        """The stop_episode service: (message, bag path or "" when discarded); None: the default outcome."""
        outcome = outcome or self.default_outcome
        message = self._stop(outcome)
        result = self.session.last_result if outcome != "discard" else None
        self._do(self.control.stopped(outcome, now))
        return message, "" if result is None else str(result.path)

    def command(self, name: str, now: float) -> None:
        """A keyboard command from episode_control (next | rerecord | stop); a wrong one is logged."""
        try:
            self._do(self.control.command(name.strip().lower(), now))
        except ValueError as exc:
            self.log.warning(str(exc))
        except BagWriteError:  # already logged; the episode could not start: the loop ends, as on a tick
            self.control.end(now)
        except EpisodeError:
            pass  # already logged

    def request_stop(self, now: float) -> bool:
        """Ctrl-C / SIGTERM: drain, then end. False when one was requested already (the caller stops now)."""
        if self.stop_requested is not None:
            return False
        self.stop_requested = now
        return True

    # ---- the control tick -----------------------------------------------------------------------
    def tick(self, now: float) -> bool:
        """Advance (call every few tens of ms); True when the periodic progress report is due."""
        if self.exit_code is not None:
            return False
        if self.stop_requested is not None:
            # take what DDS already delivered (until the streams go quiet, at most drain_s), then end
            if now - self._last_message > QUIET_S or now - self.stop_requested > self.drain_s:
                self.exit_code = 0
            return False
        if self.session.recording and self.session.last_error:
            # disk full / I/O error: the writer stopped; close what it wrote (readable) and end the loop
            self._stop("failure")
            self.control.end(now)
            self._finish(1)
        if self.session.recording and self.session.clock_jump is not None:
            self._clock_jumped(now)
        if self.control.state != IDLE or self._topics_ready(now):
            try:
                self._do(self.control.tick(now))
            except (EpisodeError, BagWriteError):
                self.control.end(now)
        due = now - self._last_progress >= self.progress_period_s
        if due:
            self._last_progress = now
        return due

    def _clock_jumped(self, now: float) -> None:
        """ROS time went back mid-episode: end the episode at the jump with what it has (its bag stays ordered and
        readable), say so in one line, and go on as after any kept episode (the automatic loop starts the next
        one on the new clock; a service-driven session waits for the next start)."""
        before, after = self.session.clock_jump or (0, 0)
        index = self.session.index
        note = f"ROS time jumped back {(before - after) / 1e9:.1f} s (a simulator restarted?)"
        nxt = "the next one starts on the new clock" if self.control.automatic else "start the next one when ready"
        self.log.warning(f"{note}: episode {index} ended at the jump with what it had; {nxt}")
        outcome = self.default_outcome
        self._stop(outcome, note)
        self._do(self.control.stopped(outcome, now))

    def _topics_ready(self, now: float) -> bool:
        """The automatic loop's first episode waits for every wanted topic (up to wait_for_topics_s), the task topic
        only when the episodes take their task from it (no `task` given)."""
        missing = [t for t in self.missing() if self.task_topic is not None or t != self._task_topic_name]
        if not missing:
            return True
        if now - self._born < self.wait_for_topics_s:
            return False
        if not self._warned_missing:
            self._warned_missing = True
            self.log.warning(
                f"no publisher after {self.wait_for_topics_s:g} s for: {', '.join(missing)}; "
                "recording without them (they join the bag when they appear)"
            )
        return True

    # ---- carrying out EpisodeControl's actions -----------------------------------------------------
    def _do(self, actions: list[Action]) -> str:
        message = ""
        for action in actions:
            match action:
                case Start():
                    message = self._start()
                case Stop(outcome):
                    message = self._stop(outcome)
                case Finish():
                    self._finish(0)
        return message

    def _start(self, task: str | None = None) -> str:
        try:
            index, path = self.session.start(task)
        except (EpisodeError, BagWriteError) as exc:
            self.log.error(f"cannot start an episode: {exc}")
            if isinstance(exc, BagWriteError):
                self._finish(1)
            raise
        self.log.info(f"episode {index} ({self.control.kept + 1}{self._of_total()}) recording -> {path}")
        self._status()
        return f"recording episode {index} into {path}"

    def _stop(self, outcome: str, note: str = "") -> str:
        index = self.session.index
        result = self.session.stop(outcome, note)
        release_free_heap()  # the closed episode's freed buffers go back to the OS instead of staying resident
        self._last_done = (index, outcome == "success")  # the session already counts the next index
        self._status(done=True, success=outcome == "success")
        if result is None:
            self.log.info(f"episode {index} discarded (deleted)")
            return f"episode {index} discarded"
        counts = ", ".join(f"{t} {n}" for t, n in result.counts.items())
        text = f"episode {index} saved ({outcome}) -> {result.path}: {counts}"
        if result.error:
            self.log.error(f"episode {index} stopped early: {result.error}")
        self.log.info(text)
        if self.on_saved is not None:
            self.on_saved(result)
        return text

    def _finish(self, code: int) -> None:
        if self.exit_when_done and self.exit_code is None:
            self.exit_code = code

    def _status(self, done: bool = False, success: bool = False) -> None:
        if self.on_status is not None:
            self.on_status(self.status(done, success))

    def _of_total(self) -> str:
        return f"/{self.control.num_episodes}" if self.control.num_episodes else ""

    # ---- run-time changes ------------------------------------------------------------------------
    def reconfigure(self, changed: dict) -> None:
        """Apply changed settings (names as the node's parameters); ValueError refuses the whole change.

        The loop's times and episode count act at once; the task and the writer/QA settings from the
        next episode. Switching between manual and automatic mode would strand a running loop: refused.
        """
        c, s = self.control, self.session
        if "dataset.episode_time_s" in changed and (changed["dataset.episode_time_s"] > 0) != c.automatic:
            raise ValueError(
                "dataset.episode_time_s cannot switch between manual (0) and automatic (> 0) mode at run time; "
                "restart the recorder"
            )
        unknown = sorted(set(changed) - set(RECONFIGURABLE))
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: not settable at run time")
        for name, value in changed.items():
            if name == "task":
                s.task = value or self.default_task
            elif name in ("dataset.episode_time_s", "dataset.reset_time_s"):
                setattr(c, name.removeprefix("dataset."), float(value))
            elif name == "dataset.num_episodes":
                c.num_episodes = int(value)
            elif name == "stall_timeout_s":
                s.stall_timeout_s = float(value)
            elif name == "flush_interval_s":  # applies from the next episode's writer
                s.writer_settings = replace(s.writer_settings, flush_interval_s=float(value))
            elif name == "min_free_mb":
                s.writer_settings = replace(s.writer_settings, min_free_bytes=int(value * 2**20))
            else:  # default_outcome, progress_period_s, drain_s, discovery_period_s (the node's timer)
                setattr(self, name, value)

    # ---- reports --------------------------------------------------------------------------------
    def status(self, done: bool = False, success: bool = False) -> Status:
        """The episode recording now, or between episodes the one that ended last (done, with its outcome)."""
        s = self.session
        step = int(s.elapsed_s() * self.fps) if self.fps else sum(s.counts().values())
        if not s.recording and self._last_done is not None:
            return Status(self._last_done[0], step, True, success or self._last_done[1], s.task)
        return Status(s.index, step, done or not s.recording, success, s.task)

    def diagnostics(self) -> list[Diagnostic]:
        """Live QA per recorded topic and the writer's state ([] while no episode is recording)."""
        snapshot = self.session.qa_snapshot()
        if not snapshot:
            return []
        out = [
            Diagnostic(
                int(s.level), f"episode_recorder: {topic}", s.message, {k: str(v) for k, v in s.values().items()}
            )
            for topic, s in snapshot.items()
        ]
        writer = self.session.writer
        if writer is not None:
            backlog = writer.backlog
            level, message = OK, "ok"
            if self.session.last_error:
                level, message = ERROR, self.session.last_error
            elif backlog > BACKLOG_WARN:  # the disk (or zstd) is slower than the streams: memory grows
                level, message = WARN, f"writer falling behind: {backlog} messages queued in memory"
            out.append(
                Diagnostic(
                    level,
                    "episode_recorder: writer",
                    message,
                    {"backlog": str(writer.backlog), "path": str(writer.path)},
                )
            )
        return out

    def progress_line(self, now: float) -> str:
        c, s = self.control, self.session
        if c.state == RECORDING or s.recording:
            limit = f"/{c.episode_time_s:g}" if c.automatic else ""
            counts = " ".join(f"{t}={n}" for t, n in s.counts().items())
            return f"episode {s.index} ({c.kept + 1}{self._of_total()}) {s.elapsed_s():.1f}{limit} s | {counts}"
        if c.state == RESETTING:
            return f"reset {now - c.since:.1f}/{c.reset_time_s:g} s ({c.kept}{self._of_total()} episodes kept)"
        return f"{c.state}: {c.kept}{self._of_total()} episodes kept"

    def describe(self, output_dir: str) -> str:
        """The start-up line: what is recorded where, in which mode."""
        c = self.control
        mode = (
            f"automatic: {c.episode_time_s:g} s episodes, {c.reset_time_s:g} s resets, "
            f"{c.num_episodes or 'unlimited'} episodes"
            if c.automatic
            else "manual (services / keyboard)"
        )
        return (
            f"recording {len(self.wanted) or 'all'} topic(s) into {output_dir}; {mode}; "
            f"next episode index {self.session.index}"
        )

    def close(self) -> BagResult | None:
        """Shutdown: a running episode is closed properly (outcome 'interrupted')."""
        return self.session.close("interrupted")


def build_recorder(
    p,
    log: Log,
    *,
    clock_ns: Callable[[], int],
    now: float,
    on_status: Callable[[Status], None] | None = None,
    on_saved: Callable[[BagResult], None] | None = None,
) -> Recorder:
    """The recorder for settings `p` (the node's parameters, by attribute): the contract's and the listed
    topics, the episode loop and the session. Raises (ContractError, ValueError, OSError) with one line."""
    plan = plan_from_contract(p.contract) if p.contract else RecordingPlan([])
    extra = plan_from_topics([t for t in p.topics if t], plan.fps)
    session = EpisodeSession(
        p.output_dir,
        writer=WriterSettings(p.compression, p.flush_interval_s, int(p.min_free_mb * 2**20)),
        stall_timeout_s=p.stall_timeout_s,
        contract_text=plan.contract_text,
        contract_path=plan.contract_path,
        task_key=plan.task_key,
        clock_ns=clock_ns,
    )
    control = EpisodeControl(p.episode_time_s, p.reset_time_s, p.num_episodes)
    return Recorder(
        session,
        control,
        plan.topics + extra.topics,
        log,
        now=now,
        all_topics=p.all_topics,
        fps=plan.fps,
        task=p.task,
        default_task=plan.default_task,
        task_topic=(plan.task_topic, plan.task_type) if plan.task_topic else None,
        default_outcome=p.default_outcome,
        exit_when_done=p.exit_when_done,
        wait_for_topics_s=p.wait_for_topics_s,
        drain_s=p.drain_s,
        progress_period_s=p.progress_period_s,
        on_status=on_status,
        on_saved=on_saved,
    )
