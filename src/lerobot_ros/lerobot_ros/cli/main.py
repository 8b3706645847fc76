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
    "virtual-arm": ("lerobot_ros.cli.virtual_arm", "emulated leader/follower arms (Feetech/Dynamixel) on ptys, calibrated"),
    "convert": ("lerobot_ros.cli.convert", "convert rosbag2 recordings into a LeRobotDataset v3 per a topic contract"),
    "merge": ("lerobot_ros.cli.merge", "join LeRobotDatasets (e.g. the shards of a sharded convert) into one, QA reports merged"),
    "export": ("lerobot_ros.cli.export", "export a LeRobotDataset to a rosbag2 (MCAP) on a contract's topics"),
    "eval": ("lerobot_ros.cli.eval", "evaluate a policy or scripted expert through sim bridges, scored like lerobot-eval"),
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


if __name__ == "__main__":
    sys.exit(main())
