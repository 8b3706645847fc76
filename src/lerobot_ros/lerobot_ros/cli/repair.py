"""Make the bag of a killed recorder readable again: recover every complete MCAP chunk into a new bag.

A recorder killed with SIGKILL (or a machine that lost power) leaves an MCAP without its summary, footer
and metadata.yaml, which `rosbags` and `ros2 bag` reject. `lerobot-ros repair BAG` writes BAG_repaired/
(or --output_dir DIR) with everything up to the last flushed chunk and the episode's task/index
(`lerobot_ros.record.repair`); `--in_place` then replaces BAG with it (the original is kept as
BAG.truncated until the copy is complete).
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bag", help="bag directory (or bare .mcap file) to repair")
    parser.add_argument("--output_dir", help="output bag directory (default: BAG_repaired next to BAG)")
    parser.add_argument(
        "--in_place",
        action="store_true",
        help="replace BAG with the repaired bag (the damaged file is kept as BAG.truncated)",
    )


def run(args: argparse.Namespace) -> int:
    from lerobot_ros.record.repair import repair

    dst, result = repair(args.bag, args.output_dir, args.in_place)
    counts = ", ".join(f"{t} {n}" for t, n in result.topics.items()) or "no messages"
    tail = "the file was complete" if result.complete else f"dropped the damaged tail ({result.stop_reason})"
    skipped = "".join(f"; left out {t}: {why}" for t, why in result.skipped.items())
    print(
        f"repaired {args.bag} -> {dst}: {result.messages} messages ({counts}); "
        f"read {result.bytes_read} of {result.file_size} bytes; {tail}{skipped}"
    )
    return 0
