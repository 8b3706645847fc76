"""Small random LeRobot policies (ACT, Diffusion, SmolVLA on a tiny local VLM) saved to a folder, for tests and benchmarks.

Real LeRobot policies with random weights: created from a config, given normalization stats directly,
saved with `save_pretrained` (weights + config + pre/post processors) exactly as training would leave
them. No pretrained backbone (torchvision downloads fail offline), tiny dimensions so a CPU runs them fast.
"""

from __future__ import annotations

from pathlib import Path

import torch

SO101_JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")


def image_key(cam: str) -> str:
    """`observation.images.<cam>`, or `cam` itself when it is a whole key (Meta-World's `observation.image`)."""
    return cam if cam.startswith("observation.") else f"observation.images.{cam}"


def _features(state_dim: int, action_dim: int, cameras: dict[str, tuple[int, int]]):
    from lerobot.configs.types import FeatureType, PolicyFeature

    inputs = {"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(state_dim,))}
    for cam, (h, w) in cameras.items():
        inputs[image_key(cam)] = PolicyFeature(type=FeatureType.VISUAL, shape=(3, h, w))
    outputs = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(action_dim,))}
    return inputs, outputs


def _stats(state_dim: int, action_dim: int, cameras, seed: int) -> dict[str, dict[str, torch.Tensor]]:
    """Plausible SO-101-like stats (LeRobot units, -100..100) so normalization does real work."""
    g = torch.Generator().manual_seed(seed)
    stats = {}
    for key, dim in (("observation.state", state_dim), ("action", action_dim)):
        mean = torch.rand(dim, generator=g) * 20 - 10
        std = torch.rand(dim, generator=g) * 20 + 5
        stats[key] = {"mean": mean, "std": std, "min": mean - 3 * std, "max": mean + 3 * std}
    for cam in cameras:
        stats[image_key(cam)] = {
            "mean": torch.full((3, 1, 1), 0.45),
            "std": torch.full((3, 1, 1), 0.25),
            "min": torch.zeros(3, 1, 1),
            "max": torch.ones(3, 1, 1),
        }
    return stats


def make_policy_folder(
    out: Path,
    kind: str = "act",
    state_dim: int = 6,
    action_dim: int = 6,
    cameras: dict[str, tuple[int, int]] | None = None,
    chunk_size: int = 10,
    n_action_steps: int = 5,
    seed: int = 0,
) -> Path:
    """Create a random `kind` policy ("act", "diffusion" or "smolvla"), save it with its processors into `out`.

    A SmolVLA folder also holds its tiny VLM (config + tokenizer) in `out/vlm`, which the saved config names
    by absolute path, as a fine-tuned checkpoint names its hub backbone.
    """
    from lerobot.policies.factory import get_policy_class, make_policy_config, make_pre_post_processors

    cameras = {"front": (48, 64)} if cameras is None else cameras
    inputs, outputs = _features(state_dim, action_dim, cameras)
    common = dict(input_features=inputs, output_features=outputs, device="cpu", pretrained_backbone_weights=None)
    if kind == "act":
        cfg = make_policy_config(
            "act",
            chunk_size=chunk_size,
            n_action_steps=n_action_steps,
            dim_model=32,
            n_heads=2,
            dim_feedforward=64,
            n_encoder_layers=1,
            n_decoder_layers=1,
            use_vae=False,
            latent_dim=8,
            **common,
        )
    elif kind == "diffusion":
        cfg = make_policy_config(
            "diffusion",
            n_obs_steps=2,
            horizon=8,
            n_action_steps=n_action_steps,
            down_dims=(16, 32),
            kernel_size=3,
            n_groups=4,
            diffusion_step_embed_dim=16,
            spatial_softmax_num_keypoints=8,
            crop_shape=None,
            num_train_timesteps=10,
            num_inference_steps=3,
            use_group_norm=False,
            **common,
        )
    elif kind == "smolvla":
        from lerobot_ros.testing.vla import make_tiny_smolvlm, smolvla_config_kwargs

        vlm = make_tiny_smolvlm(Path(out) / "vlm")
        common.pop("pretrained_backbone_weights")
        cfg = make_policy_config("smolvla", **smolvla_config_kwargs(vlm, chunk_size, n_action_steps), **common)
    else:
        raise ValueError(f"unknown policy kind {kind!r}")
    torch.manual_seed(seed)
    policy = get_policy_class(kind)(cfg)
    pre, post = make_pre_post_processors(cfg, dataset_stats=_stats(state_dim, action_dim, cameras, seed))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    policy.save_pretrained(out)
    pre.save_pretrained(out)
    post.save_pretrained(out)
    return out


_CACHE: dict[tuple, Path] = {}


def cached_policy_folder(base: Path, kind: str = "act", **kwargs) -> Path:
    """make_policy_folder once per process and parameter set (creating one takes seconds)."""
    key = (kind, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
    if key not in _CACHE or not (_CACHE[key] / "config.json").exists():
        _CACHE[key] = make_policy_folder(Path(base) / f"{kind}_{len(_CACHE)}", kind, **kwargs)
    return _CACHE[key]


def random_frames(n: int, state_dim: int = 6, cameras: dict[str, tuple[int, int]] | None = None, seed: int = 0):
    """n observation frames in LeRobot units (state float32, images uint8 HWC)."""
    import numpy as np

    cameras = {"front": (48, 64)} if cameras is None else cameras
    rng = np.random.default_rng(seed)
    frames = []
    for _ in range(n):
        frame: dict[str, np.ndarray] = {"observation.state": (rng.normal(size=state_dim) * 20).astype(np.float32)}
        for cam, (h, w) in cameras.items():
            frame[image_key(cam)] = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        frames.append(frame)
    return frames


def metaworld_act(out: Path, size: int) -> Path:
    """A random ACT for Meta-World's layout (observation.image + 4-D state -> 4-D action), saved to `out`."""
    from lerobot.configs.types import FeatureType, PolicyFeature
    from lerobot.policies.factory import get_policy_class, make_policy_config, make_pre_post_processors

    inputs = {
        "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(4,)),
        "observation.image": PolicyFeature(type=FeatureType.VISUAL, shape=(3, size, size)),
    }
    cfg = make_policy_config(
        "act",
        chunk_size=10,
        n_action_steps=5,
        dim_model=32,
        n_heads=2,
        dim_feedforward=64,
        n_encoder_layers=1,
        n_decoder_layers=1,
        use_vae=False,
        latent_dim=8,
        input_features=inputs,
        output_features={"action": PolicyFeature(type=FeatureType.ACTION, shape=(4,))},
        device="cpu",
        pretrained_backbone_weights=None,
    )
    torch.manual_seed(0)
    policy = get_policy_class("act")(cfg)
    stats = {
        "observation.state": {"mean": torch.tensor([0.0, 0.6, 0.2, 0.5]), "std": torch.tensor([0.1, 0.1, 0.1, 0.3])},
        "action": {"mean": torch.zeros(4), "std": torch.full((4,), 0.7)},
        "observation.image": {"mean": torch.full((3, 1, 1), 0.45), "std": torch.full((3, 1, 1), 0.25)},
    }
    for v in stats.values():
        v["min"], v["max"] = v["mean"] - 3 * v["std"], v["mean"] + 3 * v["std"]
    pre, post = make_pre_post_processors(cfg, dataset_stats=stats)
    out.mkdir(parents=True, exist_ok=True)
    for thing in (policy, pre, post):
        thing.save_pretrained(out)
    return out
