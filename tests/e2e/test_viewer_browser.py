"""The served rerun web viewer in a real headless browser (Debian's chromium, installed by scripts/setup.sh):
against a running SO-101 twin (sim bridge, small render) and against a replayed bag. Each test keeps its
screenshot under outputs/viewer/ (printed) and checks that the camera panel and the joint plots are drawn:
pixel spread inside the camera view, and the state/action line colours inside the plot column."""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from lerobot_ros.viewer.log import ACTION_RGB, STATE_RGB
from lerobot_ros.viewer.screenshot import chromium, screenshot

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium() is None, reason="chromium not installed (scripts/setup.sh as root)"),
]

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "outputs" / "viewer"
W, H = 1600, 900
# blueprint columns 2:3:2 (cameras + status | joint plots | 3D + diagnostics); the camera view is the top of the left
CAMERA_BOX = (20, 80, 430, 330)  # x0, y0, x1, y1 inside the camera view in live and replay layouts
PLOTS_BOX = (470, 60, 1130, 600)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def decode(png: bytes) -> np.ndarray:
    import cv2

    return cv2.cvtColor(cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def colour_columns(img: np.ndarray, box, rgb, tol: int = 40) -> int:
    """Pixel columns of `box` holding `rgb`: a plotted line spans its plot's width, the legend dots a few columns."""
    x0, y0, x1, y1 = box
    region = img[y0:y1, x0:x1].astype(np.int16)
    return int((np.abs(region - np.asarray(rgb, np.int16)).max(axis=-1) < tol).any(axis=0).sum())


def drawn(img: np.ndarray) -> dict:
    x0, y0, x1, y1 = CAMERA_BOX
    return {
        "camera_std": float(img[y0:y1, x0:x1].std()),
        "state_columns": colour_columns(img, PLOTS_BOX, STATE_RGB),
        "action_columns": colour_columns(img, PLOTS_BOX, ACTION_RGB),
    }


def looks_drawn(png: bytes, min_action_columns: int = 300) -> bool:
    """Camera: an image, not the view's flat background or its loading dots; plots: both lines drawn (a line
    spans many columns, a legend dot a few)."""
    d = drawn(decode(png))
    return d["camera_std"] > 12 and d["state_columns"] > 300 and d["action_columns"] > min_action_columns


def wait_for_line(proc: subprocess.Popen, needle: str, timeout_s: float, lines: list) -> str:
    found = threading.Event()
    result = {}

    def pump():
        for line in proc.stdout:
            lines.append(line)
            if needle in line and not found.is_set():
                result["line"] = line
                found.set()

    threading.Thread(target=pump, daemon=True).start()
    if not found.wait(timeout_s):
        raise AssertionError(f"no {needle!r} within {timeout_s:.0f} s; output: {''.join(lines)[-2000:]}")
    return result["line"]


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def start(args, env) -> subprocess.Popen:
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True, cwd=REPO
    )


def shoot_and_check(url: str, name: str, timeout_s: float, min_action_columns: int = 300) -> dict:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / f"{name}.png"
    ready = functools.partial(looks_drawn, min_action_columns=min_action_columns)
    ok, seconds = screenshot(url, out, W, H, timeout_s=timeout_s, ready=ready, interval_s=5.0)
    d = drawn(decode(out.read_bytes()))
    print(f"\nscreenshot: {out} ({seconds:.0f} s; {d})")
    assert ok, f"the viewer was not drawn within {timeout_s:.0f} s: {d} (screenshot {out})"
    return d


def test_web_viewer_draws_a_replayed_bag(tmp_path, ros_env):
    from lerobot_ros.testing.bags import write_sim_bag

    bag = write_sim_bag(tmp_path / "episode_000000", seconds=2.0, cameras={"front": (240, 320)})
    web, grpc = free_port(), free_port()
    proc = start(
        [
            sys.executable,
            "-m",
            "lerobot_ros.cli.main",
            "view",
            str(bag),
            "--viewer",
            "web",
            "--web_port",
            str(web),
            "--grpc_port",
            str(grpc),
            "--exit_after_s",
            "600",
        ],
        ros_env,
    )
    lines: list = []
    try:
        line = wait_for_line(proc, "open http", 180, lines)
        url = line.split("open ", 1)[1].split()[0]
        assert url.startswith(f"http://localhost:{web}/?url=rerun%2Bhttp")
        shoot_and_check(url, "replay", timeout_s=240)
    finally:
        stop(proc)


