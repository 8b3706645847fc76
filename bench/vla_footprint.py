"""Memory and seconds per chunk of the VLAs policy_node runs, offline, on this machine's CPU (or `--device cuda`).

Per model, one process builds the random checkpoint and saves it, and another (whose peak RSS is reported) loads
it with policy_node's loader (LeRobot's from_pretrained + processors) and runs PolicyRunner.predict_chunk (LeRobot's
policy-server path: pre-processor with the tokenizer, predict_action_chunk, post-processor). Models: the tiny
SmolVLA of the test suite, and pi0 / pi0.5 in the smallest configuration LeRobot's model runs (PaliGemma tower
`gemma_2b`, action expert `gemma_300m`, bfloat16, LeRobot's chunk of 50 and 10 denoising steps, 224x224 camera;
random weights; a tiny local tokenizer cached under PaliGemma's hub id; see lerobot_ros.testing.pi for what is
missing offline).

figure: the models that did not load and run a chunk on the device (goal 0): what the VLA issue asked of this bench
is that each VLA tried runs here, with its memory and seconds per chunk stated; it set no speed goal for a CPU.
Also reported: `realtime_ratio`, pi0's seconds per chunk / the time its chunk covers at 30 fps (chunk_size / 30 s);
<= 1 means async inference keeps a 30 fps robot fed, a GPU's job (`--device cuda`; 3.25 on this project's 2-core
CPU). Timings are noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FPS = 30


def build(kind: str, folder: Path, chunk_size: int, image_side: int) -> None:
    """Make the random checkpoint (its own process: pi0's construction peak, float32 before bfloat16, is not the
    footprint policy_node has when it loads the saved checkpoint)."""
    cameras = {"front": (image_side, image_side)}
    if kind == "smolvla":
        from lerobot_ros.testing.policies import make_policy_folder

        make_policy_folder(folder, kind="smolvla", cameras=cameras, chunk_size=chunk_size, n_action_steps=chunk_size)
    else:
        from lerobot_ros.testing.pi import cache_paligemma_tokenizer  # before huggingface_hub reads HF_HUB_CACHE

        cache_paligemma_tokenizer(Path(os.environ["HF_HUB_CACHE"]))
        from lerobot_ros.testing.pi import make_pi_folder

        make_pi_folder(folder, kind, cameras=cameras, chunk_size=chunk_size, image_side=image_side)


def measure(kind: str, folder: Path, chunks: int, chunk_size: int, image_side: int, device: str = "cpu") -> dict:
    """In this process: load the saved checkpoint as policy_node does, run `chunks` chunks; peak RSS and timings."""
    import numpy as np
    import torch

    from lerobot_ros.policy.inference import PolicyRunner
    from lerobot_ros.policy.loading import load_policy
    from lerobot_ros.testing.policies import random_frames

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    cameras = {"front": (image_side, image_side)}
    t0 = time.perf_counter()
    loaded = load_policy(str(folder), device)
    load_s = time.perf_counter() - t0
    params = sum(p.numel() for p in loaded.policy.parameters())
    dtypes = sorted({str(p.dtype).removeprefix("torch.") for p in loaded.policy.parameters()})
    runner = PolicyRunner(loaded, seed=0)
    frame = random_frames(1, cameras=cameras)[0]
    times = []
    for _ in range(chunks + 1):  # the first warms up
        t0 = time.perf_counter()
        chunk = runner.predict_chunk(frame, "push the puck to the goal")
        times.append(time.perf_counter() - t0)
    assert np.isfinite(chunk).all() and chunk.shape[0] == chunk_size, chunk.shape
    steady = times[1:]
    return {
        "model": kind,
        "params_m": round(params / 1e6, 1),
        "dtypes": dtypes,
        "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        "load_s": round(load_s, 1),
        "first_chunk_s": round(times[0], 2),
        "s_per_chunk": round(sorted(steady)[len(steady) // 2], 3),
        "chunk_size": chunk_size,
        "device": loaded.device,
        "gpu_peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2)
        if str(loaded.device).startswith("cuda")
        else None,
        "prompt": runner.chunk_task,
        "tokenizer_max_length": runner.language.max_length,
    }


def run_one(model: str, args, env: dict, tmp: Path) -> dict:
    """Build in one child process, then load + run in another; the second's last line is its JSON row."""
    side = 64 if model == "smolvla" else args.image_side
    folder = tmp / model
    common = ["--chunk-size", str(args.chunk_size), "--image-side", str(side), "--folder", str(folder)]
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "--build", model, *common], capture_output=True, text=True, env=env
    )
    built = time.perf_counter() - t0
    if proc.returncode == 0:
        proc = subprocess.run(
            [sys.executable, __file__, "--one", model, "--chunks", str(args.chunks), "--device", args.device, *common],
            capture_output=True,
            text=True,
            env=env,
        )
    last = (proc.stdout.strip().splitlines() or [""])[-1]
    try:
        row = json.loads(last)
    except ValueError:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"model": model, "error": err}
    row["build_s"] = round(built, 1)
    row["checkpoint_gib"] = round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**30, 2)
    shutil.rmtree(folder, ignore_errors=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="smolvla,pi0,pi05")
    ap.add_argument("--chunks", type=int, default=3)
    ap.add_argument("--chunk-size", type=int, default=50, help="chunk_size = n_action_steps (LeRobot's default)")
    ap.add_argument(
        "--image-side", type=int, default=224, help="pi0/pi05 image_resolution and camera size (SmolVLA: 64)"
    )
    ap.add_argument("--device", default="cpu", help="where the policies run (cpu, cuda, auto: as policy_node's device)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--build", help=argparse.SUPPRESS)
    ap.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.build:
        build(args.build, args.folder, args.chunk_size, args.image_side)
        return
    if args.one:
        print(json.dumps(measure(args.one, args.folder, args.chunks, args.chunk_size, args.image_side, args.device)))
        return
    with tempfile.TemporaryDirectory(prefix="vla_footprint_") as tmp:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(Path(tmp) / "hub"), "PYTHONWARNINGS": "ignore"}
        rows = [run_one(model, args, env, Path(tmp)) for model in args.models.split(",")]
    print(f"{'model':8} {'params M':>9} {'peak RSS GiB':>13} {'load s':>7} {'first chunk s':>14} {'s/chunk':>8}")
    for r in rows:
        if "error" in r:
            print(f"{r['model']:8} failed: {r['error']}")
        else:
            print(
                f"{r['model']:8} {r['params_m']:>9} {r['peak_rss_gib']:>13} {r['load_s']:>7} {r['first_chunk_s']:>14} "
                f"{r['s_per_chunk']:>8}"
            )
    pi0 = next((r for r in rows if r["model"] == "pi0" and "error" not in r), None)
    realtime = None if pi0 is None else round(pi0["s_per_chunk"] / (pi0["chunk_size"] / FPS), 3)
    failed = [r["model"] for r in rows if "error" in r]
    if realtime is not None:
        fed = "keeps" if realtime <= 1.0 else "does not keep"
        print(
            f"pi0 on {pi0['device']}: {realtime} x its chunk's {FPS} fps duration: async inference {fed} the robot fed"
        )
    print(
        json.dumps(
            {
                "bench": "vla_footprint",
                "figure": len(failed),
                "goal": 0,
                "goal_op": "<=",
                "meets_goal": not failed,
                "failed_models": failed,
                "realtime_ratio": realtime,
                "realtime_goal": 1.0,
                "fps": FPS,
                "models": rows,
            }
        )
    )


if __name__ == "__main__":
    main()
