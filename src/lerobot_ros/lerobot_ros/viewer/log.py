"""Logging the robot's streams into a rerun recording on a ViewerLayout (no ROS here: tests drive it directly).

Times are ROS nanoseconds on one timeline (layout.TIMELINE): a timestamp for wall-clock time, a duration for
sim time (a clock that started near 0). Images go as JPEG by default (a 640x480 frame is ~40 KB instead of
900 KB, so the viewer's memory holds minutes, not seconds); scalars go in columns (one call per joint per
batch, not per sample).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
import rerun as rr

from lerobot_ros.viewer.layout import (
    CHUNK_GHOST,
    CHUNK_PATH,
    CHUNK_POINTS,
    CURRENT_POSE,
    DIAGNOSTICS,
    FRAME_TIMELINE,
    LOG,
    ROBOT,
    STATUS,
    TIMELINE,
    ViewerLayout,
)

STATE_RGB, ACTION_RGB = (60, 140, 255), (255, 140, 30)
POSE_RGB, GHOST_RGB = (230, 230, 230), (160, 160, 160, 140)
LEVELS = {0: "OK", 1: "WARN", 2: "ERROR", 3: "STALE"}
TEXTLOG_LEVEL = {0: "INFO", 1: "WARN", 2: "ERROR", 3: "WARN"}
SIM_TIME_LIMIT_NS = 10**17  #: stamps below ~3 years since 1970 are a sim clock, not the wall clock


@dataclass
class EpisodeInfo:
    """The fields of lerobot_ros_msgs/EpisodeStatus the viewer shows."""

    index: int = -1
    step: int = 0
    reward: float = 0.0
    sum_reward: float = 0.0
    done: bool = False
    success: bool = False
    task: str = ""

    @classmethod
    def from_msg(cls, msg) -> EpisodeInfo:
        return cls(
            int(msg.episode_index),
            int(msg.step),
            float(msg.reward),
            float(msg.sum_reward),
            bool(msg.done),
            bool(msg.success),
            str(msg.task),
        )


@dataclass
class ViewerLog:
    recording: rr.RecordingStream
    layout: ViewerLayout
    jpeg_quality: int = 75  # 0: raw RGB
    episode: EpisodeInfo = field(default_factory=EpisodeInfo)
    task: str = ""
    diagnostics: dict[str, tuple[int, str]] = field(default_factory=dict)
    images_logged: int = 0

    def __post_init__(self):
        rec = self.recording
        for plot in self.layout.joint_plots:
            if plot.state_index is not None:
                rec.log(f"{plot.path}/state", rr.SeriesLines(colors=[STATE_RGB], names=["state"]), static=True)
            if plot.action_index is not None:
                rec.log(f"{plot.path}/action", rr.SeriesLines(colors=[ACTION_RGB], names=["action"]), static=True)
        if self.layout.robot_3d:
            rec.log(ROBOT, rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
        self._write_status()

    # -- time ------------------------------------------------------------------------------------
    @staticmethod
    def _time_kwargs(times_ns) -> dict:
        seconds = np.asarray(times_ns, dtype=np.float64) * 1e-9
        first = float(np.min(times_ns)) if np.size(times_ns) else 0.0
        return {"duration": seconds} if first < SIM_TIME_LIMIT_NS else {"timestamp": seconds}

    def set_time(self, t_ns: int, frame: int | None = None) -> None:
        kw = self._time_kwargs([t_ns])
        self.recording.set_time(TIMELINE, **{k: float(v[0]) for k, v in kw.items()})
        if frame is not None:
            self.recording.set_time(FRAME_TIMELINE, sequence=int(frame))

    # -- streams ---------------------------------------------------------------------------------
    def image(self, feature: str, rgb: np.ndarray, t_ns: int, frame: int | None = None) -> None:
        """(H, W, 3) uint8 RGB."""
        self.set_time(t_ns, frame)
        path = self.layout.camera_path(feature)
        if self.jpeg_quality > 0:
            ok, jpeg = cv2.imencode(
                ".jpg",
                cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR),
                [cv2.IMWRITE_JPEG_QUALITY, int(self.jpeg_quality)],
            )
            if ok:
                self.recording.log(path, rr.EncodedImage(contents=jpeg.tobytes(), media_type="image/jpeg"))
                self.images_logged += 1
                return
        self.recording.log(path, rr.Image(rgb))
        self.images_logged += 1

    def vectors(self, kind: str, times_ns, values, frames=None) -> None:
        """A batch of `kind` ("state" | "action") samples: (N,) ROS times, (N, D) values in LeRobot units."""
        times_ns = np.asarray(times_ns, dtype=np.int64)
        values = np.asarray(values, dtype=np.float64).reshape(len(times_ns), -1)
        if len(times_ns) == 0:
            return
        indexes = [rr.TimeColumn(TIMELINE, **self._time_kwargs(times_ns))]
        if frames is not None:
            indexes.append(rr.TimeColumn(FRAME_TIMELINE, sequence=np.asarray(frames, dtype=np.int64)))
        for plot in self.layout.joint_plots:
            column = plot.state_index if kind == "state" else plot.action_index
            if column is None or column >= values.shape[1]:
                continue
            self.recording.send_columns(
                f"{plot.path}/{kind}", indexes=indexes, columns=rr.Scalars.columns(scalars=values[:, column])
            )

    def pose(self, segments: np.ndarray, t_ns: int) -> None:
        """The arm now: (2S, 3) link segments (parent, child) in the URDF root frame."""
        self.set_time(t_ns)
        self.recording.log(
            CURRENT_POSE, rr.LineStrips3D(np.asarray(segments).reshape(-1, 2, 3), colors=[POSE_RGB], radii=[0.004])
        )

    def chunk(self, tip: np.ndarray, colors: np.ndarray, ghost: np.ndarray, t_ns: int) -> None:
        """A predicted chunk (lerobot_ros.viz.ChunkGeometry's fields): tip path (T, 3), RGBA 0..1 (T, 4), ghost (2S, 3)."""
        self.set_time(t_ns)
        rgba = (np.clip(np.asarray(colors), 0.0, 1.0) * 255).astype(np.uint8)
        if len(tip):
            self.recording.log(CHUNK_PATH, rr.LineStrips3D([tip], colors=[rgba[0]], radii=[0.003]))
            self.recording.log(CHUNK_POINTS, rr.Points3D(tip, colors=rgba, radii=[0.006]))
        if len(ghost):
            self.recording.log(
                CHUNK_GHOST, rr.LineStrips3D(np.asarray(ghost).reshape(-1, 2, 3), colors=[GHOST_RGB], radii=[0.005])
            )

    def episode_status(self, info: EpisodeInfo, t_ns: int) -> None:
        self.set_time(t_ns)
        old = self.episode
        if info.index != old.index:
            self.recording.log(LOG, rr.TextLog(f"episode {info.index} started: {info.task or self.task}", level="INFO"))
        if info.done and not (old.done and old.index == info.index):
            outcome = "success" if info.success else "no success"
            self.recording.log(
                LOG,
                rr.TextLog(
                    f"episode {info.index} done after {info.step} steps ({outcome}, sum reward {info.sum_reward:.3g})",
                    level="INFO",
                ),
            )
        self.episode = info
        if info.task:
            self.task = info.task
        self._write_status()

    def set_task(self, task: str, t_ns: int) -> None:
        if task == self.task:
            return
        self.set_time(t_ns)
        self.task = task
        self.recording.log(LOG, rr.TextLog(f"task: {task}", level="INFO"))
        self._write_status()

    def diagnostic(self, name: str, level: int, message: str, t_ns: int) -> None:
        """One diagnostic_msgs/DiagnosticStatus: its level is plotted, a level change is an event."""
        self.set_time(t_ns)
        level = int(level)
        self.recording.log(f"{DIAGNOSTICS}/{rr.escape_entity_path_part(name)}", rr.Scalars(float(level)))
        previous = self.diagnostics.get(name)
        self.diagnostics[name] = (level, message)
        if previous is None or previous[0] != level:
            self.recording.log(
                LOG,
                rr.TextLog(
                    f"{name}: {LEVELS.get(level, level)} {message}".rstrip(), level=TEXTLOG_LEVEL.get(level, "WARN")
                ),
            )
            self._write_status()

    # -- status panel ----------------------------------------------------------------------------
    def status_markdown(self) -> str:
        e = self.episode
        lines = [f"**task** {self.task or '-'}", ""]
        if e.index >= 0:
            state = ("**success**" if e.success else "done") if e.done else "running"
            lines += [
                f"**episode** {e.index} | step {e.step} | {state}",
                f"reward {e.reward:.3g} | sum {e.sum_reward:.3g}",
                "",
            ]
        else:
            lines += ["**episode** -", ""]
        if self.diagnostics:
            lines += ["| diagnostic | level | message |", "|---|---|---|"]
            lines += [f"| {n} | {LEVELS.get(lv, lv)} | {m} |" for n, (lv, m) in sorted(self.diagnostics.items())]
        return "\n".join(lines)

    def _write_status(self) -> None:
        self.recording.log(STATUS, rr.TextDocument(self.status_markdown(), media_type=rr.MediaType.MARKDOWN))
