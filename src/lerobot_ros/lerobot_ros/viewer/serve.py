"""Where the recording goes: the native viewer (the `rerun` binary rerun-sdk installs, when there is a display),
the web viewer served from this process (offline: its assets are in the wheel), or an .rrd file."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import rerun as rr

MODES = ("auto", "web", "native", "none")


@dataclass
class Endpoint:
    mode: str  # web | native | file | none
    url: str = ""  # what to open: the web viewer's URL, or the gRPC URI the native viewer connects to
    grpc_uri: str = ""


def native_viewer() -> str | None:
    """The `rerun` executable beside this Python (the venv's bin/) or on PATH."""
    beside = Path(sys.executable).parent / "rerun"
    return str(beside) if beside.is_file() else shutil.which("rerun")


def has_display(env=os.environ) -> bool:
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def web_viewer_url(web_port: int, grpc_uri: str, host: str = "localhost") -> str:
    return f"http://{host}:{web_port}/?url={quote(grpc_uri, safe='')}"


def open_viewer(
    recording: rr.RecordingStream,
    blueprint,
    mode: str = "auto",
    web_port: int = 9090,
    grpc_port: int = 9876,
    memory_limit: str = "25%",
    save: str | None = None,
) -> Endpoint:
    """Connect `recording` to a viewer. `save` writes an .rrd instead (replay it with `rerun FILE`)."""
    if mode not in MODES:
        raise ValueError(f"viewer must be one of {', '.join(MODES)}, got {mode!r}")
    if save:
        Path(save).parent.mkdir(parents=True, exist_ok=True)
        recording.save(save, default_blueprint=blueprint)
        return Endpoint("file", url=str(save))
    if mode == "none":
        return Endpoint("none")
    binary = native_viewer()
    if mode == "native" or (mode == "auto" and binary and has_display()):
        if not binary:
            raise ValueError("no native rerun viewer found (the `rerun` binary of rerun-sdk); use --viewer web")
        recording.spawn(port=grpc_port, memory_limit=memory_limit, default_blueprint=blueprint)
        recording.send_blueprint(blueprint)
        return Endpoint("native", url=f"rerun+http://127.0.0.1:{grpc_port}/proxy")
    uri = recording.serve_grpc(grpc_port=grpc_port, default_blueprint=blueprint, server_memory_limit=memory_limit)
    recording.send_blueprint(blueprint)
    rr.serve_web_viewer(web_port=web_port, open_browser=False, connect_to=uri)
    return Endpoint("web", url=web_viewer_url(web_port, uri), grpc_uri=uri)
