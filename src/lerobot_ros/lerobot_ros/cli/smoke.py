"""Start `talker` and `listener` as two processes and report what crossed DDS between them.

The smallest end-to-end check of an install: rclpy, the RMW, the message packages and the codecs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from lerobot_ros.conventions.errors import UserError
from lerobot_ros.processes.supervisor import ChildProcess


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--count", type=int, default=30, help="messages of each kind to receive (default 30)")
    parser.add_argument("--timeout_s", type=float, default=60.0, help="seconds before giving up (default 60)")


def node_command(module: str, *ros_args: str) -> list[str]:
    return [sys.executable, "-m", f"lerobot_ros.nodes.{module}", "--ros-args", *ros_args]


def run(args: argparse.Namespace) -> int:
    start = time.monotonic()
    talker = ChildProcess(node_command("talker", "-p", "fps:=30.0"), label="talker", stdin=None).start()
    try:
        listener = subprocess.run(
            node_command("listener", "-p", f"count:={args.count}"),
            capture_output=True,
            text=True,
            timeout=args.timeout_s,
        )
    except subprocess.TimeoutExpired:
        raise UserError(
            f"the listener got fewer than {args.count} messages in {args.timeout_s:.0f} s; "
            "is DDS blocked (ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE)?"
        ) from None
    finally:
        talker.stop()  # SIGINT, escalating; also when Ctrl-C ends the wait above
    if listener.returncode != 0:
        print(listener.stderr, file=sys.stderr)
        raise UserError(f"the listener exited with status {listener.returncode} (its output is above)")
    summary = json.loads(listener.stdout.strip().splitlines()[-1])
    print(
        f"received {summary['joint_states']} joint states and {summary['images']} images "
        f"{tuple(summary['image_shape'])} over DDS in {time.monotonic() - start:.1f} s"
    )
    print(f"last joint positions (rad): {summary['last_positions_rad']}")
    return 0
