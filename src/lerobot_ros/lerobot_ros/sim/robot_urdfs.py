"""URDFs of the composed twins for rviz (robot_state_publisher's robot_description), built from the SO-101 URDF the
way the MuJoCo scenes are built from its MJCF: the pair is the arm twice with bi_so_follower's `left_` / `right_`
prefixes on every link and joint under a `world` link (the arms where the table scene puts them), LeKiwi is the
arm (links `arm_...`) on a `base_link` with the chassis and three omniwheels drawn (the arm's joints keep their
names, as LeKiwi's arm publishes them). Mesh paths are absolute (so101_urdf), so rviz2 finds them from a robot_description string.
"""

from __future__ import annotations

import copy
import math
import xml.etree.ElementTree as ET

from lerobot_ros.conventions.joints import PAIR_SIDES
from lerobot_ros.sim.so101_urdf import so101_urdf

#: where the table scene (sim.bi_so101_twin) puts each arm's base, m
PAIR_Y = {"left": 0.2, "right": -0.2}
#: LeKiwi (sim.lekiwi_twin): the arm's base on the chassis top, the wheels at the base radius
ARM_ON_BASE = (0.05, 0.0, 0.12)
BASE_RADIUS_M, WHEEL_RADIUS_M, CHASSIS_TOP_M = 0.125, 0.05, 0.12
WHEEL_ANGLES_DEG = (240.0, 0.0, 120.0)  # LeRobot's LeKiwi: left, back, right (less 90 degrees)


def _arm() -> tuple[ET.Element, str]:
    """The SO-101 URDF's root element and its root link (the one no joint has as a child)."""
    robot = ET.fromstring(so101_urdf())
    children = {child.get("link") for child in robot.iterfind("joint/child")}
    root = next(str(link.get("name")) for link in robot.findall("link") if link.get("name") not in children)
    return robot, root


def _prefixed(robot: ET.Element, links: str, joints: str) -> list[ET.Element]:
    """Copies of the arm's links, joints and transmissions, `links` before every link name, `joints` before every
    joint name."""
    out = []
    for element in robot:
        if element.tag not in ("link", "joint", "transmission"):
            continue
        element = copy.deepcopy(element)
        element.set("name", {"link": links, "joint": joints}.get(element.tag, joints) + element.get("name", ""))
        for ref in element.iter():
            link = ref.get("link")
            if ref.tag in ("parent", "child") and link:
                ref.set("link", links + link)
            elif ref.tag == "joint" and ref is not element:  # a transmission's joint reference
                ref.set("name", joints + ref.get("name", ""))
        out.append(element)
    return out


def _fixed_joint(name: str, parent: str, child: str, xyz, rpy=(0.0, 0.0, 0.0)) -> ET.Element:
    joint = ET.Element("joint", name=name, type="fixed")
    ET.SubElement(joint, "origin", xyz=" ".join(f"{v:g}" for v in xyz), rpy=" ".join(f"{v:g}" for v in rpy))
    ET.SubElement(joint, "parent", link=parent)
    ET.SubElement(joint, "child", link=child)
    return joint


def _cylinder_link(name: str, radius: float, length: float, rgba: str, xyz=(0, 0, 0), rpy=(0, 0, 0)) -> ET.Element:
    link = ET.Element("link", name=name)
    visual = ET.SubElement(link, "visual")
    ET.SubElement(visual, "origin", xyz=" ".join(f"{v:g}" for v in xyz), rpy=" ".join(f"{v:g}" for v in rpy))
    ET.SubElement(ET.SubElement(visual, "geometry"), "cylinder", radius=f"{radius:g}", length=f"{length:g}")
    ET.SubElement(ET.SubElement(visual, "material", name=f"{name}_color"), "color", rgba=rgba)
    return link


def _text(robot: ET.Element) -> str:
    ET.indent(robot)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def pair_urdf() -> str:
    """Two SO-101 arms (left_/right_ links and joints) under `world`, where the table scene puts them."""
    arm, root = _arm()
    robot = ET.Element("robot", name="bi_so101")
    robot.extend(m for m in arm.findall("material"))
    robot.append(ET.Element("link", name="world"))
    for side in PAIR_SIDES:
        robot.extend(_prefixed(arm, f"{side}_", f"{side}_"))
        robot.append(_fixed_joint(f"{side}_mount", "world", f"{side}_{root}", (0.0, PAIR_Y[side], 0.0)))
    return _text(robot)


def lekiwi_urdf() -> str:
    """The SO-101 arm on LeKiwi's base: `base_link` (REP 105's robot frame), the chassis and three wheels drawn."""
    arm, root = _arm()
    robot = ET.Element("robot", name="lekiwi")
    robot.extend(m for m in arm.findall("material"))
    robot.append(_cylinder_link("base_link", 0.15, 0.08, "0.9 0.9 0.9 1", xyz=(0.0, 0.0, CHASSIS_TOP_M - 0.04)))
    for i, deg in enumerate(WHEEL_ANGLES_DEG):
        a = math.radians(deg - 90.0)
        name = f"wheel_{i}_link"
        # the wheel's axle points outwards: the cylinder's z axis turned onto the radial direction
        robot.append(_cylinder_link(name, WHEEL_RADIUS_M, 0.024, "0.15 0.15 0.15 1", rpy=(0.0, math.pi / 2, a)))
        xyz = (BASE_RADIUS_M * math.cos(a), BASE_RADIUS_M * math.sin(a), WHEEL_RADIUS_M)
        robot.append(_fixed_joint(f"wheel_{i}_joint", "base_link", name, xyz))
    # the arm's links get `arm_` (its root is also called base_link); its joints keep the names joint_states uses
    robot.extend(_prefixed(arm, "arm_", ""))
    robot.append(_fixed_joint("arm_mount", "base_link", f"arm_{root}", ARM_ON_BASE))
    return _text(robot)


URDFS = {"so101": so101_urdf, "bi_so101": pair_urdf, "lekiwi": lekiwi_urdf}


def robot_urdf(robot: str) -> str:
    """The URDF of `robot` (so101, bi_so101, lekiwi); ValueError naming the ones there are."""
    if robot not in URDFS:
        raise ValueError(f"no URDF for {robot!r}; use one of {', '.join(URDFS)}")
    return URDFS[robot]()


__all__ = ["URDFS", "lekiwi_urdf", "pair_urdf", "robot_urdf"]
