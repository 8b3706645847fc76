"""`lerobot-ros eval --record_dir / --dataset.root`: evaluated episodes as rosbag2 episodes and a LeRobotDataset.

Fast: an episode tape fed real serialized messages writes a bag of exactly the applied steps, which the
converter plans as one frame per step; bad output folders fail with one line; a failed conversion
leaves no dataset. Slow: the Meta-World push-v3 scripted expert at 64x64 through real bridges: frames
per episode equal the evaluation's steps, actions equal what the expert published, images as the
contract says, and `lerobot-ros convert` of the kept bags gives the same dataset.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml

from lerobot_ros.cli.main import main as cli_main
from lerobot_ros.contract.loader import resolve

NS_PER_STEP = 12_500_000  # Meta-World at 80 fps


def _contract(render=(64, 64)):
    from lerobot_ros.eval.rollouts import eval_contract

    return eval_contract(yaml.safe_load(resolve("metaworld").read_text()), render, ("corner2",))


def _stamp(msg, ns: int):
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(ns, 1_000_000_000)
    return msg


def test_tape_writes_the_applied_steps_and_the_converter_plans_one_frame_each(ros, tmp_path):
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import Image, JointState
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.bag import BagReader
    from lerobot_ros.bag.episodes import plan_bag
    from lerobot_ros.contract import load_contract
    from lerobot_ros.eval.rollouts import CONTRACT_NAME, Tape
    from lerobot_ros_msgs.msg import EpisodeStatus

    contract = _contract()
    node = ros.create_node("tape_test")
    tape = Tape(node, "/sim_7", contract)
    try:
        n = 5
        t0 = 3 * NS_PER_STEP
        tape._on_action(serialize_message(Float64MultiArray(data=[9.0] * 4)))  # the previous episode's: cleared
        tape.clear()
        for k in range(n + 1):  # observations 0..n, the policy node's answers 0..n (the last one rejected)
            t = t0 + k * NS_PER_STEP
            js = _stamp(JointState(name=list("abcd"), position=[0.1 * k, 0.0, 0.0, 0.0]), t)
            img = _stamp(Image(height=64, width=64, encoding="rgb8", step=64 * 3, data=bytes([k]) * (64 * 64 * 3)), t)
            tape._on_obs("/sim_7/joint_states", serialize_message(js))
            tape._on_obs("/sim_7/corner2/image_raw", serialize_message(img))
            st = _stamp(EpisodeStatus(episode_index=4, step=k, reward=float(k), done=k == n, task="push"), t)
            tape._on_status(serialize_message(st))
            tape._on_action(serialize_message(Float64MultiArray(data=[float(k), 0.0, 0.0, 0.0])))
        (tmp_path / CONTRACT_NAME).write_text(yaml.safe_dump(contract))
        bag = tape.save(tmp_path / "episode_000000", n, {"task": "push"})
    finally:
        tape.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["episode_000000", CONTRACT_NAME]  # no .partial left
    with BagReader(str(bag)) as reader:
        counts = {t: i.count for t, i in reader.topics.items()}
        plan = plan_bag(reader, load_contract(str(tmp_path / CONTRACT_NAME)))
    assert counts == {
        "/sim/joint_states": n,
        "/sim/corner2/image_raw": n,
        "/sim/commands": n,
        "/sim/episode_status": n + 1,
    }
    (ep,) = plan.episodes
    assert ep.frames == n and ep.warnings == []
    assert ep.numeric["action"][:, 0].tolist() == [float(k) for k in range(n)]  # action k with observation k
    np.testing.assert_allclose(ep.numeric["observation.state"][:, 0], [0.1 * k for k in range(n)], rtol=1e-6)


def test_tape_gives_up_with_a_line_when_the_episode_is_incomplete(ros, tmp_path):
    from lerobot_ros.eval.rollouts import RolloutError, Tape

    node = ros.create_node("tape_incomplete")
    tape = Tape(node, "/sim_8", _contract())
    try:
        with pytest.raises(RolloutError, match="not complete for its bag"):
            tape.save(tmp_path / "episode_000000", 3, {}, timeout_s=0.3)
    finally:
        tape.close()
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "make, flag, message",
    [
        (lambda p: p.mkdir(), "--dataset.root", "exists already"),
        (lambda p: (p.mkdir(), (p / "x").write_text("")), "--record_dir", "is not empty"),
    ],
)
def test_output_folders_that_cannot_be_used_fail_with_one_line(make, flag, message, tmp_path, capsys):
    target = tmp_path / "out"
    make(target)
    code = cli_main(
        ["eval", "--expert", "--eval.n_episodes", "1", flag, str(target), "--output_dir", str(tmp_path / "eval")]
    )
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1 and message in err and flag in err
    assert not (tmp_path / "eval").exists()


def test_attached_bridges_cannot_be_recorded(tmp_path):
    from lerobot_ros.eval.plan import EvalConfig, EvalSetupError, plan_eval

    with pytest.raises(EvalSetupError, match="drop --attach"):
        plan_eval(EvalConfig(attach=["/sim"], record_dir=tmp_path / "bags"))


def test_a_failed_conversion_leaves_no_dataset(tmp_path):
    from lerobot_ros.eval.rollouts import RolloutError, Rollouts

    r = Rollouts(
        None, tmp_path / "ds", tmp_path / "eval", yaml.safe_load(resolve("metaworld").read_text()), (64, 64), 1
    )
    r.start()  # scratch bags, none written: the converter finds no bag
    with pytest.raises(RolloutError, match="no dataset written"):
        r.write_dataset(tmp_path / "convert.log", printer=lambda *a: None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["convert.log", "eval"]
    assert not list((tmp_path / "eval").iterdir())  # the scratch bags are gone too


def _columns(root: Path, repo: str):
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset(repo, root=root)
    data = ds.hf_dataset.with_format("numpy")
    lengths = [int(e["length"]) for e in ds.meta.episodes]
    return ds, lengths, np.stack(data["action"]), np.stack(data["observation.state"])


@pytest.mark.slow
@pytest.mark.timeout(1500)  # two simulator episodes, a conversion in the evaluation and one more here
def test_expert_episodes_saved_as_a_dataset_and_bags_that_convert_to_it(ros, tmp_path):
    from std_msgs.msg import Float64MultiArray

    from lerobot_ros.eval.evaluation import EvalConfig, Evaluation
    from lerobot_ros.ros.qos import RECORDING_QOS

    # the evaluation takes the first free namespace /sim_<i> of the domain (another run may hold /sim_0)
    sent, lock = {f"/sim_{i}": [] for i in range(4)}, threading.Lock()
    listener = ros.create_node("rollout_listener")

    def on_action(msg, ns):
        with lock:
            sent[ns].append(list(msg.data))

    for ns in sent:
        listener.create_subscription(
            Float64MultiArray, f"{ns}/commands", lambda m, ns=ns: on_action(m, ns), RECORDING_QOS
        )
    bags, ds_dir = tmp_path / "bags", tmp_path / "dataset"
    cfg = EvalConfig(
        env="metaworld",
        task="push-v3",
        expert=True,
        n_episodes=2,
        workers=1,
        observation_height=64,
        observation_width=64,
        videos=0,
        output_dir=tmp_path / "eval",
        record_dir=bags,
        dataset_dir=ds_dir,
        quiet=True,
    )
    info = Evaluation(cfg).run()
    steps = [e["n_steps"] for e in info["lerobot_ros"]["episodes"]]
    assert info["lerobot_ros"]["workers"] == 1 and len(steps) == 2 and all(s > 0 for s in steps)

    ds, lengths, actions, states = _columns(ds_dir, "local/dataset")
    assert lengths == steps  # one frame per step the bridge applied
    (worker,) = {e["worker"] for e in info["lerobot_ros"]["episodes"]}
    with lock:
        published = np.asarray(sent[worker], dtype=np.float32)
    # the expert acts once per step and never on the final observation: all it sent, in order
    assert published.shape == actions.shape == (sum(steps), 4)
    np.testing.assert_array_equal(actions, published)
    feature = ds.meta.features["observation.image"]
    assert feature["dtype"] == "video" and list(feature["shape"]) == [64, 64, 3]
    assert tuple(ds[0]["observation.image"].shape) == (3, 64, 64)
    assert tuple(ds[len(ds) - 1]["observation.image"].shape) == (3, 64, 64)
    assert set(ds.meta.features) >= {"action", "observation.state", "observation.image"}
    assert json.loads((ds_dir / "meta" / "lerobot_ros_qa.json").read_text())["dataset"] == str(ds_dir.resolve())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bags", "dataset", "eval"]  # no staging folder left
    assert sorted(p.name for p in bags.iterdir()) == ["episode_000000", "episode_000001", "eval_contract.yaml"]

    # the kept bags through `lerobot-ros convert` are the same dataset
    again = tmp_path / "again"
    assert (
        cli_main(
            [
                "convert",
                str(bags),
                "--contract",
                str(bags / "eval_contract.yaml"),
                "--dataset.root",
                str(again),
                "--progress=false",
            ]
        )
        == 0
    )
    _, lengths2, actions2, states2 = _columns(again, "local/again")
    assert lengths2 == lengths
    np.testing.assert_array_equal(actions2, actions)
    np.testing.assert_array_equal(states2, states)
