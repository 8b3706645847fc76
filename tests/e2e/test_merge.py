"""Sharded conversion (`convert --num_shards K --shard_index I`, one batch job per shard) joined by
`lerobot-ros merge` with LeRobot's own aggregation: the same episodes as one run, QA reports merged."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lerobot_ros.cli.main import main
from lerobot_ros.testing.bags import T0, write_so101_bag
from lerobot_ros.testing.datasets import contract_file, load

pytestmark = pytest.mark.slow


def test_shards_merge_into_the_dataset_one_run_writes(tmp_path, capsys):
    bags = tmp_path / "bags"
    for k in range(3):
        write_so101_bag(bags / f"run_{k}", 0.5, task=f"task {k}", t0=T0 + k * 10**12)
    (bags / "z_broken.mcap").write_bytes(b"not a bag")  # sorted last: bag 3, in shard 1
    contract = contract_file(tmp_path)
    codes = [
        main(
            [
                "convert",
                str(bags),
                "--contract",
                str(contract),
                "--dataset.root",
                str(tmp_path / f"shard{i}"),
                "--num_shards",
                "2",
                "--shard_index",
                str(i),
                "--progress=false",
            ]
        )
        for i in range(2)
    ]
    assert codes == [0, 1]  # shard 1 holds the broken bag
    shard1 = json.loads((tmp_path / "shard1" / "meta" / "lerobot_ros_qa.json").read_text())
    assert shard1["shard"] == {"index": 1, "count": 2, "bags_total": 4}
    assert [b["bag"].rsplit("/", 1)[1] for b in shard1["bags"]] == ["run_1", "z_broken.mcap"]
    capsys.readouterr()
    out = tmp_path / "merged"
    assert main(["merge", str(tmp_path / "shard0"), str(tmp_path / "shard1"), "--dataset.root", str(out)]) == 0
    assert "3 episodes from 2 parts" in capsys.readouterr().out
    ds = load(out)
    assert [ds[int(e["dataset_from_index"])]["task"] for e in ds.meta.episodes] == ["task 0", "task 2", "task 1"]
    assert [int(e["length"]) for e in ds.meta.episodes] == [16, 16, 16]
    assert (out / "meta" / "lerobot_ros_contract.yaml").is_file()
    report = json.loads((out / "meta" / "lerobot_ros_qa.json").read_text())
    assert (
        report["summary"]["episodes_written"] == 3
        and report["summary"]["bags"] == 4
        and report["summary"]["bags_failed"] == 1
    )
    assert [[e.get("dataset_episode") for e in b["episodes"]] for b in report["bags"]] == [[0], [1], [2], []]
    assert [p["shard"]["index"] for p in report["parts"]] == [0, 1]
    # the same values as converting all bags in one run (in the merged order)
    whole = tmp_path / "whole"
    assert (
        main(
            [
                "convert",
                str(bags / "run_0"),
                str(bags / "run_2"),
                str(bags / "run_1"),
                "--contract",
                str(contract),
                "--dataset.root",
                str(whole),
                "--progress=false",
            ]
        )
        == 0
    )
    cols = [np.stack(load(root).hf_dataset.with_format("numpy")["observation.state"]) for root in (out, whole)]
    np.testing.assert_array_equal(cols[0], cols[1])
    assert not list(tmp_path.glob(".*partial*"))


def test_shard_and_merge_errors_are_one_line(tmp_path, capsys):
    bag = write_so101_bag(tmp_path / "b", 0.3, task="t")
    contract = contract_file(tmp_path)
    assert (
        main(
            [
                "convert",
                str(bag),
                "--contract",
                str(contract),
                "--dataset.root",
                str(tmp_path / "x"),
                "--num_shards",
                "2",
                "--shard_index",
                "2",
                "--progress=false",
            ]
        )
        == 2
    )
    assert "shard_index must be in 0..1 (num_shards is 2)" in capsys.readouterr().err
    assert (
        main(
            [
                "convert",
                str(bag),
                "--contract",
                str(contract),
                "--dataset.root",
                str(tmp_path / "x"),
                "--num_shards",
                "2",
                "--shard_index",
                "1",
                "--progress=false",
            ]
        )
        == 1
    )
    assert "shard 1 of 2 holds no bag (1 bag(s) found)" in capsys.readouterr().err
    assert main(["merge", str(tmp_path / "nothing"), "--dataset.root", str(tmp_path / "m")]) == 1
    assert "is not a LeRobotDataset folder" in capsys.readouterr().err
    assert not (tmp_path / "m").exists() and not (tmp_path / "x").exists()
