"""See the robot in rerun: live on a contract's topics, or replay a recorded bag / LeRobotDataset episode.

  lerobot-ros view --contract so101_sim            # live (viewer_node; viewer:=true in the launch files)
  lerobot-ros view recordings/episode_000000       # replay a bag (its recorder stored the contract)
  lerobot-ros view outputs/dataset --episode 3     # replay one episode of a LeRobotDataset
The web viewer is served from this process (offline) and its URL printed; with a display and the `rerun`
binary (installed by rerun-sdk) the native viewer opens instead. --save FILE.rrd writes a recording to open
later with `rerun FILE.rrd`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path


def add_arguments(p) -> None:
    p.add_argument(
        "source", nargs="?", help="bag folder/file or LeRobotDataset folder to replay; omit for the live view"
    )
    p.add_argument(
        "--contract",
        default=None,
        help="contract file or shipped name (live: default so101; bag: the one stored in it)",
    )
    p.add_argument("--episode", type=int, default=0, help="dataset episode to replay")
    p.add_argument(
        "--viewer",
        default="auto",
        choices=["auto", "web", "native", "none"],
        help="auto: native viewer with a display, else the served web viewer",
    )
    p.add_argument("--web-port", type=int, default=9090)
    p.add_argument("--grpc-port", type=int, default=9876)
    p.add_argument("--memory-limit", default="25%", help="data kept for the viewer (oldest dropped), e.g. 25%% or 2GB")
    p.add_argument(
        "--max-image-hz", type=float, default=None, help="frames shown per camera and second (live 10, replay all)"
    )
    p.add_argument("--urdf", default="", help="URDF for the 3D view ('' = SO-101 for so10x robots, 'none')")
    p.add_argument("--save", default=None, help="write an .rrd file instead of serving a viewer")
    p.add_argument("--use-sim-time", action="store_true", help="live: run on /clock (simulation)")
    p.add_argument("--exit-after", type=float, default=None, help="stop after this many seconds (tests, scripts)")


def run(args) -> int:
    if args.source is None:
        return _live(args)
    return _replay(args)


def _live(args) -> int:
    import threading

    import rclpy
    from rclpy.parameter import Parameter

    from lerobot_ros.nodes.viewer_node import ViewerNode
    from lerobot_ros.ros.entry import run_node

    params = {
        "contract": args.contract or "so101",
        "viewer": args.viewer,
        "web_port": args.web_port,
        "grpc_port": args.grpc_port,
        "memory_limit": args.memory_limit,
        "urdf": args.urdf,
        "max_image_hz": 10.0 if args.max_image_hz is None else args.max_image_hz,
        "save": args.save or "",
    }
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    overrides.append(Parameter("use_sim_time", value=bool(args.use_sim_time)))

    def viewer():
        return ViewerNode(parameter_overrides=overrides)

    if args.exit_after:
        timer = threading.Timer(args.exit_after, rclpy.try_shutdown)
        timer.daemon = True
        timer.start()
    try:
        run_node(viewer)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _replay(args) -> int:
    import rerun as rr

    from lerobot_ros.bag import BagError
    from lerobot_ros.contract import ContractError, load_contract
    from lerobot_ros.viewer import (
        ReplayError,
        ViewerLayout,
        ViewerLog,
        is_dataset,
        load_robot,
        open_viewer,
        replay_bag,
        replay_dataset,
    )
    from lerobot_ros.viewer.replay import bag_contract, dataset_contract, dataset_features
    from lerobot_ros.viz import UrdfError

    source = Path(args.source)
    if not source.exists():
        print(f"error: {source} does not exist (a bag folder or file, or a LeRobotDataset folder)", file=sys.stderr)
        return 2
    try:
        contract = load_contract(args.contract) if args.contract else None
        dataset = is_dataset(source)
        if dataset:
            contract = contract or dataset_contract(source)
            features = dataset_features(source)
            robot_type = contract.robot_type if contract else ""
        else:
            from lerobot_ros.bag import BagReader

            if contract is None:
                with BagReader(source) as reader:
                    contract = bag_contract(reader)
            features, robot_type = contract.lerobot_features(), contract.robot_type
        robot = load_robot(args.urdf, robot_type)
        layout = ViewerLayout.from_features(features, robot_3d=robot is not None)
        recording = rr.RecordingStream("lerobot_ros", recording_id=f"replay-{source.name}")
        endpoint = open_viewer(
            recording,
            layout.blueprint(live=False),
            args.viewer,
            args.web_port,
            args.grpc_port,
            args.memory_limit,
            args.save,
        )
        log = ViewerLog(recording, layout)
        hz = args.max_image_hz or 0.0
        started = time.monotonic()
        if dataset:
            stats = replay_dataset(source, log, args.episode, contract, robot, hz)
        else:
            stats = replay_bag(source, log, contract, robot, hz)
    except (ReplayError, ContractError, BagError, UrdfError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    recording.flush()
    print(
        f"[viewer] {source.name}: {stats.images} frames, {stats.vectors['state']} state and {stats.vectors['action']} "
        f"action samples, {stats.chunks} chunks, {stats.diagnostics} diagnostics in {time.monotonic() - started:.1f} s",
        flush=True,
    )
    if endpoint.mode == "file":
        recording.disconnect()
        print(f"[viewer] wrote {endpoint.url} (open it with: rerun {endpoint.url})", flush=True)
        return 0
    if endpoint.mode == "none":
        return 0
    print(
        f"[viewer] {'open' if endpoint.mode == 'web' else 'native viewer on'} {endpoint.url}  (Ctrl-C to stop)",
        flush=True,
    )
    try:
        deadline = None if args.exit_after is None else time.monotonic() + args.exit_after
        while deadline is None or time.monotonic() < deadline:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    return 0
