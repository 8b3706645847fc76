"""A URDF's kinematic tree and its forward kinematics, in numpy (no ROS, no mesh loading).

Enough of URDF to place links: joints of type revolute, continuous, prismatic and fixed with their
`origin xyz/rpy`, `axis` and `limit`, and `mimic`. Floating and planar joints have no single position
value and are held at their origin (as robot_state_publisher does without a TF for them). The root link is
the link that is no joint's child; link transforms are expressed in its frame. Forward kinematics runs on
many configurations at once (a whole action chunk), so each joint costs one batched matrix product.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from lerobot_ros.conventions.errors import UserError

MOVABLE = ("revolute", "continuous", "prismatic")
HELD = ("floating", "planar")  # held at their origin
JOINT_TYPES = MOVABLE + ("fixed",) + HELD


class UrdfError(UserError, ValueError):
    """The robot_description is not a URDF this module can use; the message says what is wrong."""


@dataclass(frozen=True)
class Joint:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray  # 4x4, child joint frame in the parent link's frame at position 0
    axis: np.ndarray  # unit vector in the joint frame
    lower: float | None = None
    upper: float | None = None
    mimic: tuple[str, float, float] | None = None  # (joint, multiplier, offset)

    @property
    def movable(self) -> bool:
        return self.type in MOVABLE

    @property
    def mid_range(self) -> float:
        """Middle of the limits (0 without limits): the project's zero for a joint's ROS position."""
        if self.lower is None or self.upper is None or self.type == "continuous":
            return 0.0
        return 0.5 * (self.lower + self.upper)


@dataclass
class UrdfModel:
    name: str
    root: str
    links: tuple[str, ...]
    joints: dict[str, Joint]  # in topological order (a parent's joint before its children's)
    child_joint: dict[str, Joint] = field(default_factory=dict)  # link -> the joint that moves it

    @property
    def movable_joints(self) -> list[str]:
        """Joints with a position of their own (mimic joints follow another)."""
        return [j.name for j in self.joints.values() if j.movable and j.mimic is None]

    def chain(self, tip: str) -> list[str]:
        """Links from the root to `tip`, both included."""
        if tip not in self.links:
            raise UrdfError(f"link {tip!r} is not in the URDF {self.name!r} (links: {', '.join(self.links)})")
        out = [tip]
        while out[-1] != self.root:
            out.append(self.child_joint[out[-1]].parent)
        return out[::-1]

    def forward_kinematics(self, positions: Mapping[str, object]) -> dict[str, np.ndarray]:
        """link -> its transform in the root frame: (4, 4) for scalar positions, (T, 4, 4) for (T,) arrays.

        `positions` maps joint names to URDF joint values (radians / metres); joints it lacks are at 0,
        names the URDF lacks are ignored.
        """
        values = {k: np.asarray(v, dtype=np.float64) for k, v in positions.items() if k in self.joints}
        batch = np.broadcast_shapes(*(v.shape for v in values.values())) if values else ()
        if len(batch) > 1:
            raise UrdfError(f"joint positions must be scalars or 1-D arrays, got shape {batch}")
        eye = np.broadcast_to(np.eye(4), batch + (4, 4))
        out: dict[str, np.ndarray] = {self.root: eye}
        for joint in self.joints.values():
            out[joint.child] = out[joint.parent] @ joint.origin @ _motion(joint, self._value(joint, values, batch))
        return out

    def _value(self, joint: Joint, values: dict[str, np.ndarray], batch: tuple) -> np.ndarray:
        if joint.mimic is not None:
            source, multiplier, offset = joint.mimic
            return multiplier * values.get(source, np.zeros(batch)) + offset
        return np.broadcast_to(values.get(joint.name, np.zeros(batch)), batch)


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _motion(joint: Joint, q: np.ndarray) -> np.ndarray:
    """The joint's own motion for value(s) q: rotation about / translation along its axis."""
    q = np.asarray(q, dtype=np.float64)
    out = np.broadcast_to(np.eye(4), q.shape + (4, 4)).copy()
    if joint.type in ("revolute", "continuous"):
        x, y, z = joint.axis
        k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        s, c = np.sin(q)[..., None, None], np.cos(q)[..., None, None]
        out[..., :3, :3] = np.eye(3) + s * k + (1.0 - c) * (k @ k)  # Rodrigues
    elif joint.type == "prismatic":
        out[..., :3, 3] = q[..., None] * joint.axis
    return out


def _floats(text: str | None, count: int, default: tuple, what: str) -> np.ndarray:
    if text is None:
        return np.asarray(default, dtype=np.float64)
    try:
        values = [float(v) for v in text.split()]
    except ValueError:
        values = []
    if len(values) != count or not np.all(np.isfinite(values)):
        raise UrdfError(f"{what}: expected {count} numbers, got {text!r}")
    return np.asarray(values, dtype=np.float64)


