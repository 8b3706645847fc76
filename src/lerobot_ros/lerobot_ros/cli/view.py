"""See the robot in rerun: live on a contract's topics, or replay a recorded bag / LeRobotDataset episode.

  lerobot-ros view --contract so101_sim                 # live (viewer_node; viewer:=true in the launch files)
  lerobot-ros view recordings/episode_000000            # replay a bag (its recorder stored the contract)
  lerobot-ros view outputs/dataset --episode_index 3    # replay one episode of a LeRobotDataset
The web viewer is served from this process (offline) and its URL printed; with a display and the `rerun`
binary (installed by rerun-sdk) the native viewer opens instead. --save FILE.rrd writes a recording to open
later with `rerun FILE.rrd`. The flags are viewer_node's parameters (`lerobot_ros.viewer.config`).
"""

from __future__ import annotations

import sys
import time

from lerobot_ros.configs.cli import add_arguments as add_config_arguments
from lerobot_ros.configs.cli import from_args, given
from lerobot_ros.viewer.config import ViewerConfig

FLAGS = ("contract", "urdf", "max_image_hz", "viewer", "web_port", "grpc_port", "memory_limit", "save")


def add_arguments(p) -> None:
    p.add_argument(
        "source", nargs="?", help="bag folder/file or LeRobotDataset folder to replay; omit for the live view"
    )
    add_config_arguments(p, ViewerConfig, only=FLAGS)
    p.add_argument("--episode_index", type=int, default=0, help="dataset episode to replay")
    p.add_argument("--use_sim_time", action="store_true", help="live: run on /clock (simulation)")
    p.add_argument("--exit_after_s", type=float, default=None, help="stop after this many seconds (tests, scripts)")


def run(args) -> int:
    if args.source is None:
        return _live(args)
    return _replay(args)


def _live(args) -> int:
    import threading

    import rclpy
    from rclpy.parameter import Parameter

    from lerobot_ros.configs import as_dict
    from lerobot_ros.nodes.viewer_node import ViewerNode
    from lerobot_ros.ros.entry import run_node

    cfg = from_args(ViewerConfig, args)
    overrides = [Parameter(k, value=v) for k, v in as_dict(cfg).items() if k in FLAGS]
    overrides.append(Parameter("use_sim_time", value=bool(args.use_sim_time)))

    def viewer():
        return ViewerNode(parameter_overrides=overrides)

    if args.exit_after_s:
        timer = threading.Timer(args.exit_after_s, rclpy.try_shutdown)
        timer.daemon = True
        timer.start()
    try:
        run_node(viewer)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _replay(args) -> int:
    from lerobot_ros.viewer.session import replay_source

    flags = given(args, ViewerConfig)
    cfg = from_args(ViewerConfig, args, defaults={"max_image_hz": 0.0})  # a replay shows every frame by default
    done = replay_source(args.source, cfg, args.episode_index, contract_given="contract" in flags)
    stats, endpoint = done.stats, done.endpoint
    print(
        f"[viewer] {args.source}: {stats.images} frames, {stats.vectors['state']} state and "
        f"{stats.vectors['action']} action samples, {stats.chunks} chunks, {stats.diagnostics} diagnostics in "
        f"{done.seconds:.1f} s",
        flush=True,
    )
    if endpoint.mode == "file":
        print(f"[viewer] wrote {endpoint.url} (open it with: rerun {endpoint.url})", flush=True)
        return 0
    if endpoint.mode == "none":
        return 0
    print(
        f"[viewer] {'open' if endpoint.mode == 'web' else 'native viewer on'} {endpoint.url}  (Ctrl-C to stop)",
        flush=True,
        file=sys.stdout,
    )
    deadline = None if args.exit_after_s is None else time.monotonic() + args.exit_after_s
    try:
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    return 0
