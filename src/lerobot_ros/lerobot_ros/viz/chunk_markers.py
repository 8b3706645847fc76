"""A predicted action chunk (joint positions over time) -> rviz markers of where the robot's tip will go.

rviz2 has no display for trajectory_msgs/JointTrajectory, so the chunk is drawn through the URDF's
forward kinematics as a visualization_msgs/MarkerArray in namespace "predicted_chunk":

  id 0  DELETEALL            old markers go before each redraw (a shorter chunk leaves nothing behind)
  id 1  LINE_STRIP           the tip's path, colour fading from the first point (now) to the last
  id 2  SPHERE_LIST          the tip at each point of the chunk, same colours
  id 3  LINE_LIST (optional) a translucent "ghost" of the final pose: one segment per joint, parent -> child link

Units: the chunk is in ROS units, as policy_node publishes ~/predicted_chunk (its contract's `to_ros` turns
LeRobot's degrees / 0..100 back into radians): radians for revolute joints, metres for prismatic ones.
`joint_zero` says where a ROS position's zero is: "mid_range" (the project's convention for joint_states,
real arm and MuJoCo twin alike: 0 = middle of the joint's limits, so URDF value = ROS value + mid-range) or
"urdf" (ROS values are URDF joint values). URDF joints the chunk lacks are held at `hold` (ROS units, e.g.
the latest joint_states) or at ROS 0; chunk joints the URDF lacks are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from lerobot_ros.viz.urdf_kinematics import UrdfError, UrdfModel

NAMESPACE = "predicted_chunk"
JOINT_ZEROS = ("mid_range", "urdf")
DELETE_ID, PATH_ID, POINTS_ID, GHOST_ID = 0, 1, 2, 3
#: colour of the first point (next tick) and of the last one (end of the chunk), RGBA
START_RGBA = (1.0, 0.55, 0.05, 1.0)
END_RGBA = (0.15, 0.45, 1.0, 0.35)
GHOST_RGBA = (0.8, 0.8, 0.8, 0.4)


@dataclass(frozen=True)
class MarkerStyle:
    line_width: float = 0.004
    sphere_size: float = 0.01
    ghost: bool = True
    ghost_width: float = 0.006


@dataclass
class ChunkGeometry:
    """What the markers show, in the root frame: tip positions (T, 3), colours (T, 4), ghost segments (2S, 3)."""

    tip: np.ndarray
    colors: np.ndarray
    ghost: np.ndarray


def joint_zero_offsets(model: UrdfModel, joint_zero: str = "mid_range") -> dict[str, float]:
    """URDF value - ROS value for each of the URDF's own movable joints: its mid-range (0 without limits or for a
    continuous joint) under "mid_range", 0 under "urdf". Mimic joints are absent: they follow their source joint."""
    if joint_zero not in JOINT_ZEROS:
        raise ValueError(f"joint_zero must be one of {', '.join(JOINT_ZEROS)}, got {joint_zero!r}")
    return {name: (model.joints[name].mid_range if joint_zero == "mid_range" else 0.0) for name in model.movable_joints}


def urdf_positions(
    model: UrdfModel,
    joint_names: Sequence[str],
    positions,
    hold: Mapping[str, float] | None = None,
    joint_zero: str = "mid_range",
) -> dict[str, np.ndarray]:
    """URDF joint values (name -> (T,)) for a (T, D) chunk in ROS units; see the module docstring."""
    offsets = joint_zero_offsets(model, joint_zero)
    positions = np.asarray(positions, dtype=np.float64)
    if positions.ndim != 2 or positions.shape[1] != len(joint_names):
        raise ValueError(f"chunk of shape {positions.shape} does not match {len(joint_names)} joint names")
    movable = model.movable_joints
    index = {n: i for i, n in enumerate(joint_names)}
    if movable and not any(n in index for n in movable):
        raise ValueError(f"none of the chunk's joints {list(joint_names)} is in the URDF (its joints: {movable})")
    hold = hold or {}
    out = {}
    for name in movable:
        ros = positions[:, index[name]] if name in index else np.full(len(positions), float(hold.get(name, 0.0)))
        out[name] = ros + offsets[name]
    return out


def fade_colors(times_s) -> np.ndarray:
    """(T, 4) RGBA from START_RGBA at the first time to END_RGBA at the last (linear in time)."""
    times_s = np.asarray(times_s, dtype=np.float64)
    span = times_s[-1] - times_s[0] if times_s.size > 1 else 0.0
    frac = (times_s - times_s[0]) / span if span > 0 else np.zeros_like(times_s)
    return (1.0 - frac)[:, None] * np.asarray(START_RGBA) + frac[:, None] * np.asarray(END_RGBA)


def chunk_geometry(
    model: UrdfModel,
    tip_link: str,
    joint_names: Sequence[str],
    positions,
    times_s,
    hold: Mapping[str, float] | None = None,
    joint_zero: str = "mid_range",
) -> ChunkGeometry:
    """Forward kinematics of every chunk point: the tip's path and the final pose's link segments."""
    if tip_link not in model.links:
        raise UrdfError(f"tip link {tip_link!r} is not in the URDF (links: {', '.join(model.links)})")
    times_s = np.asarray(times_s, dtype=np.float64)
    values = urdf_positions(model, joint_names, positions, hold, joint_zero)
    if len(times_s) != len(np.asarray(positions)):
        raise ValueError(f"{len(times_s)} times for {len(np.asarray(positions))} chunk points")
    if len(times_s) == 0:
        return ChunkGeometry(np.zeros((0, 3)), np.zeros((0, 4)), np.zeros((0, 3)))
    links = model.forward_kinematics(values)
    tip = links[tip_link][:, :3, 3]
    segments = []
    for joint in model.joints.values():
        a, b = links[joint.parent][-1, :3, 3], links[joint.child][-1, :3, 3]
        if np.linalg.norm(b - a) > 1e-6:
            segments += [a, b]
    ghost = np.asarray(segments).reshape(-1, 3)
    return ChunkGeometry(tip, fade_colors(times_s), ghost)


def _marker(kind: int, marker_id: int, frame_id: str, stamp: Time) -> Marker:
    m = Marker()
    m.header.frame_id = frame_id
    m.header.stamp = stamp
    m.ns = NAMESPACE
    m.id = marker_id
    m.type = kind
    m.action = Marker.ADD
    m.pose.orientation.w = 1.0
    m.frame_locked = False
    return m


def _points(xyz: np.ndarray) -> list[Point]:
    return [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in xyz]


def _colors(rgba: np.ndarray) -> list[ColorRGBA]:
    return [ColorRGBA(r=float(r), g=float(g), b=float(b), a=float(a)) for r, g, b, a in rgba]


def geometry_to_markers(
    geometry: ChunkGeometry, frame_id: str, stamp: Time | None = None, style: MarkerStyle = MarkerStyle()
) -> MarkerArray:
    """The MarkerArray described in the module docstring (DELETEALL first, always)."""
    stamp = stamp if stamp is not None else Time()
    clear = Marker()
    clear.header.frame_id = frame_id
    clear.header.stamp = stamp
    clear.ns = NAMESPACE
    clear.id = DELETE_ID
    clear.action = Marker.DELETEALL
    out = MarkerArray(markers=[clear])
    if len(geometry.tip) == 0:
        return out
    points, colors = _points(geometry.tip), _colors(geometry.colors)
    path = _marker(Marker.LINE_STRIP, PATH_ID, frame_id, stamp)
    path.scale.x = style.line_width
    path.color = colors[0]
    path.points, path.colors = points, colors
    spheres = _marker(Marker.SPHERE_LIST, POINTS_ID, frame_id, stamp)
    spheres.scale.x = spheres.scale.y = spheres.scale.z = style.sphere_size
    spheres.color = colors[0]
    spheres.points, spheres.colors = list(points), list(colors)
    out.markers += [path, spheres]
    if style.ghost and len(geometry.ghost):
        ghost = _marker(Marker.LINE_LIST, GHOST_ID, frame_id, stamp)
        ghost.scale.x = style.ghost_width
        ghost.color = ColorRGBA(r=GHOST_RGBA[0], g=GHOST_RGBA[1], b=GHOST_RGBA[2], a=GHOST_RGBA[3])
        ghost.points = _points(geometry.ghost)
        out.markers.append(ghost)
    return out


def chunk_markers(
    model: UrdfModel,
    tip_link: str,
    joint_names: Sequence[str],
    positions,
    times_s,
    frame_id: str = "",
    stamp: Time | None = None,
    hold: Mapping[str, float] | None = None,
    joint_zero: str = "mid_range",
    style: MarkerStyle = MarkerStyle(),
) -> MarkerArray:
    """A chunk (joint names, (T, D) ROS positions, (T,) seconds from start) -> MarkerArray in `frame_id`
    (default: the URDF's root link)."""
    geometry = chunk_geometry(model, tip_link, joint_names, positions, times_s, hold, joint_zero)
    return geometry_to_markers(geometry, frame_id or model.root, stamp, style)
