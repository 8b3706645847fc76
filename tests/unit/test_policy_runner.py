"""PolicyRunner against LeRobot's own inference loop, with small random ACT and Diffusion policies."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lerobot_ros.policy import AsyncInference, AsyncInferenceConfig, PolicyRunner, load_policy
from lerobot_ros.testing.policies import cached_policy_folder, random_frames


@pytest.fixture(scope="module", params=["act", "diffusion"])
def policy_dir(request, tmp_path_factory):
    return cached_policy_folder(tmp_path_factory.getbasetemp() / "policies", request.param)


def _direct_loop(path, frames, task, seed):
    """The reference: lerobot-record's predict_action on a freshly loaded policy."""
    from lerobot.common.control_utils import predict_action

    lp = load_policy(str(path), "cpu")
    lp.policy.reset()
    torch.manual_seed(seed)
    return np.stack(
        [
            predict_action(dict(f), lp.policy, torch.device("cpu"), lp.preprocessor, lp.postprocessor, False, task, "")
            .numpy()
            .reshape(-1)
            for f in frames
        ]
    )


@pytest.mark.slow
def test_runner_matches_lerobot_loop_bitwise(policy_dir):
    frames = random_frames(12)
    expected = _direct_loop(policy_dir, frames, "pick", seed=3)
    runner = PolicyRunner(load_policy(str(policy_dir), "cpu"), seed=3)
    got, chunks = [], []
    for f in frames:
        action, chunk = runner.select_action(f, "pick")
        got.append(action)
        chunks.append(chunk)
    assert np.array_equal(np.stack(got), expected)
    # a chunk is captured exactly when the policy refills its queue; its first n_action_steps rows are
    # the actions the following ticks execute
    n = runner.loaded.n_action_steps
    refills = [i for i, c in enumerate(chunks) if c is not None]
    assert refills == list(range(0, len(frames), n))
    for i in refills:
        executed = np.stack(got[i : i + n])
        assert np.array_equal(chunks[i][: len(executed)], executed)


class _CountingStep:
    """A pre-processor step that passes the transition on and counts the calls (keeps no state of its own)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, transition):
        self.calls += 1
        return transition

    def transform_features(self, features):
        return features


def _counting_runner(path, stateful: bool = False, seed: int = 3) -> tuple[PolicyRunner, _CountingStep]:
    from lerobot.processor.pipeline import ProcessorStep

    # a step with its own reset keeps state between calls (LeRobot's contract): it must see every frame
    methods = {"reset": lambda self: None} if stateful else {}
    step = type("StatefulStep" if stateful else "CountingStep", (_CountingStep, ProcessorStep), methods)()
    lp = load_policy(str(path), "cpu")
    lp.preprocessor.steps.append(step)
    return PolicyRunner(lp, seed=seed), step


@pytest.mark.slow
def test_queue_popping_ticks_skip_the_preprocessor(policy_dir):
    """ACT pops its queue without reading the frame: only the ticks that predict a chunk pre-process theirs (the
    others would convert and normalise two images for nothing); the actions stay lerobot-record's, bit for bit.
    A Diffusion policy keeps an observation history: it pre-processes every frame."""
    frames = random_frames(12)
    expected = _direct_loop(policy_dir, frames, "pick", seed=3)
    runner, step = _counting_runner(policy_dir)
    got = [runner.select_action(f, "pick") for f in frames]
    assert np.array_equal(np.stack([a for a, _ in got]), expected)
    refills = [i for i, (_, chunk) in enumerate(got) if chunk is not None]
    if runner.loaded.type == "act":
        assert runner.pops_without_input
        assert step.calls == len(refills) < len(frames)
    else:
        assert not runner.pops_without_input
        assert step.calls == len(frames)
    runner.reset()  # a new episode predicts from its first frame again
    runner.select_action(frames[0], "pick")
    assert step.calls == (len(refills) if runner.loaded.type == "act" else len(frames)) + 1


@pytest.mark.slow
def test_a_stateful_preprocessor_sees_every_frame(tmp_path_factory):
    path = cached_policy_folder(tmp_path_factory.getbasetemp() / "policies", "act")
    frames = random_frames(6)
    runner, step = _counting_runner(path, stateful=True)
    for f in frames:
        runner.select_action(f, "")
    assert not runner.pops_without_input
    assert step.calls == len(frames)


@pytest.mark.slow
def test_reset_restarts_the_episode(tmp_path_factory):
    path = cached_policy_folder(tmp_path_factory.getbasetemp() / "policies", "diffusion")  # stochastic sampler
    frames = random_frames(3, seed=1)
    runner = PolicyRunner(load_policy(str(path), "cpu"), seed=5)
    first = [runner.select_action(f, "")[0] for f in frames]
    runner.reset()
    again = [runner.select_action(f, "")[0] for f in frames]
    assert np.array_equal(np.stack(first), np.stack(again))


@pytest.mark.slow
def test_act_chunk_through_async_worker(tmp_path_factory):
    path = cached_policy_folder(tmp_path_factory.getbasetemp() / "policies", "act")
    runner = PolicyRunner(load_policy(str(path), "cpu"), seed=0)
    frame = random_frames(1, seed=2)[0]
    expected = runner.predict_chunk(frame, "")
    assert expected.shape == (10, 6)
    worker = AsyncInference(
        runner.predict_chunk, chunk_length=runner.loaded.chunk_length, config=AsyncInferenceConfig(threshold=0.5)
    )
    try:
        assert worker.tick(0, frame, "").submitted
        assert worker.wait_idle(30)
        got = [worker.tick(k, frame, "").action for k in range(1, 4)]
        assert np.allclose(np.stack(got), expected[1:4], atol=1e-6)
    finally:
        worker.close()
