"""Start LeKiwi's three wheel servos emulated on a pseudo-terminal (no hardware needed).

Feetech STS3215 servos with ids 7, 8, 9 (left, back, right), as on LeKiwi's bus; base_node (or LeRobot's own
Feetech bus) puts them in velocity mode and drives them. `--with_arm`: the whole LeKiwi bus, a calibrated
SO-101 follower arm (ids 1-6, its calibration file written) and the wheels on one port, for lekiwi_node.
Prints the port path, then serves until Ctrl-C (or --duration_s seconds).
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
from pathlib import Path

from lerobot_ros.conventions.errors import UserError

DEFAULT_DIR = "/tmp/lerobot_ros/virtual"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output_dir", default=DEFAULT_DIR, help=f"folder for the port link (default {DEFAULT_DIR})")
    parser.add_argument(
        "--duration_s", type=float, default=0.0, help="stop after this many seconds (default: run until Ctrl-C)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON line with the port")
    parser.add_argument(
        "--with_arm",
        action="store_true",
        help="the whole LeKiwi bus: a calibrated SO-101 follower arm (ids 1-6) and the wheels on one port",
    )


def run(args: argparse.Namespace) -> int:
    from lerobot_ros.hardware.virtual.base import LEKIWI_WHEEL_IDS, VirtualOmniBase
    from lerobot_ros.hardware.virtual.priority import TIMING, raise_priority, timing_of

    folder = Path(args.output_dir).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {folder}: {exc.strerror}; pass --output_dir to a writable folder") from None
    stop = threading.Event()
    # the serving thread real-time (and the process at nice -10) where permitted, to answer within the SDK's packet
    # timeout on a loaded host as hardware does (see hardware.virtual.priority)
    port = folder / ("lekiwi" if args.with_arm else "lekiwi_base")
    base = VirtualOmniBase(port=port, with_arm=args.with_arm, realtime=True)
    info: dict[str, object] = {"base": "lekiwi", "port": base.port, "wheel_ids": list(LEKIWI_WHEEL_IDS)}
    if base.arm is not None:
        info["arm_ids"] = [1, 2, 3, 4, 5, 6]
        info["calibration_file"] = str(base.arm.write_calibration(folder / "calibration" / "virtual_lekiwi_arm.json"))
    niced = raise_priority()
    base.start()
    timing = timing_of(niced, [base.bus])
    info["timing"] = timing
    try:
        if args.json:
            print(json.dumps(info), flush=True)
        else:
            print(f"lekiwi port: {base.port}  (wheel ids {', '.join(map(str, LEKIWI_WHEEL_IDS))})")
            if base.arm is not None:
                print(f"arm ids 1-6, calibration: {info['calibration_file']}")
            print(f"serving ({TIMING[timing]}); Ctrl-C to stop", flush=True)
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        stop.wait(args.duration_s if args.duration_s > 0 else None)
    except KeyboardInterrupt:
        pass
    finally:
        base.close()
    return 0
