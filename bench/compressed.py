"""Compressed image transport: bytes per 640x480 frame per JPEG quality, and what decoding costs the policy host
next to the policy's own inference time.

Frames: the SO-101 twin's `front` camera rendered at 640x480 (what the sim bridge publishes) and a camera-like
frame with sensor noise (noise is what makes real camera JPEGs larger; an upper bound for the size).
Per quality: bytes per frame (CompressedImage payload; raw sensor_msgs/Image for reference), encode ms
(numpy_to_compressed, what camera_node / the bridges / image_republish_node pay), decode ms as policy_node pays
it (rclpy deserialization of the CDR + the contract feature's decode: one cv2.imdecode straight to RGB), mean
absolute error against the original (levels of 255).
Policy: an ACT with LeRobot's default configuration (ResNet-18 backbone, random weights: the size a trained one
has) on one 640x480 camera + a 6-D state, loaded and called the way policy_node does (PolicyRunner.predict_chunk:
one inference), in this process, same run.

Figure: decode ms of one q90 twin frame / the ACT's ms per inference. Goal <= 0.1: a policy that infers every
tick (sync ACT with n_action_steps=1, or one chunk per frame) decodes one frame per camera per inference, so
compressed transport then adds at most a tenth to the policy host's compute per camera. Measured on this CPU;
on a GPU host inference is far faster while the decode stays on the CPU (in the subscription callback, beside
the GPU's work), so the ratio there is larger: the table gives the absolute numbers to redo the sum.
Usage: python bench/compressed.py [--repeat N] [--qualities 50 75 90 95] [--no-twin] [--policy-repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

H, W = 480, 640
GOAL = 0.1
CAMERA_FEATURE = {"topic": "/bench/front/image_raw/compressed", "type": "sensor_msgs/msg/CompressedImage",
                  "shape": [H, W, 3]}


def median_ms(fn, repeat: int) -> float:
    fn()  # warm-up
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(samples))


def camera_like_frame() -> np.ndarray:
    """Smooth gradients and edges plus +-8 levels of sensor noise."""
    y, x = np.mgrid[0:H, 0:W]
    rng = np.random.default_rng(0)
    frame = np.stack([x * 255 // W, y * 255 // H, ((x // 40 + y // 40) % 2) * 160 + 40], axis=-1).astype(np.int16)
    frame += rng.integers(-8, 8, size=frame.shape, dtype=np.int16)
    return np.clip(frame, 0, 255).astype(np.uint8)


def twin_frame() -> np.ndarray:
    """The SO-101 twin's front camera after a few steps of motion (offscreen MuJoCo, as the bridge renders)."""
    from lerobot_ros.sim import RenderSettings
    from lerobot_ros.sim.so101_twin import SO101Twin

    twin = SO101Twin(cameras=("front",), fps=30.0, render=RenderSettings(W, H, False, True))
    try:
        twin.reset(seed=0)
        obs = None
        for k in range(5):
            obs = twin.step(np.array([0.3, -0.4, 0.5, 0.2, 0.0, 0.4]) * (k + 1) / 5).observation
        return np.ascontiguousarray(obs.images["front"])
    finally:
        twin.close()


def features(msg_type: str):
    """The contract features policy_node would decode with (raw Image / CompressedImage, 480x640)."""
    from lerobot_ros.contract import parse_contract

    cam = {**CAMERA_FEATURE, "type": msg_type}
    data = {"robot_type": "bench", "fps": 30, "features": {
        "action": {"topic": "/bench/commands", "type": "std_msgs/msg/Float64MultiArray", "names": ["a"]},
        "observation.images.front": cam}}
    return parse_contract(data).features["observation.images.front"]


def codec_rows(frames: dict[str, np.ndarray], qualities: list[int], repeat: int) -> tuple[list[dict], dict]:
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import CompressedImage, Image

    from lerobot_ros.codecs import numpy_to_compressed, numpy_to_image

    jpeg_feature, raw_feature = features("sensor_msgs/msg/CompressedImage"), features("sensor_msgs/msg/Image")
    rows = []
    raw_ref = {}
    for name, frame in frames.items():
        raw_cdr = serialize_message(numpy_to_image(frame, "rgb8"))
        raw_ref[name] = {"bytes": len(raw_cdr),
                         "decode_ms": median_ms(lambda: raw_feature.decode(deserialize_message(raw_cdr, Image)), repeat),
                         "encode_ms": median_ms(lambda: serialize_message(numpy_to_image(frame, "rgb8")), repeat)}
        for q in qualities:
            msg = numpy_to_compressed(frame, "rgb8", "jpeg", q)
            cdr = serialize_message(msg)
            decoded = jpeg_feature.decode(deserialize_message(cdr, CompressedImage))
            rows.append({
                "frame": name, "quality": q, "bytes": len(msg.data), "cdr_bytes": len(cdr),
                "encode_ms": median_ms(lambda: serialize_message(numpy_to_compressed(frame, "rgb8", "jpeg", q)), repeat),
                "decode_ms": median_ms(lambda: jpeg_feature.decode(deserialize_message(cdr, CompressedImage)), repeat),
                "mae": float(np.abs(decoded.astype(np.int16) - frame.astype(np.int16)).mean()),
            })
    return rows, raw_ref


