"""pi0 / pi0.5 offline, in the smallest configuration LeRobot's model builds, random weights.

Smallest configuration: the action expert `gemma_300m`, the PaliGemma tower `gemma_2b` (LeRobot fixes SigLIP's
projection width at 2048, Gemma 2B's width, so a `gemma_300m` PaliGemma tower fails at the first chunk: "Expected
size 2048 but got size 1024"), bfloat16 (LeRobot keeps the vision tower and norms in float32): ~3.5 B parameters,
~7 GB. Too heavy for the test suite; bench/vla_footprint.py runs it.

What the hub would give and what stands in for it here: LeRobot's pi0 / pi0.5 pre-processors load the PaliGemma
tokenizer by hub id (`google/paligemma-3b-pt-224`, hard-coded in make_pi0_pre_post_processors). Offline, that id is
served from a local Hugging Face cache (`HF_HUB_CACHE`) holding a tiny tokenizer of the same kind made here
(byte-level BPE trained with `tokenizers` on a few sentences, Gemma's special tokens <pad> <eos> <bos> <unk>, a
<bos> prefix as PaliGemma's tokenizer adds). The Gemma / SigLIP weights are random (pi0 builds its towers from
configs, no download); the real tokenizer (257k SentencePiece pieces) and the pretrained weights are what is
missing. Set HF_HUB_CACHE before huggingface_hub is imported (the cache path is read at import).
"""

from __future__ import annotations

import os
from pathlib import Path

PALIGEMMA_TOKENIZER = "google/paligemma-3b-pt-224"
SENTENCES = (
    "push the puck to the goal",
    "pick up the cube and place it in the bowl",
    "open the top drawer of the cabinet",
    "Task: reach the red target, State: 1 2 3;\nAction: ",
)


def cache_paligemma_tokenizer(cache: Path, vocab_size: int = 300) -> Path:
    """A tiny tokenizer stored in `cache` (an HF_HUB_CACHE folder) as the snapshot of PALIGEMMA_TOKENIZER."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PaliGemmaConfig, PreTrainedTokenizerFast

    snapshot = Path(cache) / ("models--" + PALIGEMMA_TOKENIZER.replace("/", "--"))
    folder = snapshot / "snapshots" / ("0" * 40)
    if (folder / "tokenizer.json").is_file():
        return folder
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    special = ["<pad>", "<eos>", "<bos>", "<unk>"]
    bpe.train_from_iterator(
        SENTENCES,
        trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    bpe.post_processor = processors.TemplateProcessing(single="<bos> $A", special_tokens=[("<bos>", 2)])
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe, pad_token="<pad>", eos_token="<eos>", bos_token="<bos>", unk_token="<unk>"
    )
    folder.mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(folder)
    # the hub repo's model config too: AutoTokenizer reads it (transformers 5 looks it up for a tokenizers-backed
    # tokenizer); the tokenizer stays the trained byte-level one (Gemma's own class would re-build SentencePiece's)
    PaliGemmaConfig().save_pretrained(folder)
    (snapshot / "refs").mkdir(exist_ok=True)
    (snapshot / "refs" / "main").write_text("0" * 40)
    return folder


def pi_config_kwargs(
    chunk_size: int = 50, image_side: int = 224, tokenizer_max_length: int = 48, num_inference_steps: int = 10
) -> dict:
    """The reduced configuration: the smallest Gemma variants that run; chunk and denoising steps LeRobot's defaults."""
    return dict(
        paligemma_variant="gemma_2b",
        action_expert_variant="gemma_300m",
        chunk_size=chunk_size,
        n_action_steps=chunk_size,
        num_inference_steps=num_inference_steps,
        image_resolution=(image_side, image_side),
        tokenizer_max_length=tokenizer_max_length,
        dtype="bfloat16",
    )


def pi_stats(state_dim: int, action_dim: int, cameras, seed: int = 0) -> dict:
    """lerobot_ros.testing.policies' stats plus the quantiles pi0.5 normalizes with (QUANTILES mode reads q01 / q99)."""
    from lerobot_ros.testing.policies import _stats

    stats = _stats(state_dim, action_dim, cameras, seed)
    for values in stats.values():
        values["q01"], values["q99"] = values["min"], values["max"]
    return stats


def make_pi_folder(
    out: Path,
    kind: str = "pi0",
    state_dim: int = 6,
    action_dim: int = 6,
    cameras: dict[str, tuple[int, int]] | None = None,
    chunk_size: int = 50,
    image_side: int = 224,
) -> Path:
    """A random pi0 / pi05 saved with its processors into `out` (needs HF_HUB_CACHE set up by the caller)."""
    import torch
    from lerobot.policies.factory import get_policy_class, make_policy_config, make_pre_post_processors

    from lerobot_ros.testing.policies import _features

    assert os.environ.get("HF_HUB_OFFLINE") == "1", "offline only"
    cameras = {"front": (48, 64)} if cameras is None else cameras
    inputs, outputs = _features(state_dim, action_dim, cameras)
    cfg = make_policy_config(
        kind, input_features=inputs, output_features=outputs, device="cpu", **pi_config_kwargs(chunk_size, image_side)
    )
    torch.manual_seed(0)
    policy = get_policy_class(kind)(cfg)
    pre, post = make_pre_post_processors(cfg, dataset_stats=pi_stats(state_dim, action_dim, cameras))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for thing in (policy, pre, post):
        thing.save_pretrained(out)
    return out
