"""Benchmark: rosbag2 -> LeRobotDataset conversion speed against LeRobot's writer alone (same run).

Builds a synthetic SO-101 recording (2 cameras 480x640 at 30 fps as CompressedImage with camera-like
content, joint states at 100 Hz, commands at 30 Hz) split into --bags bags (4), then measures:
  - writer alone: LeRobot's writer (streaming encoding, same codec) writing the same frames, already decoded;
  - the whole conversion (`lerobot-ros convert`) with 1 and 2 workers, default codec and h264;
  - peak memory of a conversion for bags of --memory-lengths seconds (flat with bag length is the goal).
  - the same bags with `--executor ray` on a local Ray cluster (2 shards), after a warm-up task per Ray
    worker (imports, as the in-process runs import LeRobot before they are timed).
Figure: conversion (1 worker, default codec) / writer alone. Goal <= 1.25.
Second figure (workers_ratio): the same bags with 2 workers / with 1 worker, default codec. Goal <= 0.75.
  With it, workers_ratio_floor: the best any number of workers could reach here, the 1-worker run's
  CPU-seconds (all threads: decode + encode + writing) spread over every core / its wall time. Where it is
  above the goal, the goal cannot be met on this machine with this codec. It holds on an idle machine
  only: under load the run gets less than its cores and the floor reads too low.
Third figure (ray_ratio): Ray executor wall / plain workers wall (2 workers), default codec. Goal <= 1.10.
Default run is short (10 s of data); use --seconds 60 and --memory-lengths 60,180 for the issue's lengths.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from lerobot_ros.bag import BagReader  # noqa: E402
from lerobot_ros.bag.episodes import iter_frames, plan_bag  # noqa: E402
from lerobot_ros.contract import load_contract  # noqa: E402
from lerobot_ros.testing.bags import write_so101_bag  # noqa: E402

CAMERAS = ("front", "wrist")


def bench_contract(path: Path, height: int, width: int) -> Path:
    """The shipped so101 contract plus a wrist camera, at the benchmark's image size."""
    data = yaml.safe_load(Path(load_contract("so101").source).read_text())
    front = data["features"]["observation.images.front"]
    front["shape"] = [height, width, 3]
    wrist = dict(front, topic="/wrist/image_raw/compressed")
    data["features"]["observation.images.wrist"] = wrist
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def make_bags(folder: Path, seconds: float, bags: int, height: int, width: int) -> list[Path]:
    out = []
    for i in range(bags):
        out.append(
            write_so101_bag(
                folder / f"episode_{i}",
                seconds / bags,
                cameras=dict.fromkeys(CAMERAS, (height, width)),
                task="pick the cube",
                t0=1_700_000_000_000_000_000 + i * 10**12,
            )
        )
    return out


def predecode(bags: list[Path], contract, scratch: Path):
    """All frames of all bags, decoded once into memory-mapped arrays (so the writer-alone run only writes)."""
    episodes = []
    for b in bags:
        with BagReader(b) as reader:
            plan = plan_bag(reader, contract)
            for e, ep in enumerate(plan.episodes):
                images = {
                    n: np.lib.format.open_memmap(
                        scratch / f"{b.name}_{e}_{n}.npy",
                        mode="w+",
                        dtype=np.uint8,
                        shape=(ep.frames, *contract.features[n].shape),
                    )
                    for n in contract.image_features
                }
                numeric = {n: ep.numeric[n] for n in ep.numeric}
                episodes.append((ep.task, ep.frames, numeric, images))
            for e, k, frame in iter_frames(reader, contract, plan):
                for n in contract.image_features:
                    episodes[-len(plan.episodes) + e][3][n][k] = frame[n]
    return episodes


def writer_alone(episodes, contract, root: Path, vcodec: str) -> float:
    from lerobot_ros.dataset.lerobot_writer import add_frame, create_dataset, save_episode

    start = time.perf_counter()
    ds = create_dataset(root, "local/writer_alone", contract, vcodec)
    for task, frames, numeric, images in episodes:
        for k in range(frames):
            frame = {n: v[k] for n, v in numeric.items()}
            frame.update({n: np.asarray(v[k]) for n, v in images.items()})
            frame["task"] = task
            add_frame(ds, frame)
        save_episode(ds)
    ds.finalize()
    return time.perf_counter() - start


