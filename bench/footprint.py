"""Robot-side footprint: our nodes recording an SO-101 against LeRobot's own lerobot-record on the same hardware.

Both sides run, one after the other, on the same emulated SO-101 (`lerobot-ros virtual-arm so101`: a leader and a
follower on ptys, LeRobot's Feetech SDK on the wire) and the same two camera files (640x480, 30 fps, paced at 30 fps
and looping as a camera delivers frames), teleoperated by the leader, for one episode of --episode-s seconds at
30 fps:

- ours: robot_node, teleop_node, two camera_nodes (JPEG topics, as a robot ships them) and episode_recorder in
  automatic mode (one episode into an MCAP bag), each its own process as a launch file runs them;
- LeRobot's: lerobot-record (so101_follower + so101_leader, two cameras of a paced video-file type that wraps
  LeRobot's own OpenCVCamera, bench/footprint_support), writing its dataset (PNG frames, then the episode's AV1
  videos) as it always does.

Each process's CPU seconds (user + system, start-up and shutdown included) and peak RSS come from wait4 on its exit;
the emulator is not counted on either side. figure = our CPU seconds per recorded frame / LeRobot's (goal <= 1.0;
a frame is one 30 fps step with both cameras). Extra figures: the same with our converter's CPU added (ours then
also ends in a LeRobotDataset), and the largest RSS of one of our nodes (goal <= 250 MB: no torch on the robot
side, lerobot_ros.ros.torchless).

    .venv/bin/python bench/footprint.py                      # 20 s episodes
    .venv/bin/python bench/footprint.py --episode-s 60

Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ROS_DOMAIN_ID", str(30 + os.getpid() % 60))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import yaml  # noqa: E402

BIN = Path(sys.executable).parent
LIB = Path(sys.prefix) / "lib" / "lerobot_ros"
SUPPORT = Path(__file__).resolve().parent / "footprint_support"
FPS = 30
W, H = 640, 480
GOAL = 1.0
RSS_GOAL_MB = 250.0


def make_video(path: Path, seconds: float, seed: int) -> None:
    """A camera-like clip: a textured background with a moving square (JPEG and AV1 work as on a real scene)."""
    rng = np.random.default_rng(seed)
    background = cv2.GaussianBlur(rng.integers(0, 255, (H, W, 3), dtype=np.uint8), (0, 0), 3)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), FPS, (W, H))
    for i in range(int(seconds * FPS)):
        frame = background.copy()
        x = int((W - 80) * (0.5 + 0.5 * np.sin(i / 20)))
        cv2.rectangle(frame, (x, 200), (x + 80, 280), (40, 200, 90), -1)
        writer.write(frame)
    writer.release()


class Proc:
    """A child process whose CPU seconds and peak RSS are read from wait4 when it ends."""

    def __init__(self, label: str, cmd: list[str], log: Path, env: dict):
        self.label = label
        self.proc = subprocess.Popen(
            cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        self.cpu_s: float | None = None
        self.rss_mb: float | None = None
        self.code: int | None = None
        self.started = time.monotonic()
        self.wall_s: float | None = None

    def poll(self) -> bool:
        """True once ended (and measured)."""
        if self.code is not None:
            return True
        pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
        if pid == 0:
            return False
        self._done(status, usage)
        return True

    def _done(self, status: int, usage) -> None:
        self.wall_s = time.monotonic() - self.started
        self.code = os.waitstatus_to_exitcode(status)
        self.proc.returncode = self.code
        self.cpu_s = usage.ru_utime + usage.ru_stime
        self.rss_mb = usage.ru_maxrss / 1024

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.poll():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.label} did not end in {timeout:.0f} s")
            time.sleep(0.1)

    def stop(self, timeout: float = 30.0) -> None:
        if self.poll():
            return
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            self.wait(timeout)
        except TimeoutError:
            os.killpg(self.proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(self.proc.pid, 0)
            self._done(status, usage)


def node(executable: str, namespace: str, name: str, **params) -> list[str]:
    cmd = [str(LIB / executable), "--ros-args", "-r", f"__ns:={namespace}", "-r", f"__node:={name}"]
    for key, value in params.items():
        cmd += ["-p", f"{key}:={value}"]
    return cmd


def contract(path: Path) -> Path:
    """The shipped so101 contract with a second (wrist) camera, as lerobot-record gets two cameras here."""
    from lerobot_ros.contract import load_contract

    data = json.loads(json.dumps(load_contract("so101").raw))
    wrist = dict(data["features"]["observation.images.front"], topic="/wrist/image_raw/compressed")
    data["features"]["observation.images.wrist"] = wrist
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def count_frames(bag: Path, topic: str) -> int:
    from lerobot_ros.bag.reader import BagReader

    with BagReader(bag) as reader:
        return reader.topics[topic].count


def run_ours(work: Path, arm: dict, videos: dict, episode_s: float, env: dict) -> dict:
    out = work / "ours"
    procs = [
        Proc(
            "robot_node",
            node(
                "robot_node",
                "/follower",
                "robot",
                **{
                    "robot.port": arm["follower_port"],
                    "robot.id": "virtual_follower",
                    "robot.calibration_file": arm["follower_calibration"],
                    "fps": FPS,
                },
            ),
            work / "robot_node.log",
            env,
        ),  # fmt: skip
        Proc(
            "teleop_node",
            node(
                "teleop_node",
                "/leader",
                "teleop",
                **{
                    "teleop.port": arm["leader_port"],
                    "teleop.id": "virtual_leader",
                    "teleop.calibration_file": arm["leader_calibration"],
                    "commands_topic": "/follower/commands",
                    "fps": FPS,
                },
            ),
            work / "teleop_node.log",
            env,
        ),  # fmt: skip
    ]
    for cam, video in videos.items():
        params = {"source": video, "camera_name": cam, "fps": FPS, "loop": "true"}
        procs.append(
            Proc(f"camera_node ({cam})", node("camera_node", "/", f"{cam}_camera", **params), work / f"{cam}.log", env)
        )
    recorder = Proc(
        "episode_recorder",
        node(
            "episode_recorder", "/recorder", "episode_recorder", **{
                "contract": contract(work / "so101_two_cameras.yaml"), "output_dir": out,
                "dataset.episode_time_s": episode_s, "dataset.num_episodes": 1, "wait_for_topics_s": 120.0,
                "task": "footprint",
            },
        ),
        work / "recorder.log",
        env,
    )  # fmt: skip
    procs.append(recorder)
    try:
        recorder.wait(episode_s + 240)
    finally:
        for p in procs:
            p.stop()
    if recorder.code != 0:
        raise RuntimeError(f"the recorder failed ({recorder.code}): {(work / 'recorder.log').read_text()[-2000:]}")
    bag = next(out.glob("episode_*"))
    frames = min(count_frames(bag, f"/{cam}/image_raw/compressed") for cam in videos)
    converted = Proc(
        "lerobot-ros convert",
        [str(BIN / "lerobot-ros"), "convert", str(out), f"--contract={work / 'so101_two_cameras.yaml'}",
         "--dataset.repo_id=local/ours", f"--dataset.root={work / 'ours_dataset'}"],
        work / "convert.log",
        env,
    )  # fmt: skip
    converted.wait(900)
    return {"procs": procs, "frames": frames, "convert": converted}


def run_lerobot(work: Path, arm: dict, videos: dict, episode_s: float, env: dict) -> dict:
    calib = {"follower": Path(arm["follower_calibration"]).parent, "leader": Path(arm["leader_calibration"]).parent}
    cameras = {
        cam: {"type": "paced_file", "index_or_path": video, "fps": FPS, "width": W, "height": H}
        for cam, video in videos.items()
    }
    root = work / "lerobot_dataset"
    cmd = [
        sys.executable,
        str(SUPPORT / "lerobot_record_paced.py"),
        "--robot.type=so101_follower",
        f"--robot.port={arm['follower_port']}",
        "--robot.id=virtual_follower",
        f"--robot.calibration_dir={calib['follower']}",
        f"--robot.cameras={json.dumps(cameras)}",
        "--teleop.type=so101_leader",
        f"--teleop.port={arm['leader_port']}",
        "--teleop.id=virtual_leader",
        f"--teleop.calibration_dir={calib['leader']}",
        "--dataset.repo_id=local/lerobot",
        f"--dataset.root={root}",
        "--dataset.single_task=footprint",
        "--dataset.num_episodes=1",
        f"--dataset.episode_time_s={episode_s}",
        "--dataset.reset_time_s=0",
        f"--dataset.fps={FPS}",
        "--dataset.push_to_hub=false",
        "--play_sounds=false",
        "--display_data=false",
    ]
    proc = Proc("lerobot-record", cmd, work / "lerobot_record.log", env)
    proc.wait(episode_s + 600)
    if proc.code != 0:
        raise RuntimeError(f"lerobot-record failed ({proc.code}): {(work / 'lerobot_record.log').read_text()[-3000:]}")
    info = json.loads((root / "meta" / "info.json").read_text())
    return {"proc": proc, "frames": int(info["total_frames"])}


def start_arm(work: Path, env: dict) -> tuple[subprocess.Popen, dict]:
    cmd = [str(BIN / "lerobot-ros"), "virtual-arm", "so101", "--output_dir", str(work / "arm"), "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    info = json.loads(line)
    return proc, {
        "follower_port": info["follower"]["port"],
        "leader_port": info["leader"]["port"],
        "follower_calibration": info["follower"]["calibration_file"],
        "leader_calibration": info["leader"]["calibration_file"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episode-s", type=float, default=20.0, help="length of the recorded episode (s)")
    args = parser.parse_args(argv)
    from lerobot_ros.testing import netns

    env = dict(netns.loopback_env(), PYTHONUNBUFFERED="1")  # network mode loopback, as the launch files run nodes
    with tempfile.TemporaryDirectory(prefix="footprint_") as tmp:
        work = Path(tmp)
        env["HF_LEROBOT_HOME"] = str(work / "hf")
        videos = {}
        for i, cam in enumerate(("front", "wrist")):
            videos[cam] = str(work / f"{cam}.mp4")
            make_video(Path(videos[cam]), 10.0, seed=i)
        arm_proc, arm = start_arm(work, env)
        try:
            ours = run_ours(work, arm, videos, args.episode_s, env)
            theirs = run_lerobot(work, arm, videos, args.episode_s, env)
        finally:
            arm_proc.send_signal(signal.SIGINT)
            try:
                arm_proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # SIGINT ignored (started in a script's background): the figures stand
                arm_proc.kill()
                arm_proc.wait()
    our_cpu = sum(p.cpu_s for p in ours["procs"])
    their_cpu = theirs["proc"].cpu_s
    convert_cpu = ours["convert"].cpu_s
    per_frame_ours, per_frame_theirs = our_cpu / ours["frames"], their_cpu / theirs["frames"]
    figure = per_frame_ours / per_frame_theirs
    with_convert = (our_cpu + convert_cpu) / ours["frames"] / per_frame_theirs
    biggest = max(ours["procs"], key=lambda p: p.rss_mb)
    print(f"\n{'process':<26} {'CPU s':>8} {'alive s':>8} {'peak RSS MB':>12}")
    for p in [*ours["procs"], ours["convert"], theirs["proc"]]:
        side = "LeRobot: " if p is theirs["proc"] else "ours: "
        print(f"{side + p.label:<26} {p.cpu_s:>8.2f} {p.wall_s:>8.1f} {p.rss_mb:>12.0f}")
    print(f"\nframes recorded: ours {ours['frames']}, LeRobot {theirs['frames']} (one episode of {args.episode_s:g} s)")
    print(f"CPU ms per frame: ours {1000 * per_frame_ours:.1f}, LeRobot {1000 * per_frame_theirs:.1f}")
    print(f"ours / LeRobot: {figure:.3f} (goal <= {GOAL}); with our convert: {with_convert:.3f}")
    print(f"largest robot-side node: {biggest.label} {biggest.rss_mb:.0f} MB (goal <= {RSS_GOAL_MB:.0f})")
    print(
        json.dumps(
            {
                "bench": "footprint",
                "figure": round(figure, 4),
                "goal": GOAL,
                "goal_op": "<=",
                "meets_goal": bool(figure <= GOAL and biggest.rss_mb <= RSS_GOAL_MB),
                "ours_cpu_s": round(our_cpu, 2),
                "lerobot_cpu_s": round(their_cpu, 2),
                "ours_convert_cpu_s": round(convert_cpu, 2),
                "ratio_with_convert": round(with_convert, 4),
                "ours_frames": ours["frames"],
                "lerobot_frames": theirs["frames"],
                "ours_max_node_rss_mb": round(biggest.rss_mb, 1),
                "ours_rss_mb": {p.label: round(p.rss_mb, 1) for p in ours["procs"]},
                "lerobot_rss_mb": round(theirs["proc"].rss_mb, 1),
                "rss_goal_mb": RSS_GOAL_MB,
                "episode_s": args.episode_s,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
