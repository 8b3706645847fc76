"""`lerobot-ros <verb> ...`: one entry point, one module per verb (imported lazily: torch is slow to load)."""

from __future__ import annotations

import argparse
import importlib
import sys

# verb -> (module, one-line help). Each module has `add_arguments(parser)` and `run(args) -> int`.
VERBS = {
    "demo": ("lerobot_ros.cli.demo", "run the main job on an embedded default (simulation, no hardware)"),
    "smoke": ("lerobot_ros.cli.smoke", "two nodes in two processes exchange joint states and camera images"),
    "launch": ("lerobot_ros.cli.launch", "run a ROS 2 YAML launch file without ros2 launch (pip-only installs)"),
    "record": ("lerobot_ros.cli.record", "record episodes of a contract's topics into one rosbag2 (MCAP) per episode"),
    "repair": ("lerobot_ros.cli.repair", "make the bag of a killed recorder readable (recover complete MCAP chunks)"),
    "virtual-arm": (
        "lerobot_ros.cli.virtual_arm",
        "emulated leader/follower arms (Feetech/Dynamixel) on ptys, calibrated",
    ),
    "convert": ("lerobot_ros.cli.convert", "convert rosbag2 recordings into a LeRobotDataset v3 per a topic contract"),
    "merge": (
        "lerobot_ros.cli.merge",
        "join LeRobotDatasets (e.g. the shards of a sharded convert) into one, QA reports merged",
    ),
    "export": ("lerobot_ros.cli.export", "export a LeRobotDataset to a rosbag2 (MCAP) on a contract's topics"),
    "eval": (
        "lerobot_ros.cli.eval",
        "evaluate a policy or scripted expert through sim bridges, scored like lerobot-eval",
    ),
    "view": (
        "lerobot_ros.cli.view",
        "see the robot in rerun: live on a contract's topics, or replay a bag / dataset episode",
    ),
}


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """All verbs; with `selected`, only that verb's module is imported (the others may pull in torch)."""
    parser = argparse.ArgumentParser(prog="lerobot-ros", description="LeRobot on ROS 2.")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb, (module_name, help_text) in VERBS.items():
        if selected is not None and verb != selected:
            sub.add_parser(verb, help=help_text)
            continue
        module = importlib.import_module(module_name)
        p = sub.add_parser(verb, help=help_text, description=(module.__doc__ or help_text).strip())
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    verb = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(verb if verb in VERBS else None)
    args = parser.parse_args(argv)
    if not getattr(args, "verb", None):
        parser.print_help()
        return 2
    try:
        return int(args._module.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except EXPECTED_FAILURES as exc:  # a user's file or folder, not a bug: one line, no traceback
        print(f"lerobot-ros {args.verb}: {describe_failure(exc)}", file=sys.stderr)
        return 1


def _expected_failures() -> tuple[type[BaseException], ...]:
    import json

    import yaml

    return (OSError, json.JSONDecodeError, yaml.YAMLError, UnicodeDecodeError)


EXPECTED_FAILURES = _expected_failures()


def describe_failure(exc: BaseException) -> str:
    """One line for an expected failure: what, which file, what to do."""
    import json

    import yaml

    if isinstance(exc, OSError):
        where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        what = (exc.strerror or str(exc)).lower()
        hint = {
            "FileNotFoundError": "check the path",
            "PermissionError": "choose a folder you can write to, or fix its permissions",
            "IsADirectoryError": "pass a file, not a folder",
            "NotADirectoryError": "a part of the path is a file, not a folder",
        }.get(type(exc).__name__, "check the path and the disk")
        return f"{where + ': ' if where else ''}{what}; {hint}"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); fix or replace the file"
    if isinstance(exc, yaml.YAMLError):
        mark = getattr(exc, "problem_mark", None)
        at = f" in {mark.name} at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"malformed YAML{at}: {problem}; fix the file"
    if isinstance(exc, UnicodeDecodeError):
        return f"a file is not UTF-8 text ({exc.reason} at byte {exc.start}); pass the right file"
    return f"{type(exc).__name__}: {exc}"


if __name__ == "__main__":
    sys.exit(main())
