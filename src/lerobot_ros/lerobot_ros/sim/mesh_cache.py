"""Simplified copies of render-only meshes, made once and cached under the user's cache folder.

Why: on software GL (Mesa llvmpipe) the SO-101's CAD meshes (322k faces, 400k drawn) take most of a
frame, and at 640x480 a camera a few decimetres away sees about a millimetre per pixel. Welding the
vertices on a 1 mm grid (trimesh) removes the CAD's sliver triangles that stop quadric decimation, then
fast-simplification's quadric decimation halves what is left: ~7% of the faces, visually the same scene
(tests/e2e/test_so101_render.py bounds the difference). Only meshes drawn by visual geoms are replaced;
collision geoms keep the originals.

The cache key covers the source file's bytes, the parameters and the library versions, so a changed
mesh or setting makes a new file; files are written to a temporary name and renamed (processes that
start together never read half a file).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "LEROBOT_ROS_CACHE_DIR"


@dataclass(frozen=True)
class Simplification:
    """weld_digits: vertices rounded to this many decimals of a metre (3: 1 mm grid) and merged;
    reduction: the fraction of the welded faces that quadric decimation then removes."""

    weld_digits: int = 3
    reduction: float = 0.5

    def __post_init__(self):
        if not 0.0 <= self.reduction < 1.0:
            raise ValueError(f"reduction must be in [0, 1), got {self.reduction}")


def cache_dir() -> Path:
    """$LEROBOT_ROS_CACHE_DIR, else $XDG_CACHE_HOME/lerobot_ros, else ~/.cache/lerobot_ros."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lerobot_ros"


def _libraries() -> str:
    import fast_simplification
    import trimesh

    return f"trimesh {trimesh.__version__}, fast-simplification {getattr(fast_simplification, '__version__', '?')}"


def simplify_mesh(vertices, faces, settings: Simplification):
    """(vertices, faces) -> simplified (vertices, faces); numpy arrays, same units."""
    import fast_simplification
    import numpy as np
    import trimesh

    mesh = trimesh.Trimesh(vertices=np.asarray(vertices, dtype=np.float64), faces=np.asarray(faces), process=True)
    if settings.weld_digits is not None:
        mesh.merge_vertices(digits_vertex=settings.weld_digits)
        mesh.update_faces(mesh.nondegenerate_faces())
        mesh.remove_unreferenced_vertices()
    if settings.reduction > 0 and len(mesh.faces) > 100:
        v, f = fast_simplification.simplify(mesh.vertices, mesh.faces, target_reduction=settings.reduction)
        return v, f
    return mesh.vertices, mesh.faces


def simplified_copy(source: Path, settings: Simplification = Simplification(), root: Path | None = None) -> Path:
    """The cached simplified STL of `source` (made now if missing)."""
    import trimesh

    source = Path(source)
    data = source.read_bytes()
    key = hashlib.sha256(data + repr((settings, _libraries())).encode()).hexdigest()[:16]
    out = (root or cache_dir()) / "render_meshes" / f"{source.stem}-{key}.stl"
    if out.is_file():
        return out
    mesh = trimesh.load_mesh(source)
    v, f = simplify_mesh(mesh.vertices, mesh.faces, settings)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    trimesh.Trimesh(vertices=v, faces=f, process=False).export(tmp, file_type="stl")
    os.replace(tmp, out)
    return out
