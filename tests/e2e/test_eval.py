"""lerobot-ros eval without simulators: scoring like lerobot-eval, eval_info.json, contracts per namespace,
node command lines, and one-line errors for bad options."""

from __future__ import annotations

import json

import einops
import numpy as np
import pytest
import torch
import yaml

from lerobot_ros.cli.main import main as cli_main
from lerobot_ros.contract import load_contract
from lerobot_ros.contract.loader import resolve
from lerobot_ros.eval import EpisodeResult, build_eval_info, reduce_rewards, write_json_atomic
from lerobot_ros.eval.node_process import NodeSpec, namespaced_contract


def lerobot_batch_reductions(episodes: list[list[float]]):
    """eval_policy's reductions on a padded batch (rollout of several envs, masked after the first done)."""
    n = max(len(e) for e in episodes)
    reward = torch.zeros(len(episodes), n, dtype=torch.float64)
    done = torch.zeros(len(episodes), n, dtype=torch.bool)
    for i, e in enumerate(episodes):
        reward[i, : len(e)] = torch.tensor(e, dtype=torch.float64)
        done[i, len(e) - 1 :] = True
    done_indices = torch.argmax(done.to(int), dim=1)
    mask = (torch.arange(n) <= einops.repeat(done_indices + 1, "b -> b s", s=n)).int()
    return (
        einops.reduce(reward * mask, "b n -> b", "sum").tolist(),
        einops.reduce(reward * mask, "b n -> b", "max").tolist(),
    )


def test_rewards_reduce_bit_for_bit_like_lerobot_eval():
    rng = np.random.default_rng(0)
    episodes = [list(rng.random(n) * 10) for n in (7, 500, 133)]
    sums, maxes = lerobot_batch_reductions([episodes[1]])
    assert reduce_rewards(episodes[1]) == (sums[0], maxes[0])
    # a torch sum is not a sequential Python sum; matching LeRobot means using its reduction
    assert any(reduce_rewards(e)[0] != sum(e) for e in episodes)
    # single-env batches (what lerobot-ros compares against) equal ours for every length
    for e in episodes:
        assert reduce_rewards(e) == tuple(x[0] for x in lerobot_batch_reductions([e]))


def test_eval_info_has_lerobot_eval_schema_and_values(tmp_path):
    eps = [
        EpisodeResult(index=1, seed=1001, rewards=[0.5, 2.0], successes=[False, True], worker="/sim_1"),
        EpisodeResult(
            index=0,
            seed=1000,
            rewards=[1.0, 1.0, 1.0],
            successes=[False, False, False],
            worker="/sim_0",
            video_path="v/eval_episode_0.mp4",
        ),
    ]
    info = build_eval_info(eps, "push-v3", 0, eval_s=4.0)
    assert set(info) == {"per_episode", "per_task", "per_group", "overall", "lerobot_ros"}
    assert info["per_episode"] == [
        {"episode_ix": 0, "sum_reward": 3.0, "max_reward": 1.0, "success": False, "seed": 1000},
        {"episode_ix": 1, "sum_reward": 2.5, "max_reward": 2.0, "success": True, "seed": 1001},
    ]
    task = info["per_task"][0]
    assert (task["task_group"], task["task_id"]) == ("push-v3", 0)
    assert task["metrics"] == {
        "sum_rewards": [3.0, 2.5],
        "max_rewards": [1.0, 2.0],
        "successes": [False, True],
        "video_paths": ["v/eval_episode_0.mp4"],
        "predicted_video_paths": [],
    }
    group = info["per_group"]["push-v3"]
    assert list(group) == [
        "avg_sum_reward",
        "avg_max_reward",
        "pc_success",
        "n_episodes",
        "video_paths",
        "predicted_video_paths",
    ]
    assert (group["avg_sum_reward"], group["avg_max_reward"], group["pc_success"], group["n_episodes"]) == (
        2.75,
        1.5,
        50.0,
        2,
    )
    overall = info["overall"]
    assert list(overall) == [
        "avg_sum_reward",
        "avg_max_reward",
        "pc_success",
        "n_episodes",
        "eval_s",
        "eval_ep_s",
        "video_paths",
        "predicted_video_paths",
    ]
    assert (overall["eval_s"], overall["eval_ep_s"]) == (4.0, 2.0)
    assert [e["n_steps"] for e in info["lerobot_ros"]["episodes"]] == [3, 2]
    path = write_json_atomic(tmp_path / "out" / "eval_info.json", info)
    assert json.loads(path.read_text()) == json.loads(json.dumps(info))
    assert [p.name for p in path.parent.iterdir()] == ["eval_info.json"]  # no temporary file left


