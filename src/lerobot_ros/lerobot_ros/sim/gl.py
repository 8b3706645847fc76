"""Check, at start-up, that MuJoCo can render offscreen, so a missing GL fails early with a fix hint."""

from __future__ import annotations

import os
import subprocess
import sys

from lerobot_ros.sim.base import SimStartupError

BACKENDS = ("egl", "osmesa", "glfw")
FIX_HINT = (
    "set MUJOCO_GL=egl (or osmesa) and install the offscreen GL libraries: "
    "apt-get install -y libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1 libopengl0 (osmesa: libosmesa6)"
)

_PROBE = "import mujoco; c = mujoco.GLContext(8, 8); c.make_current(); c.free(); print('ok')"


def ensure_offscreen_gl(default_backend: str = "egl", timeout_s: float = 60.0) -> str:
    """Pick the MuJoCo GL backend (MUJOCO_GL, else `default_backend`) and prove it renders; return its name.

    The probe runs in a child process: it must not leave a GL context in this process (a context
    created before a fork breaks the children) and a broken driver may abort rather than raise.
    """
    backend = os.environ.get("MUJOCO_GL") or default_backend
    if backend not in BACKENDS:
        raise SimStartupError(f"MUJOCO_GL={backend!r} is not an offscreen GL backend MuJoCo knows; {FIX_HINT}")
    os.environ["MUJOCO_GL"] = backend
    env = dict(os.environ, MUJOCO_GL=backend)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        raise SimStartupError(f"creating a {backend} GL context hung for {timeout_s:.0f} s; {FIX_HINT}") from None
    if proc.returncode != 0 or "ok" not in proc.stdout:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SimStartupError(f"MuJoCo cannot render offscreen with MUJOCO_GL={backend} ({last}); {FIX_HINT}")
    return backend


#: GL_RENDERER strings of rasterizers that run on the CPU (Mesa llvmpipe/softpipe, SwiftShader, Windows' GDI)
SOFTWARE_RENDERERS = (
    "llvmpipe",
    "softpipe",
    "swrast",
    "software rasterizer",
    "swiftshader",
    "gdi generic",
    "basic render",
)

_renderer: str | None = None


def gl_renderer() -> str:
    """GL_RENDERER of MuJoCo's offscreen backend in this process (read once, from a 1x1 context), or
    "unknown" when it cannot be read. Call where the simulator renders, never before a fork."""
    global _renderer
    if _renderer is None:
        try:
            import mujoco
            from OpenGL import GL

            ctx = mujoco.GLContext(1, 1)
            ctx.make_current()
            try:
                raw = GL.glGetString(GL.GL_RENDERER)
            finally:
                ctx.free()
            _renderer = raw.decode(errors="replace") if raw else "unknown"
        except Exception:  # noqa: BLE001 - a probe: the renderer's own start-up reports real GL failures
            _renderer = "unknown"
    return _renderer


def is_software_renderer(renderer: str) -> bool:
    """True for CPU rasterizers, where multisampling costs about as much as the scene itself (and for
    "unknown": the cheap choice)."""
    return renderer == "unknown" or any(name in renderer.lower() for name in SOFTWARE_RENDERERS)
