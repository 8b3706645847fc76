"""`convert --dataset.push_to_hub --dataset.repo_id REPO` goes through LeRobot's own push_to_hub. Nothing may go online in tests:
offline the failure is one line after the dataset is complete on disk; with the Hub client replaced by a
recorder (the only stand-in here: there is no Hub to reach) the upload gets the finished folder."""

from __future__ import annotations

import pytest

from lerobot_ros.cli.main import main
from lerobot_ros.testing.bags import write_so101_bag
from lerobot_ros.testing.datasets import contract_file

pytestmark = pytest.mark.slow


def _convert(tmp_path, *extra):
    bag = tmp_path / "b"
    if not bag.exists():
        write_so101_bag(bag, 0.3, task="t")
    return main(
        [
            "convert",
            str(bag),
            "--contract",
            str(contract_file(tmp_path)),
            "--dataset.root",
            str(tmp_path / "ds"),
            "--progress=false",
            *extra,
        ]
    )


def test_offline_push_fails_in_one_line_after_the_dataset_is_complete(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert _convert(tmp_path, "--dataset.push_to_hub", "--dataset.repo_id", "someone/so101_pick") == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("lerobot-ros convert:")]
    assert len(err) == 1, err
    assert (
        f"the dataset is complete at {tmp_path / 'ds'}, but uploading it to the Hub as someone/so101_pick failed"
        in err[0]
    )
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset("someone/so101_pick", root=tmp_path / "ds")  # the repo id it was written with
    assert ds.num_episodes == 1 and ds.num_frames == 10


def test_push_hands_the_finished_folder_to_lerobots_upload(tmp_path, monkeypatch, capsys):
    import huggingface_hub
    import lerobot.datasets.lerobot_dataset as lerobot_dataset

    calls = []

    class RecordingApi:  # stands in for the Hub: records what LeRobot's push_to_hub would send
        def __getattr__(self, name):
            return lambda *args, **kwargs: calls.append((name, kwargs))

    monkeypatch.setattr(lerobot_dataset, "HfApi", RecordingApi)
    monkeypatch.setattr(huggingface_hub.DatasetCard, "push_to_hub", lambda self, **kw: calls.append(("card", kw)))
    assert _convert(tmp_path, "--dataset.push_to_hub", "--dataset.repo_id", "someone/so101_pick") == 0
    names = [n for n, _ in calls]
    assert names[:2] == ["create_repo", "upload_folder"] and "card" in names
    upload = dict(calls[1][1])
    assert upload["repo_id"] == "someone/so101_pick" and upload["repo_type"] == "dataset"
    assert upload["folder_path"] == tmp_path / "ds" and (tmp_path / "ds" / "meta" / "lerobot_ros_qa.json").is_file()
    assert "uploaded: https://huggingface.co/datasets/someone/so101_pick" in capsys.readouterr().out


def test_bad_repo_id_is_refused_before_converting(tmp_path, capsys):
    assert _convert(tmp_path, "--dataset.push_to_hub", "--dataset.repo_id", "no slash here") == 1
    assert (
        "dataset.push_to_hub needs dataset.repo_id as namespace/name on the Hub, got 'no slash here'"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "ds").exists()