def test_eval_info_of_a_run_that_lost_episodes_is_strict_json_with_their_indices(tmp_path):
    """Every bridge lost before an episode ended: the means over no episodes are NaN, written as null (NaN is not
    JSON: jq and JavaScript refuse the file). Episode 1 lost: the others keep their own index, as
    failed_episodes, the videos and the bags name them."""
    eps = [EpisodeResult(index=i, seed=1000 + i, rewards=[1.0], successes=[False], worker="/sim_0") for i in (0, 2)]
    info = build_eval_info(eps, "push-v3", 0, eval_s=1.0)
    assert (
        [e["episode_ix"] for e in info["per_episode"]]
        == [0, 2]
        == [e["episode_ix"] for e in info["lerobot_ros"]["episodes"]]
    )
    assert [e["seed"] for e in info["per_episode"]] == [1000, 1002]
    empty = build_eval_info([], "push-v3", 0, eval_s=1.0)
    empty["extra"] = {"numpy": np.float32("nan"), "nested": [(float("nan"), 1.5)]}
    path = write_json_atomic(tmp_path / "eval_info.json", empty)

    def refuse(constant):
        raise ValueError(f"{constant} in {path}")

    data = json.loads(path.read_text(), parse_constant=refuse)
    assert data["overall"]["pc_success"] is None and data["overall"]["n_episodes"] == 0
    assert data["extra"] == {"numpy": None, "nested": [[None, 1.5]]}


def test_contract_moves_to_the_namespace_reliable_and_render_sized(tmp_path):
    source = yaml.safe_load(resolve("metaworld").read_text())
    data = namespaced_contract(source, "/sim_3", (64, 96))
    feats = data["features"]
    assert feats["action"]["topic"] == "/sim_3/commands"
    assert feats["observation.state"]["topic"] == "/sim_3/joint_states"
    assert feats["observation.state"]["qos"] == "reliable" and "qos" in feats["observation.image"]
    assert feats["observation.image"]["shape"] == [64, 96, 3]
    assert data["task"]["topic"] == "/sim_3/task" and data["episode_boundary"]["topic"] == "/sim_3/episode_status"
    assert source["features"]["action"]["topic"] == "/sim/commands"  # the source is not modified
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    contract = load_contract(str(path))  # still a valid contract
    assert contract.features["observation.image"].topic == "/sim_3/corner2/image_raw"


