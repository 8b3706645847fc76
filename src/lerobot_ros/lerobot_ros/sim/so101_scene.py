"""The SO-101 twin's MuJoCo model as an MjSpec, edited for rendering before it is compiled:

- cameras like the real SO-101 setups: `front` across the table, looking down at the base and the
  cube's sampling area (the package's own front camera put the cube at the image's bottom edge), and
  `wrist` on the gripper behind the fixed jaw, looking along the jaws;
- `meshes="simplified"`: visual geoms draw cached, simplified copies of their meshes (mesh_cache), and
  the floor's render grid is coarser (a plane's third size is its grid spacing "for rendering purposes"
  only: 0.01 over a 6 m floor is 360k quads). Collision geoms, bodies and inertias are untouched, so
  the physics is the same number for number.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lerobot_ros.sim.mesh_cache import Simplification, simplified_copy

MESH_MODES = ("simplified", "full")
#: the floor's render grid spacing (m) with simplified meshes; the scene's 0.01 draws 50x more quads
FLOOR_GRID_M = 0.05


@dataclass(frozen=True)
class CameraPlacement:
    """A camera at `eye` looking at `target` (both in the frame of `body`), image up towards `up`."""

    body: str
    eye: tuple[float, float, float]
    target: tuple[float, float, float]
    fovy: float
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)


CAMERAS = {
    # 0.65 m in front of the base, 0.55 m up: base, cube area (x 0.2..0.4, y -0.1..0.1) and the arm
    # upright at mid-range all inside the image with a margin
    "front": CameraPlacement("world", (0.65, 0.0, 0.55), (0.2, 0.0, 0.05), 50.0),
    # behind the fixed jaw (the gripper body's -x side), looking past its tip
    "wrist": CameraPlacement("gripper", (-0.07, 0.0, -0.03), (-0.01, 0.0, -0.15), 75.0, up=(-1.0, 0.0, 0.0)),
}


def look_at_quat(eye, target, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """MuJoCo camera orientation (w, x, y, z): it looks along its -z axis with its y axis up."""
    import mujoco

    eye, target, up = (np.asarray(v, dtype=np.float64) for v in (eye, target, up))
    z = eye - target
    z /= np.linalg.norm(z)
    x = np.cross(up, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.column_stack([x, y, z]).ravel())
    return quat


def place_cameras(spec, names=tuple(CAMERAS), override: bool = True) -> None:
    """Add (or, with override, move) the named cameras of CAMERAS whose body the model has."""
    existing = {c.name: c for c in spec.cameras}
    for name in names:
        place = CAMERAS[name]
        cam = existing.get(name)
        if cam is not None and not override:
            continue
        if cam is None:
            body = spec.worldbody if place.body == "world" else spec.body(place.body)
            if body is None:
                continue
            cam = body.add_camera(name=name)
        cam.pos = list(place.eye)
        cam.quat = look_at_quat(place.eye, place.target, place.up)
        cam.fovy = place.fovy


def _is_visual_mesh_geom(geom) -> bool:
    import mujoco

    return geom.type == mujoco.mjtGeom.mjGEOM_MESH and geom.contype == 0 and geom.conaffinity == 0


def use_simplified_meshes(spec, scene_path: Path, settings: Simplification | None = None) -> int:
    """Point every visual (never colliding) mesh geom at a simplified copy of its mesh; returns how many."""
    import mujoco

    meshdir = Path(scene_path).parent / (spec.meshdir or "")
    sources = {(m.name or Path(m.file).stem): m for m in spec.meshes}
    copies: dict[str, str] = {}
    count = 0
    for geom in spec.geoms:
        if not _is_visual_mesh_geom(geom) or geom.meshname not in sources:
            continue
        if geom.meshname not in copies:
            src = sources[geom.meshname]
            path = Path(src.file) if Path(src.file).is_absolute() else meshdir / src.file
            mesh = spec.add_mesh(
                name=f"{geom.meshname}__render", file=str(simplified_copy(path, settings or Simplification()))
            )
            mesh.scale = src.scale
            copies[geom.meshname] = mesh.name
        geom.meshname = copies[geom.meshname]
        count += 1
    for geom in spec.geoms:
        if geom.type == mujoco.mjtGeom.mjGEOM_PLANE and 0 < geom.size[2] < FLOOR_GRID_M:
            geom.size = [geom.size[0], geom.size[1], FLOOR_GRID_M]
    return count


def build_spec(scene_path: Path, shipped: bool, meshes: str = "simplified"):
    """The scene as an MjSpec with the twin's cameras (shipped scenes: placed as CAMERAS says; a
    user's MJCF keeps its cameras and only gains the ones it lacks) and, if asked, simplified meshes."""
    import mujoco

    if meshes not in MESH_MODES:
        raise ValueError(f"meshes must be one of {MESH_MODES}, got {meshes!r}")
    spec = mujoco.MjSpec.from_file(str(scene_path))
    place_cameras(spec, override=shipped)
    if meshes == "simplified":
        use_simplified_meshes(spec, scene_path)
    return spec


def project(model, data, camera: str, points, width: int, height: int) -> np.ndarray:
    """World points (N, 3) -> pixel (u, v) in a `width` x `height` image of `camera` (u right, v down);
    rows with a point behind the camera are NaN. The pinhole model MuJoCo renders with (fovy vertical)."""
    cam = model.camera(camera).id
    pos, rot = data.cam_xpos[cam], data.cam_xmat[cam].reshape(3, 3)
    local = (np.atleast_2d(points) - pos) @ rot  # camera frame: x right, y up, looks along -z
    f = 0.5 * height / np.tan(np.deg2rad(model.cam_fovy[cam]) / 2)
    depth = -local[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = np.column_stack([width / 2 + f * local[:, 0] / depth, height / 2 - f * local[:, 1] / depth])
    uv[depth <= 0] = np.nan
    return uv


def arm_scene_spec(name: str, arm_meshdir: Path, center, extent: float):
    """An empty MjSpec for a scene composed around attached SO-101 arms: their mesh folder, the pick scene's 2 ms
    step, the view's centre and extent, sky and lights."""
    import mujoco

    spec = mujoco.MjSpec()
    spec.modelname = name
    spec.meshdir = str(arm_meshdir)  # the attached arms' mesh files are relative to it
    spec.option.timestep = 0.002
    spec.stat.center = list(center)
    spec.stat.extent = extent
    add_sky_and_lights(spec)
    return spec


def add_sky_and_lights(spec) -> None:
    """The pick scene's look for a scene composed in code: gradient sky, headlight, a light from above."""
    import mujoco

    spec.add_texture(
        name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX, builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
        rgb1=[0.3, 0.5, 0.7], rgb2=[0.0, 0.0, 0.0], width=32, height=512,
    )  # fmt: skip
    spec.visual.headlight.diffuse = [0.4, 0.4, 0.4]
    spec.visual.headlight.ambient = [0.5, 0.5, 0.5]
    spec.worldbody.add_light(pos=[0, 0, 3], dir=[0, 0, -1], diffuse=[1, 1, 1], specular=[0.3, 0.3, 0.3])