def cpu_seconds() -> float:
    """CPU time of this process (every thread) and its finished children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def convert(
    bags: list[Path], contract_path: Path, out: Path, vcodec: str, workers: int, *extra: str
) -> tuple[float, float]:
    """(wall s, CPU s) of one `lerobot-ros convert` in this process."""
    from lerobot_ros.cli.main import main

    start, cpu = time.perf_counter(), cpu_seconds()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        rc = main(
            [
                "convert",
                *map(str, bags),
                "--contract",
                str(contract_path),
                "--dataset.root",
                str(out),
                "--dataset.rgb_encoder.vcodec",
                vcodec,
                "--num_workers",
                str(workers),
                "--progress=false",
                *extra,
            ]
        )
    elapsed = time.perf_counter() - start
    if rc != 0:
        raise SystemExit(f"conversion failed (exit {rc})")
    return elapsed, cpu_seconds() - cpu


def ray_convert(bags: list[Path], contract_path: Path, out: Path, vcodec: str, shards: int) -> float:
    """Wall s of `convert --executor ray` on a local Ray cluster (CPU count = cores), workers warmed up first."""
    import ray

    from lerobot_ros.dataset.parallel import usable_cores
    from lerobot_ros.dataset.ray_conversion import AGENT_TIMEOUT_MS

    os.environ.setdefault("RAY_agent_register_timeout_ms", AGENT_TIMEOUT_MS)
    ray.init(num_cpus=usable_cores(), include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        warm = ray.remote(num_cpus=1)(_warm_up)
        ray.get([warm.remote() for _ in range(max(shards, usable_cores()))])
        return convert(bags, contract_path, out, vcodec, shards, "--executor", "ray")[0]
    finally:
        ray.shutdown()


def _warm_up() -> int:
    import lerobot.datasets.aggregate  # noqa: F401
    import lerobot.datasets.lerobot_dataset  # noqa: F401

    import lerobot_ros.dataset.ray_conversion  # noqa: F401  (what a shard's task runs)

    return os.getpid()


PEAK = (
    "import resource, sys; from lerobot_ros.cli.main import main; rc = main(sys.argv[1:]); "
    "print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(rc)"
)


def peak_memory(seconds: float, contract_path: Path, folder: Path, height: int, width: int) -> float:
    """Peak RSS (MiB) of a conversion (one worker, own process) of a bag `seconds` long."""
    bag = make_bags(folder / f"mem_{seconds:g}", seconds, 1, height, width)[0]
    out = folder / f"mem_ds_{seconds:g}"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK,
            "convert",
            str(bag),
            "--contract",
            str(contract_path),
            "--dataset.root",
            str(out),
            "--progress=false",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    line = [x for x in proc.stdout.splitlines() if x.startswith("PEAK_RSS_KB")]
    if proc.returncode != 0 or not line:
        raise SystemExit(f"memory run failed: {proc.stderr[-2000:]}")
    return int(line[-1].split()[1]) / 1024


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--seconds", type=float, default=10.0, help="seconds of recording (default 10; the issue's figure: 60)"
    )
    p.add_argument("--bags", type=int, default=4, help="split the recording into this many bags (episodes)")
    p.add_argument("--height", type=int, default=480)
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--codecs", default="libsvtav1,h264")
    p.add_argument("--workers", default="1,2")
    p.add_argument(
        "--memory-lengths", default="5,15", help="bag lengths (s) for the peak-memory runs; the issue's: 60,180"
    )
    p.add_argument("--no-ray", action="store_true", help="skip the Ray executor run")
    args = p.parse_args()
    codecs = [c for c in args.codecs.split(",") if c]
    workers = [int(w) for w in args.workers.split(",") if w]
    lengths = [float(x) for x in args.memory_lengths.split(",") if x]
    rows, results = [], {}
    import lerobot.configs.video  # noqa: F401  (imports outside the timed runs)
    import lerobot.datasets.aggregate  # noqa: F401
    import lerobot.datasets.lerobot_dataset  # noqa: F401

    with tempfile.TemporaryDirectory(prefix="bench_convert_") as tmp:
        tmp = Path(tmp)
        contract_path = bench_contract(tmp / "contract.yaml", args.height, args.width)
        contract = load_contract(contract_path)
        t = time.perf_counter()
        bags = make_bags(tmp / "bags", args.seconds, args.bags, args.height, args.width)
        print(
            f"built {args.bags} bag(s), {args.seconds:g} s, 2 cameras {args.height}x{args.width} in {time.perf_counter() - t:.1f} s",
            file=sys.stderr,
        )
        episodes = predecode(bags, contract, tmp)
        frames = sum(e[1] for e in episodes)
        for codec in codecs:
            alone = writer_alone(episodes, contract, tmp / f"alone_{codec}", codec)
            results[f"writer_alone_{codec}_s"] = round(alone, 2)
            rows.append((f"writer alone ({codec})", alone, args.seconds / alone, 1.0))
            for w in workers:
                took, cpu = convert(bags, contract_path, tmp / f"ds_{codec}_{w}", codec, w)
                results[f"convert_{codec}_w{w}_s"] = round(took, 2)
                results[f"convert_{codec}_w{w}_cpu_s"] = round(cpu, 2)
                results[f"convert_{codec}_w{w}_x_realtime"] = round(args.seconds / took, 3)
                results[f"ratio_{codec}_w{w}"] = round(took / alone, 3)
                rows.append((f"convert {codec}, {w} worker(s)", took, args.seconds / took, took / alone))
            if codec == codecs[0] and not args.no_ray and 2 in workers:
                took = ray_convert(bags, contract_path, tmp / f"ds_{codec}_ray", codec, 2)
                results[f"convert_{codec}_ray_s"] = round(took, 2)
                rows.append((f"convert {codec}, ray (2 shards)", took, args.seconds / took, took / alone))
        mem = {}
        for length in lengths:
            mem[length] = peak_memory(length, contract_path, tmp, args.height, args.width)
            results[f"peak_rss_mib_{length:g}s"] = round(mem[length], 1)
    print(f"\n{'run':<32} {'wall s':>8} {'x realtime':>10} {'/ writer alone':>15}")
    print("-" * 68)
    for name, took, xrt, ratio in rows:
        print(f"{name:<32} {took:>8.1f} {xrt:>10.2f} {ratio:>15.2f}")
    for length, mib in mem.items():
        print(f"peak memory, {length:g} s bag: {mib:.0f} MiB")
    figure = results.get(f"ratio_{codecs[0]}_w1") if codecs else None  # None: memory-only run
    summary = {
        "bench": "convert",
        "figure": figure,
        "goal": 1.25,
        "goal_op": "<=",
        "meets_goal": figure is not None and figure <= 1.25,
        "seconds": args.seconds,
        "frames": frames,
        "cameras": f"2x{args.height}x{args.width}",
        **results,
    }
    ratio = floor = ray_ratio = None
    from lerobot_ros.dataset.parallel import decode_processes, usable_cores

    cores = usable_cores()
    if codecs and {1, 2} <= set(workers):
        c = codecs[0]
        ratio = round(results[f"convert_{c}_w2_s"] / results[f"convert_{c}_w1_s"], 3)
        floor = round(results[f"convert_{c}_w1_cpu_s"] / (cores * results[f"convert_{c}_w1_s"]), 3)
        print(
            f"2 workers / 1 worker ({c}, {args.bags} bags): {ratio:.2f} (goal <= 0.75); {decode_processes(2, args.bags)} "
            f"decode process(es) on {cores} core(s)"
        )
        print(
            f"  floor for any worker count here: 1-worker CPU {results[f'convert_{c}_w1_cpu_s']:.1f} s / ({cores} cores x "
            f"{results[f'convert_{c}_w1_s']:.1f} s wall) = {floor:.2f} (idle machine only; load now {os.getloadavg()[0]:.1f})"
        )
        if f"convert_{c}_ray_s" in results:
            ray_ratio = round(results[f"convert_{c}_ray_s"] / results[f"convert_{c}_w2_s"], 3)
            print(f"ray executor / plain workers ({c}, 2): {ray_ratio:.2f} (goal <= 1.10)")
    summary.update(
        workers_ratio=ratio,
        workers_goal=0.75,
        workers_meets_goal=ratio is not None and ratio <= 0.75,
        workers_ratio_floor=floor,
        cores=cores,
        load_avg_1m=round(os.getloadavg()[0], 2),
        ray_ratio=ray_ratio,
        ray_goal=1.10,
        ray_meets_goal=ray_ratio is not None and ray_ratio <= 1.10,
    )
    if len(mem) >= 2:
        first, last = mem[lengths[0]], mem[lengths[-1]]
        summary["peak_rss_growth"] = round(last / first, 3)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
