"""A tiny SmolVLM backbone made locally, for SmolVLA tests and benchmarks that must not touch a hub.

SmolVLA builds its VLM from `vlm_model_name` with `AutoConfig` / `AutoProcessor.from_pretrained`, and its
tokenizer step loads `AutoTokenizer.from_pretrained` from the same name. Here that name is a local folder
holding a SmolVLM-architecture config with a one-layer vision tower and a two-layer Llama text model, and a
byte-level BPE tokenizer trained with the `tokenizers` library on a few task sentences, carrying the special
tokens SmolVLM's processor and SmolVLA's model read (`<fake_token_around_image>`, `<global-img>`, `<image>`,
`<end_of_utterance>`). Weights are random: SmolVLA initialises the VLM itself when `load_vlm_weights` is off.
"""

from __future__ import annotations

from pathlib import Path

#: Sentences the tokenizer learns from: the task strings the tests send, plus common words.
TASK_SENTENCES = (
    "push the puck to the goal",
    "reach the red target",
    "pick up the cube and place it in the bowl",
    "open the top drawer of the cabinet",
    "put both the alphabet soup and the tomato sauce in the basket",
    "move the arm to the left and close the gripper",
)

SPECIAL_TOKENS = (
    "<pad>",
    "<unk>",
    "<|im_start|>",
    "<end_of_utterance>",
    "<fake_token_around_image>",
    "<global-img>",
    "<image>",
    "<video>",
)

#: Image side the tiny vision tower is built for (SmolVLA resizes with padding to it).
IMAGE_SIDE = 64
PATCH = 16
SCALE_FACTOR = 2


def make_tiny_smolvlm(out: Path, vocab_size: int = 320) -> Path:
    """Write a SmolVLM config + processor (tokenizer, image/video processors) into `out`; return `out`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, SmolVLMConfig, SmolVLMImageProcessor, SmolVLMProcessor
    from transformers.models.smolvlm.video_processing_smolvlm import SmolVLMVideoProcessor

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS), initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(TASK_SENTENCES, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<|im_start|>",
        eos_token="<end_of_utterance>",
        extra_special_tokens={
            "fake_image_token": "<fake_token_around_image>",
            "global_image_token": "<global-img>",
            "image_token": "<image>",
            "end_of_utterance_token": "<end_of_utterance>",
        },
    )
    tokenizer.padding_side = "right"
    image_seq_len = ((IMAGE_SIDE // PATCH) ** 2) // (SCALE_FACTOR**2)
    processor = SmolVLMProcessor(
        image_processor=SmolVLMImageProcessor(
            do_image_splitting=False,
            size={"longest_edge": IMAGE_SIDE},
            max_image_size={"longest_edge": IMAGE_SIDE},
        ),
        tokenizer=tokenizer,
        video_processor=SmolVLMVideoProcessor(),
        image_seq_len=image_seq_len,
    )
    # transformers builds SmolVLMConfig's __init__ from its fields at run time (@strict); mypy sees PreTrainedConfig's
    config = SmolVLMConfig(  # type: ignore[call-arg]
        vision_config=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=IMAGE_SIDE,
            patch_size=PATCH,
        ),
        text_config=dict(
            model_type="llama",
            vocab_size=len(tokenizer),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=16,
            max_position_embeddings=512,
        ),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        scale_factor=SCALE_FACTOR,
        pad_token_id=tokenizer.pad_token_id,
    )
    config.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def smolvla_config_kwargs(vlm_folder: Path, chunk_size: int, n_action_steps: int) -> dict:
    """SmolVLAConfig arguments that put a tiny SmolVLA on the local VLM (a few hundred thousand parameters)."""
    return dict(
        vlm_model_name=str(Path(vlm_folder).resolve()),
        load_vlm_weights=False,
        num_vlm_layers=2,
        resize_imgs_with_padding=(IMAGE_SIDE, IMAGE_SIDE),
        chunk_size=chunk_size,
        n_action_steps=n_action_steps,
        max_state_dim=8,
        max_action_dim=8,
        num_steps=4,
        tokenizer_max_length=16,
    )
