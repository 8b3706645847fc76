"""The SO-101 twin's rendering for real time on software GL: the simplified render meshes draw the same
scene as the package's full meshes (mean absolute difference bounded at 640x480), the physics does not
change, the front camera frames the cube wherever a seeded reset puts it, and cameras render at their
own rate. Real MuJoCo, real EGL (Mesa llvmpipe here), no mocks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from lerobot_ros.sim import RenderSettings, SimStartupError
from lerobot_ros.sim.gl import is_software_renderer
from lerobot_ros.sim.mesh_cache import Simplification, simplified_copy
from lerobot_ros.sim.so101_scene import project
from lerobot_ros.sim.so101_twin import BLOCK_SAMPLING_BOUNDS, SO101Twin, so101_assets_dir

REPO_ROOT = Path(__file__).resolve().parents[2]

W, H = 640, 480
#: mean absolute difference (0..255 per channel) between simplified and full renders at 640x480;
#: measured 0.19 (front) and 0.12 (wrist) for the pose below; drawing no arm at all gives 6.0 and 4.7
MAD_BOUND = {"front": 1.0, "wrist": 1.0}
#: a pose that shows the arm's side and the gripper near the table
POSE = np.array([0.3, 0.6, -0.5, 0.7, 0.4, 0.5])
#: the cube's colour in pick_scene.xml (rgba .6 .3 .6), lit: its pixels are the only purple ones
CUBE_RGB = np.array([0.6, 0.3, 0.6]) * 255


def _twin(meshes: str, cameras=("front",), **kw) -> SO101Twin:
    return SO101Twin(cameras=cameras, render=RenderSettings(W, H, shadows=False, antialias=False), meshes=meshes, **kw)


def _drive(twin: SO101Twin, seed: int, steps: int = 20):
    obs = twin.reset(seed=seed)
    for _ in range(steps):
        obs = twin.step(POSE).observation
    return obs


@pytest.mark.slow
def test_simplified_meshes_render_the_same_scene_and_leave_physics_alone():
    full, simple = _twin("full", ("front", "wrist")), _twin("simplified", ("front", "wrist"))
    try:
        for seed in (0, 3):
            a, b = _drive(full, seed), _drive(simple, seed)
            np.testing.assert_array_equal(a.state, b.state)  # visual geoms never collide: same physics
            np.testing.assert_array_equal(a.env_state, b.env_state)
            for cam, bound in MAD_BOUND.items():
                assert a.images[cam].shape == b.images[cam].shape == (H, W, 3)
                mad = np.abs(a.images[cam].astype(np.int16) - b.images[cam].astype(np.int16)).mean()
                assert mad < bound, f"{cam} seed {seed}: MAD {mad:.3f} >= {bound}"
        assert simple.render_info["meshes"] == "simplified" and full.render_info["meshes"] == "full"
        drawn = [simple.model.geom_dataid[g] for g in range(simple.model.ngeom) if simple.model.geom_group[g] == 2]
        assert drawn and all(simple.model.mesh(m).name.endswith("__render") for m in drawn if m >= 0)
        assert simple.model.nmeshface < 1.2 * full.model.nmeshface  # the originals stay for the collision geoms
    finally:
        full.close()
        simple.close()


@pytest.mark.slow
def test_front_camera_frames_the_cube_anywhere_a_reset_puts_it():
    twin = _twin("simplified")
    try:
        twin.reset(seed=0)
        model, data = twin.model, twin.data
        (x0, y0), (x1, y1) = BLOCK_SAMPLING_BOUNDS
        half = model.geom_size[model.geom("block").id][2]
        corners = np.array(
            [[x, y, z] for x in (x0 - half, x1 + half) for y in (y0 - half, y1 + half) for z in (0, 2 * half)]
        )
        uv = project(model, data, "front", corners, W, H)
        margin = 0.1 * H
        assert np.all((uv[:, 0] > margin) & (uv[:, 0] < W - margin) & (uv[:, 1] > margin) & (uv[:, 1] < H - margin)), uv
        for seed in (0, 1, 2):
            obs = twin.reset(seed=seed)
            centre = project(model, data, "front", obs.env_state, W, H)[0]
            purple = np.linalg.norm(obs.images["front"].astype(float) - CUBE_RGB, axis=-1) < 60
            vs, us = np.nonzero(purple)
            assert len(us) > 100, f"seed {seed}: cube not seen"  # a 4 cm cube is ~ 20x20 px here
            assert abs(us.mean() - centre[0]) < 15 and abs(vs.mean() - centre[1]) < 25, (
                seed,
                centre,
                us.mean(),
                vs.mean(),
            )
    finally:
        twin.close()


def test_images_match_the_contract_and_the_bridge_config():
    contract = yaml.safe_load((REPO_ROOT / "config/contracts/so101_sim.yaml").read_text())
    shape = contract["features"]["observation.images.front"]["shape"]
    params = yaml.safe_load((REPO_ROOT / "config/sim/so101_twin.yaml").read_text())["/**"]["ros__parameters"]
    assert shape == [params["env.observation_height"], params["env.observation_width"], 3] == [H, W, 3]
    twin = SO101Twin(
        cameras=tuple(params["cameras"]),
        render=RenderSettings(params["env.observation_width"], params["env.observation_height"]),
    )
    assert twin.cameras == {"front": (H, W)}


def test_wrist_camera_is_an_option_and_unknown_cameras_fail_at_preflight():
    SO101Twin(cameras=("front", "wrist")).preflight()
    SO101Twin(scene="arm", cameras=("front", "wrist")).preflight()  # the arm-only scene gets both too
    with pytest.raises(Exception, match="not in pick_scene.xml"):
        SO101Twin(cameras=("top",)).preflight()


def test_cameras_render_at_their_own_rate():
    twin = SO101Twin(cameras=("front", "wrist"), render=RenderSettings(32, 24, False, False), camera_fps={"wrist": 10})
    try:
        obs = twin.reset(seed=0)
        assert set(obs.images) == {"front", "wrist"}  # a reset renders every camera
        seen = [set(twin.step(np.zeros(6)).observation.images) for _ in range(6)]
        assert seen == [{"front"}, {"front"}, {"front", "wrist"}] * 2  # 30 fps physics, wrist every 3rd step
    finally:
        twin.close()
    with pytest.raises(Exception, match="camera_fps"):
        SO101Twin(cameras=("front",), camera_fps=60)


def test_multisampling_is_for_gpu_renderers():
    assert is_software_renderer("llvmpipe (LLVM 15.0.6, 256 bits)")
    assert is_software_renderer("unknown")
    assert not is_software_renderer("NVIDIA H100 80GB HBM3/PCIe/SSE2")
    twin = SO101Twin(render=RenderSettings(32, 24, False, True))
    try:
        twin.reset(seed=0)
        want = 0 if is_software_renderer(twin.render_info["gl_renderer"]) else 8  # pick_scene.xml asks for 8
        assert twin.render_info["multisamples"] == want
    finally:
        twin.close()


def test_mesh_cache_is_made_once_and_keyed_by_settings(tmp_path):
    src = so101_assets_dir() / "assets" / "waveshare_mounting_plate_so101_v2.stl"  # 1254 faces: quick
    first = simplified_copy(src, root=tmp_path)
    mtime = first.stat().st_mtime_ns
    assert simplified_copy(src, root=tmp_path) == first and first.stat().st_mtime_ns == mtime
    other = simplified_copy(src, Simplification(weld_digits=4, reduction=0.2), root=tmp_path)
    assert other != first and other.is_file()
    import trimesh

    full, simple = trimesh.load_mesh(src), trimesh.load_mesh(first)
    assert len(simple.faces) < len(full.faces)
    np.testing.assert_allclose(simple.bounds, full.bounds, atol=1.5e-3)  # same part, to the 1 mm weld grid
    assert not list(tmp_path.rglob("*.tmp"))


def test_unwritable_mesh_cache_is_one_clear_line(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("LEROBOT_ROS_CACHE_DIR", str(tmp_path / "file" / "cache"))
    twin = SO101Twin(render=RenderSettings(32, 24, False, False))
    with pytest.raises(SimStartupError, match="set LEROBOT_ROS_CACHE_DIR to a writable folder"):
        twin.reset(seed=0)
