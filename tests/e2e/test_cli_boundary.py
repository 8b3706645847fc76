"""The CLI boundary: an expected failure (a missing or unwritable path, a malformed config or policy file) is
one line on stderr and a non-zero exit, for every verb; nothing half-written is left behind.

(`tests/e2e/test_export.py::test_export_to_an_unwritable_folder_is_one_line` covers export: it needs a dataset.)
"""

from __future__ import annotations

import errno
import json

import pytest
import yaml

from lerobot_ros.cli.main import describe_failure, main


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def bad_policy(tmp_path):
    folder = tmp_path / "policy"
    folder.mkdir()
    (folder / "config.json").write_text('{"type": "act", "chunk_size": ')  # cut off mid-file
    return folder


def test_convert_with_a_missing_bag(tmp_path, capsys):
    missing, out = tmp_path / "no_such_bag", tmp_path / "ds"
    assert main(["convert", str(missing), "--contract", "so101", "--dataset.root", str(out), "--progress=false"]) == 1
    line = one_line(capsys.readouterr().err)
    assert line == f"lerobot-ros convert: {missing}: no such bag file or folder; check the path"
    assert not out.exists() and not list(tmp_path.glob(".*partial*"))


def test_eval_with_a_malformed_policy_config(bad_policy, tmp_path, capsys):
    out = tmp_path / "eval"
    assert main(["eval", "--policy.path", str(bad_policy), "--output_dir", str(out)]) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith(
        f"lerobot-ros eval: {bad_policy / 'config.json'} is not valid JSON (Expecting value at line 1"
    )
    assert not out.exists()


def test_demo_with_a_malformed_policy_config(bad_policy, tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--policy.path", str(bad_policy), "--output_dir", str(out)]) == 1
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"lerobot-ros demo: {bad_policy / 'config.json'} is not valid JSON")
    assert not out.exists()  # refused before minutes of recording


def test_policy_config_without_a_type_is_refused(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps(["not", "a", "config"]))
    assert main(["eval", "--policy.path", str(tmp_path), "--output_dir", str(tmp_path / "o")]) == 1
    assert 'is not a LeRobot policy config (no "type" key)' in one_line(capsys.readouterr().err)


def test_launch_with_a_missing_file(tmp_path, capsys):
    missing = tmp_path / "nothing.launch.yaml"
    assert main(["launch", str(missing)]) != 0
    line = one_line(capsys.readouterr().err)
    assert f"launch file '{missing}' not found" in line


def test_launch_with_malformed_yaml(tmp_path, capsys):
    bad = tmp_path / "bad.launch.yaml"
    bad.write_text("launch:\n- node: {pkg: a\n  exec: [b\n")
    assert main(["launch", str(bad)]) != 0
    assert "invalid YAML" in one_line(capsys.readouterr().err)


def test_a_verb_raising_oserror_is_one_line(tmp_path, capsys, monkeypatch):
    """Whatever verb lets an OSError through (a full disk, a folder it may not write), main() reports it."""
    from lerobot_ros.cli import repair

    target = tmp_path / "out"

    def unwritable(args):
        raise PermissionError(errno.EACCES, "Permission denied", str(target))

    monkeypatch.setattr(repair, "run", unwritable)
    assert main(["repair", str(tmp_path / "bag")]) == 1
    assert one_line(capsys.readouterr().err) == (
        f"lerobot-ros repair: {target}: permission denied; choose a folder you can write to, or fix its permissions"
    )


def test_describe_failure_for_each_kind(tmp_path):
    assert describe_failure(FileNotFoundError(errno.ENOENT, "No such file or directory", "/x/y.yaml")) == (
        "/x/y.yaml: no such file or directory; check the path"
    )
    assert (
        describe_failure(OSError(errno.ENOSPC, "No space left on device"))
        == "no space left on device; check the path and the disk"
    )
    try:
        json.loads('{"a": 1,}')
    except json.JSONDecodeError as exc:
        assert describe_failure(exc).startswith(
            "malformed JSON (Expecting property name enclosed in double quotes at line 1"
        )
    path = tmp_path / "c.yaml"
    path.write_text("a: [1\nb: 2\n")
    try:
        yaml.safe_load(path.open())
    except yaml.YAMLError as exc:
        text = describe_failure(exc)
        assert text.startswith(f"malformed YAML in {path} at line 2") and "\n" not in text


def test_eval_whose_episode_bag_cannot_be_saved_is_one_line(tmp_path, capsys, monkeypatch):
    """--dataset.root: an episode's bag that cannot be written (its tape incomplete, the disk full) ends the evaluation
    with one line, not a traceback, and the scratch bags are removed. The failure is injected where a task's
    episodes run (a real one needs a bridge that loses an observation)."""
    from lerobot_ros.eval.evaluation import Evaluation
    from lerobot_ros.eval.rollouts import RolloutError

    def fails(self, *args, **kwargs):
        raise RolloutError("/sim_0: episode of 3 steps not complete for its bag after 30 s (injected)")

    monkeypatch.setattr(Evaluation, "_run_task", fails)
    out, dataset = tmp_path / "eval", tmp_path / "dataset"
    argv = [
        "eval",
        "--expert",
        "--env.task",
        "reach-v3",
        "--eval.n_episodes",
        "1",
        "--output_dir",
        str(out),
        "--dataset.root",
        str(dataset),
    ]
    assert main(argv) == 1
    assert one_line(capsys.readouterr().err) == (
        "lerobot-ros eval: /sim_0: episode of 3 steps not complete for its bag after 30 s (injected)"
    )
    assert not dataset.exists() and not [p for p in out.rglob("*") if p.suffix in (".mcap", ".db3", ".yaml")]
