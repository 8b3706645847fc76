"""The distribution's declarations: the wheel-contents check (fed a wheel with a file taken out), the extras
that pyproject.toml declares against the ones the error messages name, and those messages themselves."""

from __future__ import annotations

import tomllib
import zipfile
from pathlib import Path

import pytest

from lerobot_ros.cli.main import VERBS
from lerobot_ros.conventions.extras import (
    EXTRAS,
    VERB_EXTRAS,
    MissingExtraError,
    extra_for,
    missing_extra_message,
    require,
)
from lerobot_ros.testing.wheels import REPO, check_contents, expected_files, node_executables

PYPROJECT = REPO / "src" / "lerobot_ros" / "pyproject.toml"


def _wheel(path: Path, dist: str, *, drop: str | None = None, not_executable: str | None = None) -> Path:
    """A wheel-shaped zip with every file the check expects (empty), less `drop`."""
    version = "9.9.9"
    data = f"{dist}-{version}.data/data/"
    with zipfile.ZipFile(path, "w") as whl:
        for rel, executable in expected_files(dist).items():
            arcname = rel[len("@root/") :] if rel.startswith("@root/") else data + rel
            if arcname.endswith(drop or "\0"):
                continue
            info = zipfile.ZipInfo(arcname)
            mode = 0o755 if executable and not arcname.endswith(not_executable or "\0") else 0o644
            info.external_attr = (0o100000 | mode) << 16
            whl.writestr(info, b"")
        scripts = "\n".join(f"{n} = lerobot_ros.nodes.{n}:main" for n in node_executables())
        whl.writestr(
            f"{dist}-{version}.dist-info/entry_points.txt",
            f"[console_scripts]\nlerobot-ros = lerobot_ros.cli.main:entry\n{scripts}\n",
        )
        whl.writestr(f"{dist}-{version}.dist-info/METADATA", f"Name: {dist}\n")
    return path


@pytest.mark.parametrize("dist", ["lerobot_ros", "lerobot_ros_msgs"])
def test_a_complete_wheel_passes_the_check(tmp_path, dist):
    assert check_contents(_wheel(tmp_path / f"{dist}-9.9.9-py3-none-any.whl", dist)) == []


def test_a_wheel_without_a_launch_file_fails_the_check(tmp_path):
    wheel = _wheel(tmp_path / "lerobot_ros-9.9.9-py3-none-any.whl", "lerobot_ros", drop="launch/smoke.launch.yaml")
    assert check_contents(wheel) == [
        f"{wheel.name}: missing lerobot_ros-9.9.9.data/data/share/lerobot_ros/launch/smoke.launch.yaml"
    ]


def test_a_wheel_without_a_contract_or_a_message_definition_fails_the_check(tmp_path):
    wheel = _wheel(tmp_path / "lerobot_ros-9.9.9-py3-none-any.whl", "lerobot_ros", drop="contracts/so101.yaml")
    assert [p.rsplit("/", 2)[-2:] for p in check_contents(wheel)] == [["contracts", "so101.yaml"]]
    msgs = _wheel(tmp_path / "lerobot_ros_msgs-9.9.9-cp312.whl", "lerobot_ros_msgs", drop="msg/EpisodeStatus.msg")
    assert check_contents(msgs) == [
        f"{msgs.name}: missing lerobot_ros_msgs-9.9.9.data/data/share/lerobot_ros_msgs/msg/EpisodeStatus.msg"
    ]


def test_a_node_wrapper_without_its_x_bit_fails_the_check(tmp_path):
    wheel = _wheel(tmp_path / "lerobot_ros-9.9.9-py3-none-any.whl", "lerobot_ros", not_executable="/talker")
    assert check_contents(wheel) == [
        f"{wheel.name}: lerobot_ros-9.9.9.data/data/lib/lerobot_ros/talker is not executable"
    ]


def test_every_node_executable_is_expected_under_lib():
    expected = expected_files("lerobot_ros")
    assert "talker" in node_executables() and "policy_node" in node_executables()
    for name in node_executables():
        assert expected[f"lib/lerobot_ros/{name}"] is True


def test_the_extras_the_messages_name_are_the_ones_pyproject_declares():
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    assert set(declared) == set(EXTRAS)
    assert set(VERB_EXTRAS.values()) <= set(EXTRAS)
    for name in VERB_EXTRAS:
        assert name in VERBS or name in node_executables(), name
    # `all` is every other extra
    assert declared["all"] == [f"lerobot-ros[{','.join(sorted(set(EXTRAS) - {'all'}))}]"]


def test_no_extra_pulls_in_a_second_opencv():
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    assert not any(req.startswith("opencv-python") for reqs in declared.values() for req in reqs)


@pytest.mark.parametrize(
    ("module", "what", "extra"),
    [
        ("rerun", "view", "viewer"),
        ("mujoco.viewer", None, "sim"),
        ("lerobot.datasets.lerobot_dataset", "convert", "dataset"),
        ("lerobot", "virtual-arm", "hardware"),
        ("torch", "policy_node", "policy"),
        ("lerobot", "unknown-verb", "dataset"),
        ("ray", "convert", "ray"),
        ("scservo_sdk", None, "hardware"),
        ("some_typo_module", "convert", None),
    ],
)
def test_extra_for_a_missing_module(module, what, extra):
    assert extra_for(module, what) == extra


def test_the_missing_extra_message_says_what_to_install():
    message = missing_extra_message(ModuleNotFoundError("No module named 'rerun'", name="rerun"), "view")
    assert message == (
        "needs the 'viewer' extra (no module named 'rerun'); install it with "
        'pip install "lerobot-ros[viewer]" (or "lerobot-ros[all]")'
    )
    assert missing_extra_message(ModuleNotFoundError(name="no_such_thing")) is None
    libero = missing_extra_message(ModuleNotFoundError(name="libero.libero"))
    assert libero is not None and "Install LIBERO" in libero


def test_require_fails_before_work_starts_naming_the_extra(monkeypatch):
    import importlib.util

    require(("json", "yaml"), "demo")  # present: nothing happens
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "metaworld" else real(name))
    with pytest.raises(MissingExtraError, match=r"needs the 'sim' extra \(no module named 'metaworld'\)"):
        require(("json", "metaworld"), "demo")
    with pytest.raises(MissingExtraError, match="needs the Python package 'no_such_package_x'"):
        require(("no_such_package_x",), "demo")
