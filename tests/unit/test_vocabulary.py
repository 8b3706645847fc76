"""One name per concept on every surface a user types on: the verbs' flags, the nodes' parameters, the launch
files' arguments (lerobot_ros.configs.vocabulary), and launch files that set only parameters their nodes declare."""

from __future__ import annotations

from pathlib import Path

import pytest

from lerobot_ros.cli.reference import (
    Surface,
    launch_arguments,
    launch_node_parameters,
    node_parameters,
    surfaces,
)
from lerobot_ros.configs.vocabulary import CONCEPTS, mismatches, words

LAUNCH = Path(__file__).resolve().parents[2] / "launch"


@pytest.fixture(scope="module")
def all_surfaces():
    return surfaces(LAUNCH)


def test_every_flag_parameter_and_launch_argument_keeps_the_vocabulary(all_surfaces):
    problems = mismatches(all_surfaces)
    assert not problems, "\n".join(problems)


def test_every_concept_of_the_table_is_used(all_surfaces):
    used = {s.name.lstrip("-") for s in all_surfaces}
    unused = [c.name for c in CONCEPTS if c.name not in used]
    assert not unused, f"concepts no flag, parameter or launch argument uses (stale table?): {unused}"


def test_a_deliberately_mismatched_flag_is_caught(all_surfaces):
    """What a contributor might add: `--out` on a verb, `policy_path` in a launch file, `--output-dir`."""
    for extra in (
        Surface("flag", "lerobot-ros export", "--out"),
        Surface("launch argument", "my.launch.yaml", "policy_path"),
        Surface("flag", "lerobot-ros eval", "--output-dir"),
        Surface("parameter", "my_node", "rate_hz"),
    ):
        problems = mismatches([*all_surfaces, extra])
        assert problems and any(repr(extra.name) in p or repr(extra.name.lstrip("-")) in p for p in problems), extra


def test_separators_do_not_make_a_new_name():
    assert words("--output-dir") == words("output_dir") == words("output.dir")
    found = mismatches([Surface("flag", "a", "--env.task"), Surface("launch argument", "b", "env_task")])
    assert found == ["one name spelled 2 ways: 'env.task' (flag of a); 'env_task' (launch argument of b)"]
    assert mismatches([Surface("flag", "a", "--out-dir")])  # out_dir's words: a not-name of output_dir


def test_launch_files_set_only_parameters_their_nodes_declare():
    declared = {node: set(names) | {"use_sim_time"} for node, names in node_parameters().items()}
    undeclared = [
        f"{file}: {node} {name}"
        for file, node, name in launch_node_parameters(LAUNCH)
        if node in declared and name not in declared[node]
    ]
    assert not undeclared, "rclpy ignores a parameter a node does not declare: " + ", ".join(undeclared)


def test_launch_arguments_are_collected_from_every_file():
    args = launch_arguments(LAUNCH)
    assert "policy.path" in args["policy.launch.yaml"] and "env.task" in args["sim_metaworld.launch.yaml"]


def test_flags_are_spelled_the_way_lerobot_spells_them(all_surfaces):
    """Underscores inside words, dots for groups: `--output_dir`, not `--output-dir` (launch mirrors ros2
    launch's own `--show-args`, and `--ros-args` is ROS's)."""
    hyphenated = [
        f"{s.where} {s.name}"
        for s in all_surfaces
        if s.kind == "flag" and "-" in s.name[2:] and s.name not in ("--show-args", "--ros-args")
    ]
    assert not hyphenated, hyphenated


def test_an_old_flag_is_refused_with_its_new_name(capsys):
    from lerobot_ros.cli.main import main

    assert main(["eval", "--n-episodes", "3"]) == 2
    assert "--n-episodes is now --eval.n_episodes" in capsys.readouterr().err
    assert main(["convert", "bag", "--contract", "so101", "--out", "x"]) == 2
    assert "--out is now --dataset.root" in capsys.readouterr().err


def test_abbreviated_flags_are_refused(capsys):
    """argparse would take `--out` for `--output_dir`: a second name for one concept."""
    from lerobot_ros.cli.main import main

    assert main(["eval", "--outp", "x"]) == 2
    assert "unrecognized arguments: --outp" in capsys.readouterr().err
