"""The tiny offline SmolVLA (lerobot_ros.testing.vla) is a real SmolVLA checkpoint that loads and runs offline."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lerobot_ros.testing.policies import make_policy_folder, random_frames

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def smolvla_folder(tmp_path_factory):
    return make_policy_folder(
        tmp_path_factory.mktemp("smolvla") / "policy", kind="smolvla", chunk_size=10, n_action_steps=10
    )


def test_saved_checkpoint_names_the_local_vlm(smolvla_folder):
    config = json.loads((smolvla_folder / "config.json").read_text())
    assert config["type"] == "smolvla"
    assert config["vlm_model_name"] == str((smolvla_folder / "vlm").resolve())
    for name in ("config.json", "tokenizer.json", "processor_config.json"):
        assert (smolvla_folder / "vlm" / name).is_file(), name


def test_loads_and_runs_through_the_policy_runner(smolvla_folder):
    from lerobot_ros.policy.inference import PolicyRunner
    from lerobot_ros.policy.loading import load_policy

    loaded = load_policy(str(smolvla_folder), device="cpu")
    assert loaded.type == "smolvla" and loaded.chunk_length == 10
    runner = PolicyRunner(loaded, seed=0)
    frame = random_frames(1)[0]
    chunk = runner.predict_chunk(frame, "push the puck to the goal")
    assert chunk.shape == (10, 6) and np.isfinite(chunk).all()
    runner.reset()
    again = runner.predict_chunk(frame, "push the puck to the goal")
    np.testing.assert_allclose(again, chunk, atol=1e-5)  # seeded flow-matching noise: same inputs, same chunk


def test_the_task_sentence_reaches_the_tokenizer(smolvla_folder):
    from lerobot_ros.policy.loading import load_policy

    loaded = load_policy(str(smolvla_folder), device="cpu")
    frame = dict(random_frames(1)[0].items())
    import torch

    def tokens(task):
        batch = {
            "observation.state": torch.from_numpy(frame["observation.state"])[None],
            "observation.images.front": torch.from_numpy(frame["observation.images.front"])
            .permute(2, 0, 1)[None]
            .float()
            / 255,
            "task": [task],
        }
        return loaded.preprocessor(batch)["observation.language.tokens"][0].tolist()

    a, b = tokens("push the puck to the goal"), tokens("open the top drawer of the cabinet")
    assert a != b
    assert len(tokens("push " * 40)) == 16  # tokenizer_max_length: LeRobot truncates
