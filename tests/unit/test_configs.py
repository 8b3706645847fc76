"""lerobot_ros.configs: one declaration per setting, read by the command line and the nodes alike (no ROS)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pytest

from lerobot_ros.configs import ParameterError, as_dict, build, live_names, names, param, replace, spec_of, specs
from lerobot_ros.configs.cli import add_arguments, from_args, given


@dataclass(frozen=True)
class Demo:
    policy_path: str = param("", "a policy folder", name="policy.path")
    n_episodes: int = param(10, "episodes", min=1, name="eval.n_episodes", reconfigurable=True)
    fps: float = param(30.0, "rate", unit="Hz", min=0.0, min_exclusive=True)
    task_ids: list[int] | None = param(None, "ids")
    cameras: list[str] = param(["front"], "cameras")
    videos: bool = param(True, "render videos")
    device: str = param("cpu", "device", choices=("cpu", "cuda"))
    root: str | None = param(None, "a folder", name="dataset.root")

    def __post_init__(self):
        if self.device == "cuda" and self.fps > 100:
            raise ValueError("cuda runs at most 100 fps here")


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(allow_abbrev=False)
    add_arguments(p, Demo)
    return p.parse_args(argv)


def test_public_names_are_the_declared_ones_in_field_order():
    assert names(Demo) == [
        "policy.path",
        "eval.n_episodes",
        "fps",
        "task_ids",
        "cameras",
        "videos",
        "device",
        "dataset.root",
    ]
    assert spec_of(Demo, "policy.path").attr == "policy_path"
    assert spec_of(Demo, "task_ids").type_name == "list[int] | None"
    assert live_names(Demo) == ("eval.n_episodes",)


def test_build_takes_public_names_coerces_and_checks():
    cfg = build(Demo, {"policy.path": "/p", "eval.n_episodes": "3", "fps": 15, "cameras": "front,wrist"})
    assert (cfg.policy_path, cfg.n_episodes, cfg.fps, cfg.cameras) == ("/p", 3, 15.0, ["front", "wrist"])
    assert as_dict(cfg)["policy.path"] == "/p"
    with pytest.raises(ParameterError, match=r"'eval.n_episodes' must be >= 1, got 0"):
        build(Demo, {"eval.n_episodes": 0})
    with pytest.raises(ParameterError, match=r"'fps' must be > 0, got 0.0"):
        build(Demo, {"fps": 0})
    with pytest.raises(ParameterError, match=r"'device' must be one of cpu, cuda, got 'tpu'"):
        build(Demo, {"device": "tpu"})
    with pytest.raises(ParameterError, match="cuda runs at most 100 fps"):  # the dataclass's own cross-field check
        build(Demo, {"device": "cuda", "fps": 200})
    with pytest.raises(ParameterError, match=r"Demo has no setting 'policy_path'"):  # the attribute is not a name
        build(Demo, {"policy_path": "/p"})


def test_replace_by_public_name_is_validated():
    cfg = replace(Demo(), **{"policy.path": "/q", "fps": 60})
    assert (cfg.policy_path, cfg.fps) == ("/q", 60.0)
    with pytest.raises(ParameterError):
        replace(cfg, fps=-1)


def test_flags_are_the_public_names_with_lerobot_style_values():
    args = parse(
        ["--policy.path", "/p", "--eval.n_episodes=4", "--videos=false", "--task_ids=[0,3]", "--cameras", "a,b"]
    )
    assert given(args, Demo) == {
        "policy.path": "/p",
        "eval.n_episodes": 4,
        "videos": False,
        "task_ids": [0, 3],
        "cameras": ["a", "b"],
    }
    cfg = from_args(Demo, args)
    assert (cfg.n_episodes, cfg.videos, cfg.task_ids, cfg.fps) == (4, False, [0, 3], 30.0)  # fps: the default
    assert parse(["--videos"]).videos is True  # a bare boolean flag is true


def test_defaults_stay_in_the_config_and_the_verb_may_override_them():
    args = parse([])
    assert given(args, Demo) == {}  # nothing the user did not type
    assert from_args(Demo, args, defaults={"fps": 10.0}).fps == 10.0
    assert from_args(Demo, parse(["--fps", "12"]), defaults={"fps": 10.0}).fps == 12.0  # the user's flag wins


def test_bad_flag_values_are_usage_errors_naming_the_setting(capsys):
    with pytest.raises(SystemExit) as exc:
        parse(["--eval.n_episodes", "many"])
    assert exc.value.code == 2
    assert "'eval.n_episodes' must be an integer, got 'many'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse(["--device", "tpu"])
    assert "invalid choice: 'tpu'" in capsys.readouterr().err


def test_help_shows_description_limits_and_default(capsys):
    p = argparse.ArgumentParser()
    add_arguments(p, Demo, only=("fps", "dataset.root"), required=("dataset.root",))
    text = p.format_help()
    assert "--fps FPS" in text and "rate (unit: Hz; > 0) [default: 30.0]" in text
    assert "--dataset.root ROOT" in text
    with pytest.raises(SystemExit):
        p.parse_args([])
    assert "the following arguments are required: --dataset.root" in capsys.readouterr().err


def test_every_shipped_config_declares_valid_settings():
    """Each component's config: every field a param(...), names unique, defaults within their own limits."""
    from lerobot_ros.cli.reference import node_configs
    from lerobot_ros.dataset.config import ConvertConfig, ExportConfig, MergeConfig
    from lerobot_ros.demo.config import DemoConfig
    from lerobot_ros.eval.config import EvalConfig
    from lerobot_ros.record.config import RecordCommandConfig

    configs = [*node_configs().values(), ConvertConfig, MergeConfig, ExportConfig, DemoConfig, EvalConfig]
    configs.append(RecordCommandConfig)
    for cls in configs:
        assert specs(cls), cls
        assert all(s.description for s in specs(cls))
        build(cls, {})  # the defaults pass their own checks and the dataclass's