class EpisodesOnRepeat:
    """Starts an episode of the lockstep twin, waits for its end, pauses, starts the next: what the viewer must
    draw keeps coming, so the test does not depend on the viewer matching the twin's volatile topics before
    one short episode (under a second of wall time) is over (the launch's nodes are new participants on the
    loopback profile: they find a running viewer within a DDS announcement period, not at once)."""

    def __init__(self, node, ns: str = "/sim", pause_s: float = 2.0):
        from lerobot_ros.ros.qos import EPISODE_STATUS_QOS
        from lerobot_ros_msgs.msg import EpisodeStatus

        self.node, self.ns, self.pause_s = node, ns, pause_s
        self.done_episodes: set[int] = set()
        self.started = 0
        self._cond = threading.Condition()
        self._stop = threading.Event()
        node.create_subscription(EpisodeStatus, f"{ns}/episode_status", self._on_status, EPISODE_STATUS_QOS)
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _on_status(self, msg) -> None:
        if msg.done:
            with self._cond:
                self.done_episodes.add(int(msg.episode_index))
                self._cond.notify_all()

    def _run(self) -> None:
        from lerobot_ros.ros.runtime import call_service
        from lerobot_ros_msgs.srv import ResetEpisode

        while not self._stop.is_set():
            request = ResetEpisode.Request(seed=0)  # the first call waits for the bridge to come up
            answer = call_service(self.node, ResetEpisode, f"{self.ns}/reset_episode", request, timeout=240)
            self.started += 1
            with self._cond:  # a lockstep episode that stalls is not this helper's to judge: the screenshot times out
                self._cond.wait_for(lambda: answer.episode_index in self.done_episodes or self._stop.is_set(), 120)
            self._stop.wait(self.pause_s)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._thread.join(60)


def test_web_viewer_draws_the_running_so101_twin(ros, ros_env):
    """Lockstep: the twin steps once per expert action, so joint states and commands cover the same stretch of
    sim time (in realtime mode the twin steps from its start while the expert is still importing, and on a
    loaded machine commands covered a third of the plot's window). Episodes run on repeat (EpisodesOnRepeat)
    from the moment the twin is ready, the viewer having come up first."""
    web, grpc = free_port(), free_port()
    viewer = start(
        [
            sys.executable,
            "-m",
            "lerobot_ros.cli.main",
            "view",
            "--contract",
            "so101_sim",
            "--use_sim_time",
            "--viewer",
            "web",
            "--web_port",
            str(web),
            "--grpc_port",
            str(grpc),
        ],
        ros_env,
    )
    sim = None
    sim_lines: list = []
    lines: list = []
    try:
        line = wait_for_line(viewer, "open http", 180, lines)
        sim = start(
            [
                sys.executable,
                "-m",
                "lerobot_ros.cli.main",
                "launch",
                "sim_so101",
                "rviz:=false",
                "expert:=true",
                "mode:=lockstep",
                "reset_on_start:=false",
                "env.observation_width:=320",
                "env.observation_height:=240",
            ],
            ros_env,
        )
        wait_for_line(sim, "expert ready", 240, sim_lines)
        with EpisodesOnRepeat(ros.create_node("episodes_on_repeat")) as episodes:
            shoot_and_check(line.split("open ", 1)[1].split()[0], "live", timeout_s=300, min_action_columns=100)
        assert episodes.started >= 1 and episodes.done_episodes, "no episode of the twin ran to its end"
    finally:
        stop(viewer)
        if sim is not None:
            stop(sim)
    assert viewer.returncode == 0, "".join(lines)[-2000:]
