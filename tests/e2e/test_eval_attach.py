"""`lerobot-ros eval --attach`: evaluate against a sim bridge that already runs in its own process.

One SO-101 twin bridge (cheap to build) is started by hand in a namespace, with reset_on_start, as a
launch file would. Then, on that same bridge:
1. a scripted expert node started by the test drives the bridge's first episode while eval attaches
   without a source flag: eval finds the bridge and the expert, waits for the running episode to end,
   and scores seeded episodes step for step like the library loop (a stale action from the running
   episode would shift every step);
2. eval --attach --expert starts its own expert beside the bridge (the case that failed before);
3. one-line errors: nothing publishes commands, a task the bridge does not run, no bridge at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lerobot_ros.cli.main import main as cli_main
from lerobot_ros.eval.results import reduce_rewards
from lerobot_ros.sim import SimRunner
from lerobot_ros.sim.experts import SO101PickExpert
from lerobot_ros.sim.so101_twin import SO101Twin

pytestmark = pytest.mark.slow

NS = "/attach_twin"
MAX_STEPS = 150


def library_episodes(seeds: list[int]) -> dict[int, tuple[int, float, bool]]:
    """(steps, sum_reward, success) per seed from the same twin + expert stepped in-process."""
    sim = SO101Twin(cameras=())
    sim.max_episode_steps = MAX_STEPS
    runner, expert, out = SimRunner(sim), SO101PickExpert(), {}
    try:
        for seed in seeds:
            frame = runner.reset(seed)
            expert.reset()
            rewards = []
            while not frame.episode.done:
                obs = frame.observation
                frame = runner.step(expert.act(obs.state, obs.env_state))
                rewards.append(frame.episode.reward)
            out[seed] = (frame.episode.step, reduce_rewards(rewards)[0], frame.episode.success)
    finally:
        sim.close()
    return out


def node_process(module: str, log: Path, env: dict, *params: str) -> subprocess.Popen:
    args = [sys.executable, "-m", f"lerobot_ros.nodes.{module}", "--ros-args", "-r", f"__ns:={NS}"]
    for p in params:
        args += ["-p", p]
    return subprocess.Popen(args, env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(2)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def ours(info: dict) -> list[tuple[int, float, bool]]:
    eps = info["lerobot_ros"]["episodes"]
    per = {e["seed"]: e for e in info["per_episode"]}
    return [(e["n_steps"], per[e["seed"]]["sum_reward"], per[e["seed"]]["success"]) for e in eps]


def one_line_error(argv: list[str], capsys) -> str:
    assert cli_main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_eval_attaches_to_a_running_bridge(tmp_path, ros, ros_env, capsys, monkeypatch):
    env = dict(ros_env, MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))
    bridge = node_process(
        "sim_bridge_node",
        tmp_path / "bridge.log",
        env,
        "env.type:=so101",
        "env.observation_width:=48",
        "env.observation_height:=48",
        "reset_on_start:=true",
        "seed:=0",
        f"env.episode_length:={MAX_STEPS}",
    )
    expert = node_process("scripted_expert_node", tmp_path / "expert.log", env, "expert:=so101_pick")
    try:
        reference = library_episodes([1000, 1001])
        assert all(success for _, _, success in reference.values())

        # 1. the running expert is used; the bridge's own first episode (seed 0) may still be in flight
        out1 = tmp_path / "eval_running_source"
        assert (
            cli_main(
                [
                    "eval",
                    "--attach",
                    NS.lstrip("/"),
                    "--eval.n_episodes",
                    "2",
                    "--seed",
                    "1000",
                    "--videos",
                    "1",
                    "--startup_timeout_s",
                    "120",
                    "--output_dir",
                    str(out1),
                ]
            )
            == 0
        )
        info = json.loads((out1 / "eval_info.json").read_text())
        assert [e["seed"] for e in info["per_episode"]] == [1000, 1001]
        assert ours(info) == [reference[1000], reference[1001]]
        extra = info["lerobot_ros"]
        assert (extra["env"], extra["task"], extra["render"]) == ("so101", "pick", [48, 48])
        assert extra["policy_source"] == "attached" and extra["attached"] == [NS]
        assert info["overall"]["pc_success"] == 100.0
        video = info["overall"]["video_paths"]
        assert len(video) == 1 and Path(video[0]).is_file()

        # --expert while a scripted source already acts there: that one is used, not doubled
        out1b = tmp_path / "eval_expert_running"
        assert (
            cli_main(
                [
                    "eval",
                    "--attach",
                    NS,
                    "--expert",
                    "--eval.n_episodes",
                    "1",
                    "--seed",
                    "1000",
                    "--videos",
                    "0",
                    "--output_dir",
                    str(out1b),
                ]
            )
            == 0
        )
        assert ours(json.loads((out1b / "eval_info.json").read_text())) == [reference[1000]]
        # the running expert is used (seen at once, or once eval's own, started before discovery had found
        # it, runs: eval stops its own then), never two sources at once (doubled actions shift the steps)
        assert f"{NS}: using the source already running there ({NS}/scripted_expert)" in capsys.readouterr().out

        # the same when the first look misses the running expert (slow discovery, forced here): eval's own
        # expert starts, the second look finds the running one, eval stops its own and scores with that one
        from lerobot_ros.eval import discovery

        real, looks = discovery.settled_sources, []

        def slow_first_look(node, ns, *a, **k):
            looks.append(ns)
            return ([], {}) if len(looks) == 1 else real(node, ns, *a, **k)

        monkeypatch.setattr(discovery, "settled_sources", slow_first_look)
        out1c = tmp_path / "eval_expert_found_late"
        argv = ["eval", "--attach", NS, "--expert", "--eval.n_episodes", "1", "--seed", "1000", "--videos", "0"]
        assert cli_main([*argv, "--output_dir", str(out1c)]) == 0
        monkeypatch.undo()
        assert ours(json.loads((out1c / "eval_info.json").read_text())) == [reference[1000]]
        assert f"{NS}: using the source already running there ({NS}/scripted_expert)" in capsys.readouterr().out
        assert "expert ready" in (out1c / "logs" / "attach_twin_expert.log").read_text()  # ours ran, then stopped

        # 2. with the expert gone, eval without a source says what is missing ...
        stop(expert)
        node = ros.create_node("attach_probe")
        deadline = time.monotonic() + 20
        while node.count_publishers(f"{NS}/commands") and time.monotonic() < deadline:
            time.sleep(0.1)
        err = one_line_error(
            ["eval", "--attach", NS, "--startup_timeout_s", "15", "--output_dir", str(tmp_path / "x")], capsys
        )
        assert f"nothing publishes {NS}/commands" in err and "pass --expert or --policy.path" in err
        # ... and with --expert it starts one beside the bridge
        out2 = tmp_path / "eval_own_expert"
        assert (
            cli_main(
                [
                    "eval",
                    "--attach",
                    NS,
                    "--expert",
                    "--eval.n_episodes",
                    "1",
                    "--seed",
                    "1001",
                    "--videos",
                    "0",
                    "--startup_timeout_s",
                    "120",
                    "--output_dir",
                    str(out2),
                ]
            )
            == 0
        )
        info2 = json.loads((out2 / "eval_info.json").read_text())
        assert ours(info2) == [reference[1001]]
        assert info2["lerobot_ros"]["policy_source"] == "scripted_expert"
        assert (out2 / "logs" / "attach_twin_expert.log").is_file()

        # 3. a task the bridge does not run; a namespace with no bridge (the error names what was looked for)
        err = one_line_error(
            ["eval", "--attach", NS, "--expert", "--env.task", "kitchen", "--output_dir", str(tmp_path / "y")], capsys
        )
        assert f"--env.task kitchen but {NS}/sim_bridge runs task 'pick'" in err
        err = one_line_error(  # long enough for a fresh participant to discover the bridge on a busy machine
            [
                "eval",
                "--attach",
                "/nobody",
                "--expert",
                "--startup_timeout_s",
                "15",
                "--output_dir",
                str(tmp_path / "z"),
            ],
            capsys,
        )
        assert "no sim bridge in namespace /nobody" in err and "/nobody/reset_episode" in err
        assert f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}" in err and f"bridges seen: {NS}" in err
        for d in ("x", "y", "z"):
            assert not (tmp_path / d / "eval_info.json").exists()
    finally:
        stop(expert)
        stop(bridge)
    assert bridge.returncode in (0, -2), (tmp_path / "bridge.log").read_text()[-2000:]
