"""Parity: `lerobot-ros eval` through ROS (sim bridges in lockstep + policy node / scripted expert) against
LeRobot's own loop (`lerobot.scripts.lerobot_eval.eval_policy_all`) on the same Meta-World task, seeds and
render settings, episode by episode: success, sum_reward and max_reward must be identical.

Both sides step LeRobot's `MetaworldEnv`; the policy is a small random ACT saved to disk, loaded by the
policy node on one side and the way lerobot-eval loads it on the other. Episodes are cut short
(`max_episode_steps`) and rendered small so the test stays within a few minutes on two cores.
"""

from __future__ import annotations

import json
from pathlib import Path

import av
import pytest

from lerobot_ros.eval.evaluation import EvalConfig, Evaluation
from lerobot_ros.eval.reference import run_lerobot_eval
from lerobot_ros.sim import RenderSettings
from lerobot_ros.testing.policies import metaworld_act

pytestmark = pytest.mark.slow

TASK = "push-v3"


def assert_same_episodes(ros_info: dict, ref_info: dict, n: int) -> None:
    ours, theirs = ros_info["per_task"][0]["metrics"], ref_info["per_task"][0]["metrics"]
    assert len(ours["sum_rewards"]) == len(theirs["sum_rewards"]) == n
    assert ours["successes"] == theirs["successes"]
    assert ours["sum_rewards"] == theirs["sum_rewards"]  # bit for bit
    assert ours["max_rewards"] == theirs["max_rewards"]
    # the same schema as lerobot-eval's eval_info.json (plus per_episode, and lerobot_ros extras)
    for key in ("per_group", "overall"):
        sub = ros_info[key][TASK] if key == "per_group" else ros_info[key]
        ref = ref_info[key][TASK] if key == "per_group" else ref_info[key]
        assert list(sub) == list(ref)
    assert set(ros_info["per_task"][0]) == set(ref_info["per_task"][0])
    assert list(ours) == list(theirs)
    for key in ("avg_sum_reward", "avg_max_reward", "pc_success", "n_episodes"):
        assert ros_info["overall"][key] == ref_info["overall"][key]
    assert [e["seed"] for e in ros_info["per_episode"]] == list(range(1000, 1000 + n))


def frames_in(path: str) -> int:
    with av.open(path) as container:
        return sum(1 for _ in container.decode(video=0))


def test_scripted_expert_parity_over_two_bridges(tmp_path):
    """The Meta-World expert node on two bridges in parallel (/sim_i) vs the expert inside LeRobot's loop."""
    render = RenderSettings(48, 48, shadows=False, antialias=False)
    cfg = EvalConfig(
        task=TASK,
        expert=True,
        n_episodes=2,
        start_seed=1000,
        workers=2,
        observation_height=48,
        observation_width=48,
        antialias=False,
        max_episode_steps=120,
        videos=1,
        output_dir=tmp_path / "ros",
        quiet=True,
    )
    ros_info = Evaluation(cfg).run()
    ref_info = run_lerobot_eval(TASK, 2, 1000, render, max_episode_steps=120)
    assert_same_episodes(ros_info, ref_info, 2)
    assert all(ros_info["per_task"][0]["metrics"]["successes"])  # the expert solves push-v3
    assert sorted({e["worker"] for e in ros_info["lerobot_ros"]["episodes"]}) == ["/sim_0", "/sim_1"]
    video = ros_info["overall"]["video_paths"]
    assert len(video) == 1 and Path(video[0]).name == "eval_episode_0.mp4"
    assert frames_in(video[0]) == ros_info["lerobot_ros"]["episodes"][0]["n_steps"] + 1  # reset frame + each step
    assert (tmp_path / "ros" / "eval_info.json").is_file()


def test_random_act_policy_parity(tmp_path):
    """A random ACT in the policy node (ticking on each lockstep observation) vs lerobot-eval's loop."""
    policy = metaworld_act(tmp_path / "act", 32)
    cfg = EvalConfig(
        task=TASK,
        policy_path=str(policy),
        n_episodes=2,
        start_seed=1000,
        workers=1,
        max_episode_steps=15,
        videos=0,
        output_dir=tmp_path / "ros",
        quiet=True,
    )
    ros_info = Evaluation(cfg).run()
    assert ros_info["lerobot_ros"]["render"] == [32, 32]  # taken from the policy's image feature
    ref_info = run_lerobot_eval(
        TASK, 2, 1000, RenderSettings(32, 32, shadows=False), policy_path=str(policy), max_episode_steps=15
    )
    assert_same_episodes(ros_info, ref_info, 2)
    assert [e["n_steps"] for e in ros_info["lerobot_ros"]["episodes"]] == [15, 15]
    assert len(set(ros_info["per_task"][0]["metrics"]["sum_rewards"])) == 2  # the seeds gave different episodes


