"""The smooth tiny SmolVLA that bench/chunking.py drives the twin with: its demonstrations, its cache, and that the
fitted policy's chunks are smooth where random weights give white noise (the premise of that benchmark)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from lerobot_ros.testing import smooth as fs

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _steps(chunks: np.ndarray) -> np.ndarray:
    """Per action, the largest jump over the five arm joints to the next action (degrees)."""
    return np.abs(np.diff(chunks[..., :5], axis=-2)).max(-1)


def test_demonstrations_start_at_the_state_move_smoothly_and_are_not_determined_by_it():
    rng = np.random.default_rng(0)
    state = np.tile(fs.HOME + np.array([30.0, -20.0, 10.0, 0.0, 5.0, -10.0]), (64, 1))
    chunks = fs.smooth_chunks(state, 50, rng)
    assert chunks.shape == (64, 50, 6)
    # a tick's move: the relaxation (|home - state| / (tau * fps)) plus two waves' top speeds (2 pi f A / fps)
    bound = 30.0 / (fs.TAU_S * fs.FPS) + 2 * 2 * np.pi * fs.WAVE_HZ[1] * fs.WAVE_AMPLITUDE[1] / fs.FPS
    assert _steps(chunks).max() <= bound
    first = np.abs(chunks[:, 0, :] - state).max(1)
    assert first.max() <= bound  # a continuation of where the arm is
    # the same observation, different continuations: the unseen wave (what makes switched chunks disagree)
    spread = chunks[:, -1, :5].std(0)
    assert (spread > 3.0).all(), spread
    # and every continuation heads home: the relaxation term is common to all
    mean_end = chunks[:, -1, :].mean(0)
    expected = state[0] + (fs.HOME - state[0]) * (1 - np.exp(-50 / fs.FPS / fs.TAU_S))
    assert np.abs(mean_end - expected).max() < 4.0


def test_demonstrations_are_seeded_and_images_carry_no_action_information():
    a = fs.smooth_demonstrations(200, 10, seed=3)
    b = fs.smooth_demonstrations(200, 10, seed=3)
    c = fs.smooth_demonstrations(200, 10, seed=4)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[1], c[1])
    state, actions, images = a
    assert images.shape == (200, 3, fs.SIDE, fs.SIDE) and images.min() >= 0 and images.max() <= 1
    brightness = images.mean(axis=(1, 2, 3))
    motion = actions[:, -1, 0] - state[:, 0]
    assert abs(np.corrcoef(brightness, motion)[0, 1]) < 0.25


def test_the_cache_trains_once_reuses_and_replaces_a_half_written_folder(tmp_path):
    seen = []
    first = fs.cached_smooth_smolvla(tmp_path, log=seen.append, chunk=10, steps=3)
    assert any("training" in line for line in seen)
    fit = json.loads((first / "fit.json").read_text())
    assert fit["steps"] == 3 and len(fit["losses"]) == 3 and all(np.isfinite(fit["losses"]))
    seen.clear()
    assert fs.cached_smooth_smolvla(tmp_path, log=seen.append, chunk=10, steps=3) == first
    assert seen == []  # reused, not trained again
    other = fs.cached_smooth_smolvla(tmp_path, log=seen.append, chunk=10, steps=4)
    assert other != first  # other arguments, another folder
    (first / "fit.json").unlink()  # as a run killed mid-training leaves it
    seen.clear()
    assert fs.cached_smooth_smolvla(tmp_path, log=seen.append, chunk=10, steps=3) == first
    assert any("training" in line for line in seen) and (first / "fit.json").is_file()
    # a LeRobot checkpoint like any other: config names the local VLM folder inside it
    config = json.loads((first / "config.json").read_text())
    assert config["type"] == "smolvla" and config["vlm_model_name"] == str((first / "vlm").resolve())
    assert config["chunk_size"] == 10


@pytest.mark.slow
def test_the_fitted_policy_gives_smooth_chunks_where_random_weights_give_noise(tmp_path):
    from lerobot_ros.policy.inference import PolicyRunner
    from lerobot_ros.policy.loading import load_policy
    from lerobot_ros.testing.policies import make_policy_folder

    fitted = PolicyRunner(load_policy(str(fs.cached_smooth_smolvla()), "cpu"), seed=0)
    random = PolicyRunner(
        load_policy(
            str(
                make_policy_folder(
                    tmp_path / "random", "smolvla", cameras={"front": (64, 64)}, chunk_size=50, n_action_steps=50
                )
            ),
            "cpu",
        ),
        seed=0,
    )
    state, demos, images = fs.smooth_demonstrations(6, 50, seed=11)
    steps = {"fitted": [], "random": []}
    starts = []
    for k in range(len(state)):
        frame = {
            "observation.state": state[k],
            "observation.images.front": (images[k].transpose(1, 2, 0) * 255).astype(np.uint8),
        }
        for name, runner in (("fitted", fitted), ("random", random)):
            chunk = runner.predict_chunk(frame, fs.TASK)
            assert chunk.shape == (50, 6) and np.isfinite(chunk).all()
            steps[name].extend(_steps(chunk).tolist())
            if name == "fitted":
                starts.append(np.abs(chunk[0, :5] - state[k, :5]).max())
    fitted_p95, random_p95 = np.percentile(steps["fitted"], 95), np.percentile(steps["random"], 95)
    assert fitted_p95 < 0.15 * random_p95, (fitted_p95, random_p95)
    assert fitted_p95 < 4 * np.percentile(_steps(demos), 95)
    assert np.median(starts) < 8.0  # chunks continue from the observed state


def test_the_cache_key_counts_defaults_given_or_left_out():
    assert fs._cache_key() == fs._cache_key(chunk=50) == fs._cache_key(chunk=50, steps=3000)
    assert fs._cache_key(chunk=10) != fs._cache_key()
