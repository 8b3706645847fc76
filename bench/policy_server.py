"""Benchmark: latency per action chunk through LeRobot's policy server vs the same policy in process.

Set-up: a small random ACT (2 cameras 480x640 + 6-D joint state, chunk 100), saved like a trained one.
LeRobot's real policy server runs in a subprocess on loopback (`--inference_latency=0`: its default pads each
reply to 1/fps); this process is policy_node's `lerobot_server` backend (PolicyServerBackend). Per chunk:
in-process = `PolicyRunner.predict_chunk` (pre-processor, predict_action_chunk, post-processor), server =
`PolicyServerBackend.predict_chunk` on the same frame (pickle, gRPC transfer, the server's same pipeline,
pickled reply). The two alternate chunk by chunk, so both see the same machine load. Also reported: the
pickled observation size on the wire. Loopback only: a real network adds its transfer time (about 1.8 MB
per observation with two raw 640x480 cameras).

Last line: one JSON object (figure = server p50 / in-process p50; goal <= 1.5).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

H, W = 480, 640
GOAL = 1.5


def pct(values, q):
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def frames(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    base = (
        np.linspace(0, 200, W, dtype=np.float32)[None, :, None] + np.linspace(0, 50, H, dtype=np.float32)[:, None, None]
    )
    out = []
    for _ in range(n):
        f = {"observation.state": (rng.normal(size=6) * 20).astype(np.float32)}
        for cam in ("front", "wrist"):
            f[f"observation.images.{cam}"] = np.clip(base + rng.normal(0, 8, (H, W, 3)), 0, 255).astype(np.uint8)
        out.append(f)
    return out


def start_server(workdir: Path, timeout_s: float = 600.0):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lerobot.async_inference.policy_server",
            "--host=127.0.0.1",
            f"--port={port}",
            "--fps=30",
            "--inference_latency=0",
        ],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if proc.poll() is not None:
            raise SystemExit(f"policy server exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"127.0.0.1:{port}", time.monotonic() - start
        time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"policy server did not listen within {timeout_s:.0f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=40, help="measured chunks per path (default 40)")
    ap.add_argument("--warmup", type=int, default=3, help="unmeasured chunks per path first")
    ap.add_argument("--chunk-size", type=int, default=100, help="ACT chunk_size")
    args = ap.parse_args()

    from lerobot_ros.policy import PolicyRunner, load_policy, load_policy_config
    from lerobot_ros.policy.server_backend import PolicyServerBackend
    from lerobot_ros.testing.policies import make_policy_folder

    work = Path(tempfile.mkdtemp(prefix="bench_policy_server_"))
    folder = make_policy_folder(
        work / "act",
        "act",
        cameras={"front": (H, W), "wrist": (H, W)},
        chunk_size=args.chunk_size,
        n_action_steps=args.chunk_size,
    )
    server, address, started_s = start_server(work)
    remote = local = None
    try:
        remote = PolicyServerBackend(load_policy_config(str(folder), "cpu"), address, device="cpu", timeout_s=120.0)
        t = time.perf_counter()
        remote.connect(120.0)
        setup_s = time.perf_counter() - t
        local = PolicyRunner(load_policy(str(folder), "cpu"))
        data = frames(args.warmup + args.chunks)
        wire = len(pickle.dumps(remote.raw_observation(data[0], "")))
        times = {"in_process": [], "server": []}
        worst = 0.0
        for i, frame in enumerate(data):
            t = time.perf_counter()
            want = local.predict_chunk(frame)
            t_local = (time.perf_counter() - t) * 1e3
            t = time.perf_counter()
            got = remote.predict_chunk(frame)
            t_server = (time.perf_counter() - t) * 1e3
            worst = max(worst, float(np.abs(got - want).max()))
            if i >= args.warmup:
                times["in_process"].append(t_local)
                times["server"].append(t_server)
    finally:
        if remote is not None:
            remote.close()
        server.kill()
        server.wait(30)

    rows = {k: (pct(v, 50), pct(v, 99)) for k, v in times.items()}
    print(f"ACT, 2 cameras {H}x{W} + 6-D state, chunk {args.chunk_size}; {args.chunks} chunks per path, alternating")
    print(
        f"server start (import torch + LeRobot) {started_s:.1f} s; connect + policy instructions {setup_s:.2f} s; "
        f"pickled observation {wire / 1e6:.2f} MB"
    )
    print(f"{'path':<12}{'p50 ms':>10}{'p99 ms':>10}")
    for k, (p50, p99) in rows.items():
        print(f"{k:<12}{p50:>10.1f}{p99:>10.1f}")
    overhead = rows["server"][0] - rows["in_process"][0]
    figure = rows["server"][0] / rows["in_process"][0]
    print(
        f"server - in-process p50: {overhead:.1f} ms; ratio {figure:.2f} (goal <= {GOAL}); "
        f"largest action difference {worst:.2e}"
    )
    print(
        json.dumps(
            {
                "bench": "policy_server",
                "figure": round(figure, 3),
                "goal": GOAL,
                "goal_op": "<=",
                "meets_goal": figure <= GOAL,
                "server_p50_ms": round(rows["server"][0], 2),
                "server_p99_ms": round(rows["server"][1], 2),
                "in_process_p50_ms": round(rows["in_process"][0], 2),
                "in_process_p99_ms": round(rows["in_process"][1], 2),
                "overhead_p50_ms": round(overhead, 2),
                "observation_bytes": wire,
                "max_abs_diff": worst,
                "chunks": args.chunks,
                "chunk_size": args.chunk_size,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