def test_two_tasks_scripted_expert_parity(tmp_path):
    """`--task push-v3,reach-v3` as lerobot-eval's `--env.task`: tasks one after another (only one task's
    bridges alive at a time), eval_info.json per_task / per_group / overall equal to eval_policy_all's."""
    tasks = "push-v3,reach-v3"
    render = RenderSettings(48, 48, shadows=False, antialias=False)
    cfg = EvalConfig(
        task=tasks,
        expert=True,
        n_episodes=2,
        start_seed=1000,
        workers=2,
        observation_height=48,
        observation_width=48,
        antialias=False,
        max_episode_steps=120,
        videos=0,
        output_dir=tmp_path / "ros",
        quiet=True,
    )
    ros = Evaluation(cfg).run()
    ref = run_lerobot_eval(tasks, 2, 1000, render, max_episode_steps=120)
    assert [(t["task_group"], t["task_id"]) for t in ros["per_task"]] == [("push-v3", 0), ("reach-v3", 0)]
    assert [(t["task_group"], t["task_id"]) for t in ref["per_task"]] == [("push-v3", 0), ("reach-v3", 0)]
    for ours, theirs in zip(ros["per_task"], ref["per_task"]):
        assert ours["metrics"] == theirs["metrics"]  # bit for bit, videos ([]) included
    assert ros["per_group"] == ref["per_group"]
    for key in ref["overall"]:
        if key not in ("eval_s", "eval_ep_s"):
            assert ros["overall"][key] == ref["overall"][key], key
    assert list(ros["overall"]) == list(ref["overall"])
    assert ros["overall"]["n_episodes"] == 4
    assert [(e["task_group"], e["episode_ix"], e["seed"]) for e in ros["per_episode"]] == [
        ("push-v3", 0, 1000),
        ("push-v3", 1, 1001),
        ("reach-v3", 0, 1000),
        ("reach-v3", 1, 1001),
    ]
    assert ros["lerobot_ros"]["task_description"] == ["Push the puck to a goal", "Reach a goal position"]
    logs = sorted(p.name for p in (tmp_path / "ros" / "logs").iterdir())
    assert "push-v3_0_sim_0_bridge.log" in logs and "reach-v3_0_sim_1_expert.log" in logs


def test_a_bridge_that_dies_loses_only_its_episode(tmp_path):
    """Two bridges; one is killed as the episodes start: its episode is re-run (same seed) on the other and
    scores as it would have. Then one bridge, killed: the episodes not run are reported failed, eval_info.json
    is still written, and the run ends with one line."""
    from lerobot_ros.eval.evaluation import EvalSetupError

    def run(workers: int, out: Path):
        holder = {}

        def printer(*args, **kwargs):
            if str(args[0]).startswith("ready in"):
                holder["ev"].processes.procs[f"/sim_{workers - 1}"][0].proc.kill()  # that namespace's bridge

        cfg = EvalConfig(
            task=TASK,
            expert=True,
            n_episodes=3,
            workers=workers,
            observation_height=48,
            observation_width=48,
            antialias=False,
            max_episode_steps=60,
            videos=0,
            output_dir=out,
        )
        holder["ev"] = Evaluation(cfg, printer=printer)
        return holder["ev"].run()

    info = run(2, tmp_path / "two")
    eps = info["lerobot_ros"]["episodes"]
    assert [e["seed"] for e in eps] == [1000, 1001, 1002] and {e["worker"] for e in eps} == {"/sim_0"}
    ref = run_lerobot_eval(TASK, 3, 1000, RenderSettings(48, 48, shadows=False, antialias=False), max_episode_steps=60)
    assert info["per_task"][0]["metrics"]["sum_rewards"] == ref["per_task"][0]["metrics"]["sum_rewards"]
    with pytest.raises(
        EvalSetupError, match=r"3 episode\(s\) not run: every bridge stopped \(/sim_0/sim_bridge exited"
    ):
        run(1, tmp_path / "one")
    written = json.loads((tmp_path / "one" / "eval_info.json").read_text())
    assert written["overall"]["n_episodes"] == 0
    assert [f["seed"] for f in written["lerobot_ros"]["failed_episodes"]] == [1000, 1001, 1002]