def _parse_joint(el: ET.Element) -> Joint:
    name = el.get("name")
    kind = el.get("type")
    if not name:
        raise UrdfError("a <joint> has no name")
    if kind not in JOINT_TYPES:
        raise UrdfError(f"joint {name!r} has type {kind!r}; URDF types are {', '.join(JOINT_TYPES)}")
    parent, child = el.find("parent"), el.find("child")
    if parent is None or child is None or not parent.get("link") or not child.get("link"):
        raise UrdfError(f"joint {name!r} needs <parent link=...> and <child link=...>")
    origin_el = el.find("origin")
    xyz = _floats(None if origin_el is None else origin_el.get("xyz"), 3, (0, 0, 0), f"joint {name!r} origin xyz")
    rpy = _floats(None if origin_el is None else origin_el.get("rpy"), 3, (0, 0, 0), f"joint {name!r} origin rpy")
    origin = np.eye(4)
    origin[:3, :3] = rpy_matrix(*rpy)
    origin[:3, 3] = xyz
    axis_el = el.find("axis")
    axis = _floats(None if axis_el is None else axis_el.get("xyz"), 3, (1, 0, 0), f"joint {name!r} axis")
    if kind in MOVABLE:
        norm = np.linalg.norm(axis)
        if norm == 0:
            raise UrdfError(f"joint {name!r} ({kind}) has a zero axis")
        axis = axis / norm
    lower = upper = None
    limit = el.find("limit")
    if limit is not None and kind in ("revolute", "prismatic"):
        lower = float(_floats(limit.get("lower"), 1, (0,), f"joint {name!r} limit lower")[0])
        upper = float(_floats(limit.get("upper"), 1, (0,), f"joint {name!r} limit upper")[0])
    mimic = None
    mimic_el = el.find("mimic")
    if mimic_el is not None and kind in MOVABLE:
        if not mimic_el.get("joint"):
            raise UrdfError(f"joint {name!r}: <mimic> needs a joint attribute")
        multiplier = float(_floats(mimic_el.get("multiplier"), 1, (1,), f"joint {name!r} mimic multiplier")[0])
        offset = float(_floats(mimic_el.get("offset"), 1, (0,), f"joint {name!r} mimic offset")[0])
        mimic = (cast(str, mimic_el.get("joint")), multiplier, offset)  # checked above
    # both links checked above
    return Joint(
        name, kind, cast(str, parent.get("link")), cast(str, child.get("link")), origin, axis, lower, upper, mimic
    )


def parse_urdf(text: str) -> UrdfModel:
    """Parse a URDF string into a tree; UrdfError saying what is wrong for anything unusable."""
    if not text or not text.strip():
        raise UrdfError("the robot_description is empty")
    try:
        root_el = ET.fromstring(text)
    except ET.ParseError as exc:
        raise UrdfError(f"the robot_description is not valid XML: {exc}") from None
    if root_el.tag != "robot":
        raise UrdfError(f"the robot_description's root element is <{root_el.tag}>, not <robot>")
    # direct children only: <transmission> has <joint>s too; the names are checked just below
    links = cast("list[str]", [el.get("name") for el in root_el.findall("link")])
    if not links or not all(links):
        raise UrdfError("the URDF has no links" if not links else "a <link> has no name")
    if len(set(links)) != len(links):
        raise UrdfError(f"duplicate link names in the URDF: {sorted({n for n in links if links.count(n) > 1})}")
    joints = [_parse_joint(el) for el in root_el.findall("joint")]
    by_child: dict[str, Joint] = {}
    names = set()
    for joint in joints:
        if joint.name in names:
            raise UrdfError(f"duplicate joint name {joint.name!r} in the URDF")
        names.add(joint.name)
        for link in (joint.parent, joint.child):
            if link not in links:
                raise UrdfError(f"joint {joint.name!r} refers to link {link!r}, which the URDF does not define")
        if joint.child in by_child:
            raise UrdfError(
                f"link {joint.child!r} is the child of two joints ({by_child[joint.child].name}, {joint.name})"
            )
        by_child[joint.child] = joint
    for joint in joints:
        if joint.mimic is not None and joint.mimic[0] not in names:
            raise UrdfError(f"joint {joint.name!r} mimics {joint.mimic[0]!r}, which the URDF does not define")
    roots = [link for link in links if link not in by_child]
    if len(roots) != 1:
        raise UrdfError(f"the URDF must have one root link, found {len(roots)}: {roots or 'a cycle'}")
    children: dict[str, list[Joint]] = {}
    for joint in joints:
        children.setdefault(joint.parent, []).append(joint)
    ordered: list[Joint] = []
    stack = [roots[0]]
    while stack:
        for joint in children.get(stack.pop(), []):
            ordered.append(joint)
            stack.append(joint.child)
    if len(ordered) != len(joints):
        unreachable = sorted(set(by_child) - {j.child for j in ordered})
        raise UrdfError(f"links {unreachable} are not connected to the root link {roots[0]!r} (a cycle?)")
    return UrdfModel(root_el.get("name", ""), roots[0], tuple(links), {j.name: j for j in ordered}, by_child)