def policy_ms(frame: np.ndarray, repeat: int) -> tuple[float, int]:
    """ms per inference of a default-size ACT on one 640x480 camera, as policy_node calls it; its parameter count."""
    import torch
    from lerobot.configs.types import FeatureType, PolicyFeature
    from lerobot.policies.factory import get_policy_class, make_policy_config, make_pre_post_processors

    from lerobot_ros.policy.inference import PolicyRunner
    from lerobot_ros.policy.loading import load_policy

    inputs = {"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(6,)),
              "observation.images.front": PolicyFeature(type=FeatureType.VISUAL, shape=(3, H, W))}
    outputs = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(6,))}
    cfg = make_policy_config("act", input_features=inputs, output_features=outputs, device="cpu",
                             pretrained_backbone_weights=None)
    stats = {"observation.state": {"mean": torch.zeros(6), "std": torch.ones(6)},
             "action": {"mean": torch.zeros(6), "std": torch.ones(6)},
             "observation.images.front": {"mean": torch.full((3, 1, 1), 0.45), "std": torch.full((3, 1, 1), 0.25)}}
    torch.manual_seed(0)
    policy = get_policy_class("act")(cfg)
    pre, post = make_pre_post_processors(cfg, dataset_stats=stats)
    with tempfile.TemporaryDirectory() as tmp:
        for part in (policy, pre, post):
            part.save_pretrained(Path(tmp))
        runner = PolicyRunner(load_policy(tmp, "cpu"), robot_type="bench")
        obs = {"observation.state": np.zeros(6, np.float32), "observation.images.front": frame}
        ms = median_ms(lambda: runner.predict_chunk(obs), repeat)
        return ms, sum(p.numel() for p in runner.policy.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=60, help="timed calls per codec row (median)")
    parser.add_argument("--qualities", type=int, nargs="+", default=[50, 75, 90, 95])
    parser.add_argument("--policy-repeat", type=int, default=5, help="timed inferences (median)")
    parser.add_argument("--no-twin", action="store_true", help="skip the SO-101 twin frame (no MuJoCo render)")
    parser.add_argument("--fps", type=float, default=30.0, help="camera rate for the bandwidth and CPU columns")
    args = parser.parse_args()
    if 90 not in args.qualities:
        args.qualities.append(90)  # the figure's quality

    frames = {} if args.no_twin else {"so101_twin": twin_frame()}
    frames["camera_noise"] = camera_like_frame()
    rows, raw = codec_rows(frames, sorted(args.qualities), args.repeat)
    ref_frame = "camera_noise" if args.no_twin else "so101_twin"
    inference_ms, n_params = policy_ms(frames[ref_frame], args.policy_repeat)

    print(f"{W}x{H} rgb8 frames; median of {args.repeat} calls (codec), {args.policy_repeat} inferences (policy); "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'frame':13s} {'quality':>7s} {'bytes':>8s} {'x raw':>6s} {f'MB/s@{args.fps:g}':>9s} {'enc ms':>7s} "
          f"{'dec ms':>7s} {'core%':>6s} {'MAE':>5s}")
    for name, ref in raw.items():
        print(f"{name:13s} {'raw':>7s} {ref['bytes']:8d} {1.0:6.3f} {ref['bytes'] * args.fps / 1e6:9.2f} "
              f"{ref['encode_ms']:7.2f} {ref['decode_ms']:7.2f} {ref['decode_ms'] * args.fps / 10:6.1f} {0.0:5.2f}")
        for r in (r for r in rows if r["frame"] == name):
            print(f"{'':13s} {r['quality']:7d} {r['bytes']:8d} {r['bytes'] / ref['bytes']:6.3f} "
                  f"{r['bytes'] * args.fps / 1e6:9.2f} {r['encode_ms']:7.2f} {r['decode_ms']:7.2f} "
                  f"{r['decode_ms'] * args.fps / 10:6.1f} {r['mae']:5.2f}")
    print("(core% = decode ms x fps: the share of one core the policy host spends decoding one camera)")
    figure_row = next(r for r in rows if r["frame"] == ref_frame and r["quality"] == 90)
    figure = figure_row["decode_ms"] / inference_ms
    print(f"policy: ACT, LeRobot defaults ({n_params / 1e6:.1f} M parameters), one 640x480 camera: "
          f"{inference_ms:.1f} ms per inference")
    print(f"decode ({ref_frame}, q90) {figure_row['decode_ms']:.2f} ms / inference {inference_ms:.1f} ms = {figure:.4f} "
          f"(goal <= {GOAL}); timing is noisy on a shared machine")
    print(json.dumps({
        "bench": "compressed", "figure": round(figure, 4), "goal": GOAL, "goal_op": "<=", "meets_goal": bool(figure <= GOAL),
        "frame": ref_frame, "policy_ms_per_inference": round(inference_ms, 2), "policy_params": n_params,
        "raw": {k: {kk: round(vv, 3) for kk, vv in v.items()} for k, v in raw.items()},
        "jpeg": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
    }))


if __name__ == "__main__":
    main()
