"""Make the bag of a killed recorder readable again: recover every complete MCAP chunk into a new bag.

A recorder killed with SIGKILL (or a machine that lost power) leaves an MCAP without its summary, footer
and metadata.yaml, which `rosbags` and `ros2 bag` reject. `lerobot-ros repair BAG` writes
BAG_repaired/ (or --out DIR) with everything up to the last flushed chunk and the episode's task/index
(lerobot_ros.bag.recover_mcap);
`--in-place` then replaces BAG with it (the original is kept as BAG.truncated until the copy is complete).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bag", help="bag directory (or bare .mcap file) to repair")
    parser.add_argument("--out", help="output bag directory (default: BAG_repaired next to BAG)")
    parser.add_argument(
        "--in-place",
        action="store_true",
        help="replace BAG with the repaired bag (the damaged file is kept as BAG.truncated)",
    )


def run(args: argparse.Namespace) -> int:
    from lerobot_ros.record.repair import RepairError, repair_bag

    src = Path(args.bag).resolve()
    if args.in_place and args.out:
        print("error: use either --out or --in-place", file=sys.stderr)
        return 2
    stem = src.with_suffix("") if src.is_file() else src
    dst = Path(args.out) if args.out else stem.with_name(stem.name + "_repaired")
    if args.in_place:
        dst = stem.with_name(f".{stem.name}.repairing")
        shutil.rmtree(dst, ignore_errors=True)
    try:
        result = repair_bag(src, dst)
    except RepairError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.in_place:
        kept = stem.with_name(stem.name + ".truncated")
        if kept.exists():
            print(f"error: {kept} exists; move it away first (the repaired bag is in {dst})", file=sys.stderr)
            return 1
        os.replace(src, kept)
        os.replace(dst, stem)
        dst = stem
    counts = ", ".join(f"{t} {n}" for t, n in result.topics.items()) or "no messages"
    tail = "the file was complete" if result.complete else f"dropped the damaged tail ({result.stop_reason})"
    skipped = "".join(f"; left out {t}: {why}" for t, why in result.skipped.items())
    print(
        f"repaired {src} -> {dst}: {result.messages} messages ({counts}); "
        f"read {result.bytes_read} of {result.file_size} bytes; {tail}{skipped}"
    )
    return 0