def test_node_command_line():
    spec = NodeSpec(
        "lerobot_ros.nodes.sim_bridge_node",
        "/sim_0",
        "sim_bridge",
        params={
            "task": "push-v3",
            "shadows": False,
            "render_width": 64,
            "cameras": ["front", "wrist"],
            "contract": "/tmp/a b.yaml",
        },
        remaps={"/clock": "/sim_0/clock"},
    )
    argv = spec.argv()
    assert argv[1:3] == ["-m", "lerobot_ros.nodes.sim_bridge_node"]
    assert argv[3:8] == ["--ros-args", "-r", "__node:=sim_bridge", "-r", "__ns:=/sim_0"]
    assert "task:=push-v3" in argv and "shadows:=false" in argv and "render_width:=64" in argv
    assert "cameras:=[front,wrist]" in argv and "contract:='/tmp/a b.yaml'" in argv
    assert argv[-2:] == ["-r", "/clock:=/sim_0/clock"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--env.task", "push-v3"], "give exactly one policy source: --policy.path FOLDER or --expert"),
        (["--expert", "--env.task", "push-v9"], "unknown Meta-World task 'push-v9': did you mean push-v3"),
        (["--policy.path", "{tmp}/nothing"], "has no config.json; pass a LeRobot pretrained_model folder"),
        (["--expert", "--env.task", "push-v3,pusj-v3"], "unknown Meta-World task 'pusj-v3': did you mean push-v3"),
        (["--expert", "--env.task", "nothing-v3"], "valid: the tasks assembly-v3, basketball-v3"),
        (["--expert", "--env.type", "so101", "--env.task", "pick,bench"], "SO-101 scene 'bench' not found"),
        (
            ["--expert", "--contract", "so10l", "--record_dir", "{tmp}/bags"],
            "--contract: no contract named 'so10l'; shipped",
        ),
    ],
)
def test_bad_options_fail_with_one_line(argv, message, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert cli_main(["eval", *argv, "--output_dir", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "eval_info.json").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--expert", "--eval.n_episodes", "0"], "'eval.n_episodes' must be >= 1, got 0"),
        (["--expert", "--eval.batch_size", "-1"], "'eval.batch_size' must be >= 0, got -1"),
    ],
)
def test_flag_values_the_config_refuses_are_usage_errors(argv, message, tmp_path, capsys):
    """A value outside a setting's declared range is refused by the config: a usage error (exit 2), one line."""
    assert cli_main(["eval", *argv, "--output_dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "eval_info.json").exists()


# -- attaching to running bridges (no ROS: the graph answers are given) ---------------------------------
def test_namespace_helpers_and_root_namespace_contract():
    from lerobot_ros.eval.attach import normalize_ns, ns_join

    assert [normalize_ns(n) for n in ("sim", "/sim/", "/", "")] == ["/sim", "/sim", "/", "/"]
    assert ns_join("/", "commands") == "/commands" and ns_join("sim", "/policy/reset") == "/sim/policy/reset"
    data = namespaced_contract(yaml.safe_load(resolve("metaworld").read_text()), "/", None)
    assert data["features"]["action"]["topic"] == "/commands" and data["task"]["topic"] == "/task"


def test_attached_bridge_sets_env_task_and_render(tmp_path):
    from lerobot_ros.eval.attach import AttachedBridge
    from lerobot_ros.eval.evaluation import EvalConfig, EvalSetupError, Evaluation

    bridge = AttachedBridge(
        "/sim",
        "/sim/sim_bridge",
        {
            "env.type": "so101",
            "env.task": "",
            "env.observation_width": 64,
            "env.observation_height": 48,
            "cameras": ["front"],
            "mode": "lockstep",
        },
    )
    ev = Evaluation(EvalConfig(attach=["/sim"], output_dir=tmp_path, quiet=True))
    plan = ev._adopt([bridge])
    assert (plan.env, plan.tasks[0].task, plan.render, plan.cameras) == ("so101", "pick", (48, 64), ("front",))
    with pytest.raises(
        EvalSetupError, match=r"--env.task push-v3 but /sim/sim_bridge runs task 'pick': drop --env.task"
    ):
        Evaluation(EvalConfig(attach=["/sim"], task="push-v3", output_dir=tmp_path))._adopt([bridge])
    with pytest.raises(
        EvalSetupError,
        match=r"--env.observation_height 96 --env.observation_width 96 but /sim/sim_bridge renders 48x64: "
        r".*env.observation_height:=96",
    ):
        cfg = EvalConfig(attach=["/sim"], observation_height=96, observation_width=96, output_dir=tmp_path)
        Evaluation(cfg)._adopt([bridge])
    other = AttachedBridge("/sim_1", "/sim_1/sim_bridge", {**bridge.params, "env.observation_width": 96})
    with pytest.raises(EvalSetupError, match="the attached bridges differ"):
        Evaluation(EvalConfig(attach=["/sim", "/sim_1"], output_dir=tmp_path))._adopt([bridge, other])


def test_nothing_to_attach_to_says_what_was_looked_for(tmp_path, capsys):
    assert (
        cli_main(
            ["eval", "--attach", "ghost", "--expert", "--startup_timeout_s", "0.5", "--output_dir", str(tmp_path / "o")]
        )
        == 1
    )
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "no sim bridge in namespace /ghost after 0.5 s" in err
    for part in (
        "/ghost/reset_episode (lerobot_ros_msgs/srv/ResetEpisode)",
        "/ghost/episode_status",
        "ROS_DOMAIN_ID=",
        "lerobot-ros launch sim_metaworld namespace:=ghost",
        "-r __ns:=/ghost",
        "same ROS_DOMAIN_ID",
    ):
        assert part in err
    assert not (tmp_path / "o" / "eval_info.json").exists()


def test_auto_workers_follow_lerobot_eval():
    """lerobot-eval's batch_size 0: floor(0.7 x cores), at least 1, capped by the episodes and by 64."""
    from lerobot.configs.default import EvalConfig as LeRobotEvalConfig

    from lerobot_ros.eval.plan import auto_workers

    assert [auto_workers(0, 10, cores) for cores in (1, 2, 3, 8, 16, 200)] == [1, 1, 2, 5, 10, 10]
    assert auto_workers(0, 1000, 200) == 64 and auto_workers(0, 3, 16) == 3
    assert auto_workers(8, 3) == 3 and auto_workers(2, 10) == 2  # more workers than episodes: capped
    for n in (1, 3, 50):  # the same as LeRobot's own rule on this machine
        assert auto_workers(0, n) == LeRobotEvalConfig(n_episodes=n, batch_size=0).batch_size
        assert auto_workers(7, n) == LeRobotEvalConfig(n_episodes=n, batch_size=7).batch_size


def test_plan_expands_tasks_like_lerobot_eval_and_is_frozen(tmp_path):
    import dataclasses

    from lerobot.envs.metaworld import DIFFICULTY_TO_TASKS

    from lerobot_ros.eval.plan import EvalConfig, plan_eval

    cfg = EvalConfig(expert=True, task="reach-v3,hard", n_episodes=2, workers=5, output_dir=tmp_path)
    plan = plan_eval(cfg)
    assert plan.tasks[0] == ("reach-v3", 0, "reach-v3")
    assert [(t.group, t.task_id, t.task) for t in plan.tasks[1:]] == [
        ("hard", i, t) for i, t in enumerate(DIFFICULTY_TO_TASKS["hard"])
    ]
    assert plan.workers == 2 and plan.render == (480, 480) and plan.task_descriptions[0] == "Reach a goal position"
    assert cfg.workers == 5 and cfg.render is None  # the config is not changed
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.workers = 3


def test_eval_info_of_several_tasks_groups_like_eval_policy_all():
    eps = [
        EpisodeResult(index=0, seed=1000, rewards=[1.0], successes=[True], group="easy", task_id=1),
        EpisodeResult(index=0, seed=1000, rewards=[2.0], successes=[False], group="easy", task_id=0),
        EpisodeResult(index=0, seed=1000, rewards=[4.0], successes=[True], group="push-v3", task_id=0),
    ]
    info = build_eval_info(eps, eval_s=3.0, tasks=[("easy", 0), ("easy", 1), ("push-v3", 0)])
    assert [(t["task_group"], t["task_id"], t["metrics"]["sum_rewards"]) for t in info["per_task"]] == [
        ("easy", 0, [2.0]),
        ("easy", 1, [1.0]),
        ("push-v3", 0, [4.0]),
    ]
    assert info["per_group"]["easy"]["n_episodes"] == 2 and info["per_group"]["easy"]["pc_success"] == 50.0
    assert info["per_group"]["push-v3"]["avg_sum_reward"] == 4.0
    assert (info["overall"]["n_episodes"], info["overall"]["avg_sum_reward"], info["overall"]["eval_ep_s"]) == (
        3,
        7 / 3,
        1.0,
    )
    assert [(e["task_group"], e["task_id"]) for e in info["per_episode"]] == [("easy", 0), ("easy", 1), ("push-v3", 0)]


def test_the_evaluator_waits_for_exactly_the_topics_the_policy_node_subscribes(tmp_path):
    """A contract mixing a raw and a jpeg camera (and a camera the policy does not read): the evaluator's
    readiness check follows the contract written for the namespace, as the policy node does; deriving it from
    the plan's camera names made both cameras jpeg and waited forever for a subscriber that never came."""
    from types import SimpleNamespace

    from lerobot_ros.eval.bringup import EvalProcesses, policy_node_inputs

    source = yaml.safe_load(resolve("libero").read_text())
    jpeg = source["features"]["observation.images.image2"]
    jpeg.update(type="sensor_msgs/msg/CompressedImage", topic="/sim/eye_in_hand/image_raw/compressed")
    source["features"]["observation.images.unused"] = {
        **source["features"]["observation.images.image"],
        "topic": "/sim/third/image_raw",
    }
    contract = tmp_path / "mixed.yaml"
    contract.write_text(yaml.safe_dump(source, sort_keys=False))
    policy = tmp_path / "policy"
    policy.mkdir()
    visual = {"type": "VISUAL", "shape": [3, 64, 64]}
    inputs = {
        "observation.state": {"type": "STATE", "shape": [8]},
        "observation.images.image": visual,
        "observation.images.image2": visual,
    }
    (policy / "config.json").write_text(json.dumps({"input_features": inputs}))
    plan = SimpleNamespace(
        contract=str(contract),
        render=(64, 64),
        cameras=["agentview", "eye_in_hand"],
        tasks=[SimpleNamespace(group="libero_spatial", task_id=0)],
        output_dir=tmp_path / "out",
        policy_path=str(policy),
    )
    written = EvalProcesses(plan, plan.tasks[0]).contract_for("/sim_2")
    topics = policy_node_inputs(written, str(policy))
    assert topics == ("/sim_2/joint_states", "/sim_2/agentview/image_raw", "/sim_2/eye_in_hand/image_raw/compressed")


def test_a_video_that_fails_to_encode_is_reported_and_not_listed(tmp_path):
    """Frames that change size mid-episode cannot be encoded: the error is kept for eval_info's video_errors and
    the path marked failed (the runner drops it from video_paths), no partial file left; a good video is written."""
    from lerobot_ros.eval.videos import VideoWriter

    writer = VideoWriter(fps=10)
    bad = writer.write(
        tmp_path / "eval_episode_0.mp4", [np.zeros((16, 16, 3), np.uint8), np.zeros((8, 8, 3), np.uint8)]
    )
    good = writer.write(tmp_path / "eval_episode_1.mp4", [np.full((16, 16, 3), 100, np.uint8)] * 3)
    writer.join()
    assert writer.failed == {bad} and len(writer.errors) == 1 and writer.errors[0].startswith("eval_episode_0.mp4: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval_episode_1.mp4"] and good.endswith("eval_episode_1.mp4")
