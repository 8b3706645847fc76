"""`lerobot-ros demo`, README's first command, end to end with tiny settings: sim_metaworld through the
launch runner, the scripted expert over ROS, recorder bags, eval attached to the running bridge, the
LeRobotDataset; plus the demo's contract and its output-folder rules (fast)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lerobot_ros.demo.driver import DemoError
from lerobot_ros.demo.pipeline import MARKER, eval_available, prepare_output


def test_demo_contract_points_at_the_rendered_camera(tmp_path):
    from lerobot_ros.contract import load_contract
    from lerobot_ros.demo.demo_contract import write_demo_contract

    path = write_demo_contract("metaworld", tmp_path / "c.yaml", "corner2/image_raw", 48, 64)
    contract = load_contract(str(path))
    image = contract.features["observation.image"]
    assert image.topic == "/sim/corner2/image_raw" and tuple(image.shape) == (48, 64, 3)
    assert contract.episode_boundary is None and contract.fps == 80
    assert contract.features["action"].topic == "/sim/commands"


def test_output_folder_of_an_earlier_demo_is_replaced_anything_else_refused(tmp_path):
    out = tmp_path / "demo"
    prepare_output(out)
    (out / "bags").mkdir()
    prepare_output(out)  # an earlier demo's folder: replaced
    assert (out / MARKER).is_file() and not (out / "bags").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "precious.txt").write_text("x")
    with pytest.raises(DemoError, match="exists and is not a demo output folder; point --output_dir to a new folder"):
        prepare_output(mine)
    assert (mine / "precious.txt").exists()


def test_bad_policy_path_is_one_line(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lerobot_ros.cli.main",
            "demo",
            "--policy.path",
            str(tmp_path),
            "--output_dir",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr  # an expected failure (cli.main.EXIT_CODES)
    assert (
        proc.stderr.strip()
        == f"lerobot-ros demo: {tmp_path} has no config.json; pass a LeRobot pretrained_model folder"
    )
    assert not (tmp_path / "o").exists()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_demo_records_converts_and_evaluates(tmp_path, ros_env):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    from lerobot_ros.bag import BagReader

    out = tmp_path / "demo"
    cmd = [
        sys.executable,
        "-m",
        "lerobot_ros.cli.main",
        "demo",
        "--dataset.num_episodes",
        "1",
        "--env.observation_height",
        "48",
        "--env.observation_width",
        "48",
        "--eval.n_episodes",
        "1",
        "--output_dir",
        str(out),
    ]
    proc = subprocess.run(cmd, env=ros_env, capture_output=True, text=True, timeout=900)
    log = (out / "logs" / "launch.log").read_text() if (out / "logs" / "launch.log").exists() else ""
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:] + log[-3000:]
    summary = json.loads((out / "summary.json").read_text())

    # the expert succeeds through the ROS topics (after the warm-up episode: the hand-over between episodes
    # is exercised too); one bag per episode with every contract topic
    assert summary["recorded_episodes"] == 1 and summary["recorded_successes"] == 1
    bags = sorted((out / "bags").iterdir())
    assert [b.name for b in bags] == ["episode_000000"]
    with BagReader(str(bags[0])) as reader:
        counts = {name: info.count for name, info in reader.topics.items()}
    assert counts["/sim/commands"] > 20  # the expert's actions reached the bridge (lockstep: one step each)
    assert counts["/sim/joint_states"] >= counts["/sim/commands"] and counts["/sim/corner2/image_raw"] > 20

    # the dataset loads with LeRobot, frames match the summary
    ds = LeRobotDataset("local/lerobot_ros_demo", root=out / "dataset")
    assert ds.num_episodes == 1 and ds.num_frames == summary["dataset_frames"] > 40
    frame = ds[0]
    assert tuple(frame["observation.image"].shape) == (3, 48, 48) and tuple(frame["action"].shape) == (4,)
    assert frame["task"] == "Push the puck to a goal"
    assert Path(summary["video"]).is_file()

    # eval (when it is installed) ran attached to the demo's bridge and scored the expert
    if eval_available():
        info = json.loads(Path(summary["eval_info"]).read_text())
        assert (
            info["overall"]["n_episodes"] == 1 and summary["eval_pc_success"] == info["overall"]["pc_success"] == 100.0
        )
    else:
        assert "pending" in summary["eval_note"]

    # the printed summary says where things are, and the launch left no process behind
    for needle in (
        "recorded         1 episodes, 1 successful",
        str(out / "dataset"),
        "lerobot-ros demo --dataset.num_episodes 20 --steps 200",
        "lerobot-ros launch so101_real",
    ):
        assert needle in proc.stdout
    pids = [int(p) for p in re.findall(r"\[launch\] \S+ started \(pid (\d+)\)", log)]
    assert len(pids) == 3 and not [p for p in pids if _alive(p)]
