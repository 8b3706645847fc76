"""What the viewer shows and where: entity paths and the rerun blueprint, from a contract or a dataset's features.

One layout serves the live view and both replays, so a recorded episode looks like the live robot:

  cameras/<camera>             every image feature (observation.images.front -> cameras/front)
  joints/<label>/state|action  observation.state against action, one plot per joint (LeRobot units)
  robot/current, robot/chunk/* the arm's pose now, the predicted chunk's tip path and its final pose (URDF FK)
  diagnostics/<name>           /diagnostics levels (0 OK, 1 WARN, 2 ERROR, 3 STALE)
  status                       episode index / step / reward / done / success, task, diagnostics (markdown)
  log                          events: episode starts and ends, diagnostics level changes

State and action are paired by name when both name the same joints (`shoulder_pan.pos`), else by position
(Meta-World: hand_x against delta_x), labelled `<state> | <action>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import rerun as rr
import rerun.blueprint as rrb

TIMELINE = "ros_time"  #: one timeline: ROS time of each message (wall clock, or sim time under use_sim_time)
FRAME_TIMELINE = "frame_index"  #: datasets also get their frame index
STATUS = "status"
LOG = "log"
DIAGNOSTICS = "diagnostics"
ROBOT = "robot"
CURRENT_POSE = "robot/current"
CHUNK_PATH = "robot/chunk/path"
CHUNK_POINTS = "robot/chunk/points"
CHUNK_GHOST = "robot/chunk/ghost"
IMAGE_PREFIXES = ("observation.images.", "observation.")


def camera_label(feature: str) -> str:
    """observation.images.front -> front; observation.image -> image."""
    for prefix in IMAGE_PREFIXES:
        if feature.startswith(prefix):
            return feature[len(prefix) :]
    return feature


def _joint(name: str) -> str:
    return name.removesuffix(".pos")


@dataclass(frozen=True)
class JointPlot:
    """One plot: the state value at `state_index` against the action value at `action_index` (either may be None)."""

    label: str
    state_index: int | None
    action_index: int | None

    @property
    def path(self) -> str:
        return f"joints/{rr.escape_entity_path_part(self.label)}"


@dataclass(frozen=True)
class ViewerLayout:
    cameras: tuple[str, ...]  # image feature names, in contract order
    state_names: tuple[str, ...]
    action_names: tuple[str, ...]
    robot_3d: bool = False  # a URDF is known: draw the pose and the predicted chunk

    @classmethod
    def from_features(cls, features: Mapping[str, Mapping], robot_3d: bool = False) -> ViewerLayout:
        """From LeRobot's `features` dict (a dataset's info.json, or `Contract.lerobot_features()`)."""
        cameras = tuple(k for k, f in features.items() if f.get("dtype") in ("video", "image"))

        def names(key: str) -> tuple[str, ...]:
            spec = features.get(key) or {}
            got = spec.get("names")
            if isinstance(got, Mapping):  # older datasets: {"motors": [...]}
                got = next(iter(got.values()), None)
            if not got:
                got = [f"{key}_{i}" for i in range(int((spec.get("shape") or [0])[0]))]
            return tuple(str(n) for n in got)

        return cls(cameras, names("observation.state"), names("action"), robot_3d)

    @classmethod
    def from_contract(cls, contract, robot_3d: bool = False) -> ViewerLayout:
        return cls.from_features(contract.lerobot_features(), robot_3d)

    def camera_path(self, feature: str) -> str:
        return f"cameras/{rr.escape_entity_path_part(camera_label(feature))}"

    @property
    def joint_plots(self) -> list[JointPlot]:
        states, actions = [_joint(n) for n in self.state_names], [_joint(n) for n in self.action_names]
        if states and set(actions) <= set(states):
            where = {n: i for i, n in enumerate(actions)}
            return [JointPlot(n, i, where.get(n)) for i, n in enumerate(states)]
        plots = []
        for i in range(max(len(states), len(actions))):
            s = states[i] if i < len(states) else None
            a = actions[i] if i < len(actions) else None
            label = " | ".join(x for x in (s, a) if x)
            plots.append(JointPlot(label, i if s else None, i if a else None))
        return plots

    def blueprint(self, live: bool = True, window_s: float = 10.0) -> rrb.Blueprint:
        """Cameras and the status on the left, the joint plots in the middle, 3D + diagnostics on the right.
        Live plots show the last `window_s` seconds; a replay shows the whole episode with the time panel open."""
        ranges = None
        if live:
            ranges = rrb.VisibleTimeRange(
                TIMELINE,
                start=rrb.TimeRangeBoundary.cursor_relative(seconds=-window_s),
                end=rrb.TimeRangeBoundary.cursor_relative(),
            )
        left: list[rrb.View] = [
            rrb.Spatial2DView(origin=self.camera_path(c), name=camera_label(c)) for c in self.cameras
        ]
        left.append(rrb.TextDocumentView(origin=STATUS, name="episode"))
        plots = [rrb.TimeSeriesView(origin=p.path, name=p.label, time_ranges=ranges) for p in self.joint_plots]
        right: list[rrb.View] = []
        if self.robot_3d:
            right.append(rrb.Spatial3DView(origin=ROBOT, name="predicted chunk"))
        right += [
            rrb.TimeSeriesView(origin=DIAGNOSTICS, name="diagnostics levels", time_ranges=ranges),
            rrb.TextLogView(origin=LOG, name="events"),
        ]
        columns: list[rrb.Container] = [rrb.Vertical(*left, row_shares=[3.0] * len(self.cameras) + [2.0])]
        if plots:
            columns.append(rrb.Grid(*plots, grid_columns=2 if len(plots) > 3 else 1, name="state vs action"))
        columns.append(rrb.Vertical(*right))
        return rrb.Blueprint(
            rrb.Horizontal(*columns, column_shares=[2.0, 3.0, 2.0][: len(columns)] if plots else None),
            rrb.BlueprintPanel(state="collapsed"),
            rrb.SelectionPanel(state="collapsed"),
            rrb.TimePanel(state="collapsed" if live else "expanded"),
        )


def entity_paths(layout: ViewerLayout) -> list[str]:
    """Every entity path the layout can fill (tests and docs)."""
    out = [layout.camera_path(c) for c in layout.cameras]
    for p in layout.joint_plots:
        if p.state_index is not None:
            out.append(f"{p.path}/state")
        if p.action_index is not None:
            out.append(f"{p.path}/action")
    out += [STATUS, LOG]
    if layout.robot_3d:
        out += [CURRENT_POSE, CHUNK_PATH, CHUNK_POINTS, CHUNK_GHOST]
    return out
