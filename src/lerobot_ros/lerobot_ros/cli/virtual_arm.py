"""Start emulated leader and follower arms on pseudo-terminals (no hardware needed).

Each arm is a chain of emulated servos speaking the real protocol (Feetech STS3215 for so100/so101,
Dynamixel XL330/XL430 for koch and omx), already calibrated: a matching LeRobot calibration file is written
for each, so robot_node / teleop_node (or LeRobot itself) connect without calibrating. Prints the port
paths and calibration files, then serves until Ctrl-C (or --duration seconds).
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
from pathlib import Path

from lerobot_ros.conventions.errors import UserError
from lerobot_ros.hardware.virtual.arms import ARM_PRESETS

DEFAULT_DIR = "/tmp/lerobot_ros/virtual"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("arm", choices=sorted(ARM_PRESETS), help="which arm to emulate")
    parser.add_argument(
        "--role", choices=["both", "leader", "follower"], default="both", help="arms to start (default both)"
    )
    parser.add_argument(
        "--output_dir",
        default=DEFAULT_DIR,
        help=f"folder for the port links and calibration files (default {DEFAULT_DIR})",
    )
    parser.add_argument(
        "--duration_s", type=float, default=0.0, help="stop after this many seconds (default: run until Ctrl-C)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON line with ports and calibration files")
    parser.add_argument(
        "--leader_pose",
        default="",
        help="hold the leader at these joint angles, comma separated in joint order, radians from the middle of "
        "each joint's range (as an operator's hand would; default: every joint mid-range)",
    )


def leader_pose(text: str, arm) -> dict[str, float]:
    """--leader_pose as {joint: radians}, checked against the arm's joints and calibrated ranges."""
    from lerobot_ros.hardware.virtual.arms import MOTOR_NAMES

    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise UserError(f"--leader_pose {text!r}: give {len(MOTOR_NAMES)} numbers separated by commas") from None
    if len(values) != len(MOTOR_NAMES):
        raise UserError(
            f"--leader_pose has {len(values)} value(s); give one per joint ({', '.join(MOTOR_NAMES)}), in radians"
        )
    for name, value in zip(MOTOR_NAMES, values, strict=True):
        low, high = arm.limits_rad(name)
        if not low <= value <= high:
            raise UserError(f"--leader_pose: {name} {value:g} rad is outside its range {low:.3f}..{high:.3f} rad")
    return dict(zip(MOTOR_NAMES, values, strict=True))


def run(args: argparse.Namespace) -> int:
    from lerobot_ros.hardware.virtual.arms import VirtualArm
    from lerobot_ros.hardware.virtual.priority import TIMING, raise_priority, timing_of

    roles = ["leader", "follower"] if args.role == "both" else [args.role]
    folder = Path(args.output_dir).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {folder}: {exc.strerror}; pass --output_dir to a writable folder") from None
    # serving threads real-time (and the process at nice -10) where permitted, to answer within the SDK's packet
    # timeout on a loaded host as hardware does (see hardware.virtual.priority); built and checked before any of it
    arms = [VirtualArm(args.arm, role, port=folder / f"{args.arm}_{role}", realtime=True) for role in roles]
    for arm in arms:
        if arm.role == "leader" and args.leader_pose:
            arm.move_by_hand(leader_pose(args.leader_pose, arm))
    niced = raise_priority()
    started, info = [], {}
    stop = threading.Event()
    try:
        for arm in arms:
            cal = arm.write_calibration(folder / "calibration" / f"virtual_{arm.role}.json")
            started.append(arm.start())
            info[arm.role] = {"port": arm.port, "calibration_file": str(cal), "lerobot_type": arm.lerobot_type}
        timing = timing_of(niced, (arm.bus for arm in arms))
        if args.json:
            print(json.dumps({"arm": args.arm, **info, "timing": timing}), flush=True)
        else:
            for role, item in info.items():
                kind = "teleop" if role == "leader" else "robot"
                print(f"{role:8s} port: {item['port']}")
                print(f"{role:8s} calibration: {item['calibration_file']}  ({kind} type {item['lerobot_type']})")
            print(f"serving ({TIMING[timing]}); Ctrl-C to stop", flush=True)
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        stop.wait(args.duration_s if args.duration_s > 0 else None)
    except KeyboardInterrupt:
        pass
    finally:
        for arm in started:
            arm.close()
    return 0
