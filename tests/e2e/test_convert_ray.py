"""`lerobot-ros convert --executor ray`: the shards of a sharded conversion run as Ray tasks on a local Ray
cluster (the same code a real cluster runs with --ray_address) and are merged as `lerobot-ros merge` does:
the same episodes and values as one plain run, QA reports merged with the joined episode numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lerobot_ros.cli.main import main
from lerobot_ros.testing.bags import T0, write_so101_bag
from lerobot_ros.testing.datasets import contract_file, load

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_ray():
    import os

    from lerobot_ros.dataset.ray_conversion import AGENT_TIMEOUT_MS

    ray = pytest.importorskip("ray")
    os.environ.setdefault("RAY_agent_register_timeout_ms", AGENT_TIMEOUT_MS)  # a loaded 2-core machine starts slowly
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_ray_usage_errors_are_one_line(tmp_path, capsys):
    """Runs before the local cluster fixture starts one: an unreachable --ray_address is one line."""
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized(), "run this test before the ones using local_ray (file order)"
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
                "--ray_address",
                "auto",
                "--progress=false",
            ]
        )
        == 1
    )
    assert "ray_address needs executor ray (--executor ray)" in capsys.readouterr().err
    assert (
        main(
            [
                "convert",
                str(bag),
                "--contract",
                str(contract),
                "--dataset.root",
                str(tmp_path / "x"),
                "--executor",
                "ray",
                "--ray_address",
                "127.0.0.1:1",
                "--progress=false",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert (
        err.startswith("lerobot-ros convert: cannot reach the Ray cluster at 127.0.0.1:1")
        and len(err.splitlines()) == 1
    )
    assert not (tmp_path / "x").exists() and not list(tmp_path.glob(".*shards"))


def test_ray_shards_merge_into_the_dataset_one_run_writes(tmp_path, capsys, local_ray):
    bags = tmp_path / "bags"
    for k in range(3):
        write_so101_bag(bags / f"run_{k}", 0.5, task=f"task {k}", t0=T0 + k * 10**12)
    (bags / "z_broken.mcap").write_bytes(b"not a bag")  # sorted last: bag 3, in shard 1
    contract = contract_file(tmp_path)
    out = tmp_path / "ds"
    assert (
        main(
            [
                "convert",
                str(bags),
                "--contract",
                str(contract),
                "--dataset.root",
                str(out),
                "--executor",
                "ray",
                "--num_workers",
                "2",
                "--progress=false",
                "--report",
                str(tmp_path / "qa" / "report.json"),
            ]
        )
        == 1
    )  # the broken bag fails, as in one run
    assert f"dataset: {out} (repo id local/ds)" in capsys.readouterr().out
    assert local_ray.is_initialized()  # a cluster it did not start is left running
    ds = load(out)
    assert [ds[int(e["dataset_from_index"])]["task"] for e in ds.meta.episodes] == ["task 0", "task 2", "task 1"]
    report = json.loads((out / "meta" / "lerobot_ros_qa.json").read_text())
    assert json.loads((tmp_path / "qa" / "report.json").read_text()) == report  # --report honoured, as in one run
    assert (
        report["summary"]["episodes_written"] == 3
        and report["summary"]["bags"] == 4
        and report["summary"]["bags_failed"] == 1
    )
    assert [p["shard"] for p in report["parts"]] == [{"index": i, "count": 2, "bags_total": 4} for i in range(2)]
    assert [[e.get("dataset_episode") for e in b["episodes"]] for b in report["bags"]] == [[0], [1], [2], []]
    assert (out / "meta" / "lerobot_ros_contract.yaml").is_file()
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
    assert not list(tmp_path.glob(".*shards")) and not list(tmp_path.glob(".*partial"))
