"""The tiny SmolVLA of lerobot_ros.testing.vla, fitted to smooth demonstrations, trained once and cached.

Why: a randomly initialised flow-matching policy samples chunks that are white noise in time, so a benchmark of
how one chunk hands over to the next (bench/chunking.py) measures nothing. Chunks from a trained policy are smooth
inside, and two chunks sampled from nearby observations still disagree where the demonstrations do: that
disagreement at the hand-over is what real-time chunking removes.

The demonstrations (LeRobot units: degrees for the arm joints, 0-100 for the gripper, SO-101 at mid-range = 0):
from the observed joint state, each joint relaxes towards the home pose (time constant `TAU_S`) while following a
slow wave (two sines, 0.2-0.6 Hz, a few degrees) whose phases and amplitudes the observation does not show, as
human demonstrations carry intent a camera cannot see. Images carry no information about the actions (random
colours, gradients and noise), so the fit learns to read the state and the prefix only as far as the data says.
Training is LeRobot's own loss (`SmolVLAPolicy.forward`, flow matching) on batches through the policy's own
pre-processor (normalization with the data's stats, tokenizer); only the action expert and projections train
(SmolVLA's defaults freeze the VLM). Deterministic for a seed on one machine; the cache key covers the source of
this file and the versions of torch / transformers / lerobot.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import os
import shutil
from pathlib import Path

import numpy as np

FPS = 30
TAU_S = 1.5
HOME = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 50.0])
STATE_SPREAD = np.array([25.0, 25.0, 25.0, 25.0, 25.0, 20.0])
WAVE_AMPLITUDE = (2.0, 8.0)  # degrees per sine (gripper: the same in its 0-100 units)
WAVE_HZ = (0.2, 0.6)
TASK = "reach the red target"
SIDE = 64


def smooth_chunks(state: np.ndarray, chunk: int, rng: np.random.Generator) -> np.ndarray:
    """Demonstrated continuations (n, chunk, 6) of joint states (n, 6): relax home, plus a wave of unseen phase."""
    t = np.arange(1, chunk + 1) / FPS  # seconds after the observation, per action
    relax = (HOME - state)[:, None, :] * (1.0 - np.exp(-t / TAU_S))[None, :, None]
    wave = np.zeros((len(state), chunk, 6))
    for _ in range(2):
        amp = rng.uniform(*WAVE_AMPLITUDE, size=(len(state), 1, 6)) * rng.choice([-1.0, 1.0], size=(len(state), 1, 6))
        omega = 2 * np.pi * rng.uniform(*WAVE_HZ, size=(len(state), 1, 6))
        phase = rng.uniform(0, 2 * np.pi, size=(len(state), 1, 6))
        wave += amp * (np.sin(omega * t[None, :, None] + phase) - np.sin(phase))
    return state[:, None, :] + relax + wave


def smooth_demonstrations(n: int, chunk: int, seed: int = 0):
    """`n` (state, action chunk, image) samples: states (n, 6), chunks (n, chunk, 6), images (n, 3, SIDE, SIDE) in 0-1."""
    rng = np.random.default_rng(seed)
    state = HOME + rng.normal(size=(n, 6)) * STATE_SPREAD
    actions = smooth_chunks(state, chunk, rng)
    return state.astype(np.float32), actions.astype(np.float32), _uninformative_images(rng, n)


def _uninformative_images(rng, n: int) -> np.ndarray:
    """Flat colours, gradients and noise, mixed: images the actions do not depend on."""
    base = rng.uniform(0, 1, size=(n, 3, 1, 1))
    ramp = np.linspace(0, 1, SIDE)[None, None, None, :] * rng.uniform(-0.5, 0.5, size=(n, 3, 1, 1))
    noise = rng.uniform(-1, 1, size=(n, 3, SIDE, SIDE)) * rng.uniform(0, 0.3, size=(n, 1, 1, 1))
    return np.clip(base + ramp + noise, 0, 1).astype(np.float32)


def _stats(state: np.ndarray, actions: np.ndarray) -> dict:
    """The demonstrations' own state / action stats; the camera's from lerobot_ros.testing.policies (plain 0-1 images)."""
    import torch

    from lerobot_ros.testing.policies import _stats as fixture_stats

    stats = fixture_stats(6, 6, {"front": (SIDE, SIDE)}, seed=0)
    for key, values in (("observation.state", state), ("action", actions.reshape(-1, 6))):
        data = {
            "mean": values.mean(0),
            "std": values.std(0),
            "min": values.min(0),
            "max": values.max(0),
            "q01": np.quantile(values, 0.01, axis=0),
            "q99": np.quantile(values, 0.99, axis=0),
        }
        stats[key] = {s: torch.as_tensor(v, dtype=torch.float32) for s, v in data.items()}
    return stats


def train_smooth_smolvla(
    out: Path, chunk: int = 50, steps: int = 3000, batch: int = 32, lr: float = 1e-3, seed: int = 0, log=print
) -> dict:
    """Fit the tiny SmolVLA (VLM in `out/vlm`) to `smooth_demonstrations` and save it into `out`; the loss curve."""
    import torch
    from lerobot.policies.factory import get_policy_class, make_policy_config, make_pre_post_processors

    from lerobot_ros.testing.policies import _features
    from lerobot_ros.testing.vla import make_tiny_smolvlm, smolvla_config_kwargs

    out = Path(out)
    vlm = make_tiny_smolvlm(out / "vlm")
    inputs, outputs = _features(6, 6, {"front": (SIDE, SIDE)})
    kwargs = {
        **smolvla_config_kwargs(vlm, chunk, chunk),
        "num_steps": 10,
    }  # LeRobot's denoising steps, not the suite's 4
    cfg = make_policy_config("smolvla", input_features=inputs, output_features=outputs, device="cpu", **kwargs)
    state, actions, images = smooth_demonstrations(max(4096, batch * 16), chunk, seed)
    torch.manual_seed(seed)
    policy = get_policy_class("smolvla")(cfg)
    pre, post = make_pre_post_processors(cfg, dataset_stats=_stats(state, actions))
    optimizer = torch.optim.AdamW([p for p in policy.parameters() if p.requires_grad], lr=lr)
    warmup = min(100, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(  # linear warm-up, cosine decay to 5 % (SmolVLA's own shape)
        optimizer,
        lambda k: (
            (k + 1) / warmup
            if k < warmup
            else 0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * (k - warmup) / max(1, steps - warmup)))
        ),
    )
    rng = np.random.default_rng(seed + 1)
    losses = []
    policy.train()
    for step in range(steps):
        idx = rng.integers(0, len(state), size=batch)
        raw = {
            "observation.state": torch.from_numpy(state[idx]),
            "observation.images.front": torch.from_numpy(images[idx]),
            "action": torch.from_numpy(actions[idx]),
            "task": [TASK] * batch,
        }
        loss, _ = policy.forward(pre(raw))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if step % 500 == 0 or step == steps - 1:
            log(f"smooth SmolVLA fit: step {step + 1}/{steps} loss {losses[-1]:.4f}")
    policy.eval()
    for thing in (policy, pre, post):
        thing.save_pretrained(out)
    return {"losses": losses, "steps": steps, "batch": batch, "lr": lr, "seed": seed, "chunk": chunk}


def _cache_key(**kwargs) -> str:
    import lerobot
    import torch
    import transformers

    h = hashlib.sha256(Path(__file__).read_bytes())
    for path in ("vla.py", "policies.py"):
        h.update((Path(__file__).parent / path).read_bytes())
    arguments: inspect.BoundArguments | dict  # bound, then the arguments that name the folder
    arguments = inspect.signature(train_smooth_smolvla).bind(None, **kwargs)
    arguments.apply_defaults()  # chunk=50 given or left out: one folder
    arguments = {k: v for k, v in arguments.arguments.items() if k not in ("out", "log")}
    h.update(
        json.dumps(
            [
                torch.__version__,
                transformers.__version__,
                getattr(lerobot, "__version__", "?"),
                sorted(arguments.items()),
            ]
        ).encode()
    )
    return h.hexdigest()[:16]


def default_cache_dir() -> Path:
    base = os.environ.get("LEROBOT_ROS_FIXTURE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "lerobot_ros", "fixtures"
    )
    return Path(base)


def cached_smooth_smolvla(cache_dir: Path | None = None, log=print, **kwargs) -> Path:
    """The fitted policy folder: trained on first use (minutes), then reused; safe against concurrent callers.

    A folder counts only once its `fit.json` is written (last); a half-trained one from a killed run is removed."""
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cache_dir.mkdir(parents=True, exist_ok=True)
    folder = cache_dir / f"smooth_smolvla_{_cache_key(**kwargs)}"
    with open(cache_dir / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / "fit.json").is_file():
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        log(f"training the smooth tiny SmolVLA once into {folder} (cached for later runs)")
        fit = train_smooth_smolvla(folder, log=log, **kwargs)
        (folder / "fit.json").write_text(json.dumps(fit))
    return folder
