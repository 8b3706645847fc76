"""Policy library without ROS: loading errors, feature checks, safety, chunk queue, async scheduling."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from lerobot_ros.policy import (
    ActionQueue,
    AsyncInference,
    AsyncInferenceConfig,
    PolicyLoadError,
    SafetyFilter,
    feature_mismatches,
    load_policy,
    resolve_device,
    staleness_reason,
)


# ---- loading ----------------------------------------------------------------------------------------
def test_missing_folder_fails_with_path(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(PolicyLoadError, match="does not exist") as err:
        load_policy(str(missing), "cpu")
    assert str(missing) in str(err.value)


def test_folder_without_config_fails(tmp_path):
    with pytest.raises(PolicyLoadError, match="no config.json"):
        load_policy(str(tmp_path), "cpu")


@pytest.mark.parametrize(
    "config_text, message",
    [
        (None, "has no config.json; pass a LeRobot pretrained_model folder"),
        ("{not json", "is not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
        ('{"chunk_size": 3}', 'is not a LeRobot policy config (no "type" key)'),
        ('{"type": "no_such_policy"}', "cannot read the policy config at"),
    ],
)
def test_a_local_policy_and_a_remote_ones_config_fail_alike(tmp_path, config_text, message):
    """policy_node loading weights here and a client of a policy server reading only the config: one line each,
    the same line, for each way a pretrained folder can be broken."""
    from lerobot_ros.policy.loading import load_policy_config

    if config_text is not None:
        (tmp_path / "config.json").write_text(config_text)
    lines = []
    for load in (load_policy, load_policy_config):
        with pytest.raises(PolicyLoadError) as err:
            load(str(tmp_path), "cpu")
        lines.append(str(err.value))
    assert lines[0] == lines[1] and message in lines[0] and "\n" not in lines[0]


def test_resolve_device():
    import torch

    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") in ("cpu", "cuda", "mps")
    with pytest.raises(PolicyLoadError, match="unknown device"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(PolicyLoadError, match="CUDA is not available"):
            resolve_device("cuda")


# ---- features ---------------------------------------------------------------------------------------
class _Cfg:
    def __init__(self):
        from lerobot.configs.types import FeatureType, PolicyFeature

        self.input_features = {
            "observation.state": PolicyFeature(type=FeatureType.STATE, shape=(6,)),
            "observation.images.front": PolicyFeature(type=FeatureType.VISUAL, shape=(3, 48, 64)),
        }
        self.output_features = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(6,))}


def _provided(h=48, w=64, state=6, action=6, cam="front"):
    return {
        "action": {"dtype": "float32", "shape": (action,)},
        "observation.state": {"dtype": "float32", "shape": (state,)},
        f"observation.images.{cam}": {"dtype": "video", "shape": (h, w, 3)},
        "observation.images.extra": {"dtype": "video", "shape": (10, 10, 3)},  # unused extras are fine
    }


def test_features_match():
    assert feature_mismatches(_Cfg(), _provided()) == []


def test_feature_mismatches_are_listed():
    problems = feature_mismatches(_Cfg(), _provided(h=480, w=640, action=7, cam="wrist"))
    text = "\n".join(problems)
    assert len(problems) == 2
    assert "observation.images.front" in text and "no such feature" in text
    assert "action: policy expects shape [6], the contract gives [7]" in text
    problems = feature_mismatches(_Cfg(), _provided(h=480, w=640))
    assert problems == ["observation.images.front: policy expects shape [3, 48, 64], the contract gives [3, 480, 640]"]


# ---- safety -----------------------------------------------------------------------------------------
def test_safety_clamp_and_delta():
    f = SafetyFilter.from_lists(3, lower=[-10], upper=[10, 10, 5], max_delta=[2.0])
    a, note = f.apply([0.0, 0.0, 0.0])
    assert a.tolist() == [0, 0, 0] and note is None
    a, note = f.apply([20.0, -1.0, 9.0])  # clamp to [10, -1, 5], then at most 2 from the last
    assert a.tolist() == [2.0, -1.0, 2.0]
    assert "clamped" in note and "limited" in note
    a, _ = f.apply([20.0, -1.0, 9.0])
    assert a.tolist() == [4.0, -1.0, 4.0]
    f.reset()
    a, _ = f.apply([20.0, -1.0, 9.0])
    assert a.tolist() == [10.0, -1.0, 5.0]


def test_safety_drops_non_finite_and_keeps_last():
    f = SafetyFilter.from_lists(2, max_delta=[1.0])
    f.apply([0.0, 0.0])
    a, note = f.apply([np.nan, 0.5])
    assert a is None and "non-finite" in note and "[0]" in note
    a, note = f.apply([np.inf, 0.5])
    assert a is None
    a, _ = f.apply([5.0, 0.5])  # limit still measured from the last published action
    assert a.tolist() == [1.0, 0.5]


def test_safety_chunk_chains_delta():
    f = SafetyFilter.from_lists(1, max_delta=[1.0])
    f.apply([0.0])
    chunk, note = f.apply_chunk([[5.0], [5.0], [5.0]])
    assert chunk[:, 0].tolist() == [1.0, 2.0, 3.0] and "limited" in note
    chunk, note = f.apply_chunk([[3.0], [np.nan]])
    assert chunk is None and f.last.tolist() == [3.0]


def test_safety_bad_parameters():
    with pytest.raises(ValueError, match="action_lower has 2 values for an action of 3"):
        SafetyFilter.from_lists(3, lower=[1, 2])
    with pytest.raises(ValueError, match="above"):
        SafetyFilter.from_lists(1, lower=[1], upper=[0])
    with pytest.raises(ValueError, match="positive"):
        SafetyFilter.from_lists(1, max_delta=[0])
    for what in ("lower", "upper", "max_delta"):  # a NaN bound made np.clip publish NaN actions
        with pytest.raises(ValueError, match=r"has NaN values .*use numbers \(inf: no limit\)"):
            SafetyFilter.from_lists(2, **{what: [float("nan")]})
    unlimited = SafetyFilter.from_lists(2, lower=[float("-inf")], upper=[1.0, float("inf")])
    assert unlimited.apply([-1e9, 1e9])[0].tolist() == [-1e9, 1e9]


def test_limits_tightened_at_run_time_win_over_the_change_limit():
    """policy_node keeps the last action across a live limit change; the next action is inside the new limits even
    when that is a larger step than max_delta (the limits are the hard bound)."""
    old = SafetyFilter.from_lists(1, upper=[3.0], max_delta=[0.1])
    assert old.apply([2.0])[0].tolist() == [2.0]
    new = SafetyFilter.from_lists(1, upper=[1.0], max_delta=[0.1])
    new.last = old.last
    safe, note = new.apply([2.0])
    assert safe.tolist() == [1.0] and note == "clamped to joint limits; limited change per tick"
    assert new.apply([0.5])[0].tolist() == [0.9]  # then the change limit applies from inside the limits


def test_staleness_reason():
    ms = 1_000_000
    assert staleness_reason({"a": 10 * ms, "b": 0}, {"a": 100 * ms, "b": 100 * ms}) is None
    assert staleness_reason({"a": None, "b": 0}, {"a": 100 * ms}) == "waiting for first message on a"
    reason = staleness_reason({"a": 250 * ms, "b": 0}, {"a": 100 * ms, "b": 100 * ms})
    assert reason == "stale: a 250 ms old (max 100 ms)"
    assert staleness_reason({"a": 250 * ms}, {"a": 0}) is None  # 0 = no limit


# ---- chunk queue ------------------------------------------------------------------------------------
def test_action_queue_merge_and_pop():
    q = ActionQueue("weighted_average")
    q.merge(0, np.arange(4.0)[:, None])  # ticks 0..3 -> 0,1,2,3
    assert q.pop(0).tolist() == [0.0]
    assert q.pop(1).tolist() == [1.0]
    assert q.depth() == 2
    # a chunk computed from the observation at tick 1: rows for ticks 1.. (tick 1 already executed)
    kept = q.merge(1, np.full((5, 1), 10.0))
    assert kept == 4  # ticks 2..5
    assert q.pop(2).tolist() == pytest.approx([0.3 * 2 + 0.7 * 10])
    assert q.pop(3).tolist() == pytest.approx([0.3 * 3 + 0.7 * 10])
    assert q.pop(4).tolist() == [10.0]
    assert q.pop(6) is None  # tick 5 skipped (counts as executed), tick 6 never predicted: dry
    assert q.depth() == 0


def test_action_queue_latest_only_and_unknown():
    q = ActionQueue("latest_only")
    q.merge(0, [[1.0], [1.0]])
    q.merge(0, [[2.0], [2.0]])
    assert q.pop(0).tolist() == [2.0]
    with pytest.raises(ValueError, match="unknown aggregate function 'nope'"):
        ActionQueue("nope")


# ---- async scheduling -------------------------------------------------------------------------------
def test_async_config_defaults_and_validation():
    """One source of the async defaults (LeRobot's async client: threshold 0.5, weighted_average)."""
    assert AsyncInferenceConfig() == AsyncInferenceConfig(0.5, "weighted_average", None)
    with pytest.raises(ValueError, match=r"chunk threshold must be in \[0, 1\], got 1.5"):
        AsyncInferenceConfig(threshold=1.5)
    with pytest.raises(ValueError, match="unknown aggregate function 'median'"):
        AsyncInferenceConfig(aggregate="median")
    with pytest.raises(ValueError, match="actions_per_chunk must be at least 1"):
        AsyncInferenceConfig(actions_per_chunk=0)


def test_async_tick_never_waits_for_inference():
    """The policy blocks until the test releases it; ticks still return (queue dry) meanwhile."""
    release = threading.Event()
    calls = []

    def predict(frame, task):
        calls.append((frame["k"], task))
        release.wait(10)
        return np.arange(6.0)[:, None] + 100 * frame["k"]

    worker = AsyncInference(
        predict, chunk_length=6, config=AsyncInferenceConfig(threshold=0.5, aggregate="latest_only")
    )
    try:
        first = worker.tick(0, {"k": 0}, "task")
        assert first.submitted and first.action is None
        for k in range(1, 4):  # inference still running: dry ticks, nothing new submitted
            t = worker.tick(k, {"k": k}, "task")
            assert t.action is None and not t.submitted
        release.set()
        assert worker.wait_idle(10)
        # chunk rows are for ticks 0..5; 0..3 already passed, so tick 4 gets row 4
        t = worker.tick(4, {"k": 4}, "task")
        assert t.action.tolist() == [4.0]
        assert t.submitted  # 1 action left <= 0.5 * 6: next inference starts
        assert worker.wait_idle(10)
        t = worker.tick(5, {"k": 5}, "task")
        assert t.action.tolist() == [401.0]  # latest_only: row 1 of the chunk observed at tick 4 replaced it
        assert calls == [(0, "task"), (4, "task")]
    finally:
        release.set()
        worker.close()


def test_async_chunk_that_arrives_after_all_its_ticks_is_counted_and_explained():
    """Inference slower than a chunk lasts (pi0 on a CPU): the chunk's rows are all for ticks that ran; nothing of
    it executes, the dry reason says why instead of 'waiting for the first chunk', and a later timely chunk runs."""
    release = threading.Event()
    slow = {"on": True}

    def predict(frame, task):
        if slow["on"]:
            release.wait(10)
        return np.arange(4.0)[:, None] + 10 * frame["k"]

    worker = AsyncInference(
        predict, chunk_length=4, config=AsyncInferenceConfig(threshold=0.5, aggregate="latest_only")
    )
    try:
        assert worker.tick(0, {"k": 0}, "task").submitted
        for k in range(1, 6):  # ticks 0..5 run while the chunk for ticks 0..3 is computed
            assert worker.tick(k, {"k": k}, "task").action is None
        release.set()
        assert worker.wait_idle(10)
        assert worker.expired_chunks == 1 and worker.chunks == 0 and worker.queue.depth(6) == 0
        assert worker.last_stale.startswith("a chunk came ") and "all 4 of its ticks had passed" in worker.last_stale
        assert "slower than a chunk lasts" in worker.last_stale
        slow["on"] = False
        assert worker.tick(6, {"k": 6}, "task").submitted
        assert worker.wait_idle(10)
        assert worker.tick(7, {"k": 7}, "task").action.tolist() == [61.0]  # row 1 of the chunk observed at tick 6
        assert worker.chunks == 1 and worker.expired_chunks == 1 and worker.last_stale is None
    finally:
        release.set()
        worker.close()


def test_async_policy_error_skips_and_continues():
    state = {"n": 0}

    def predict(frame, task):
        state["n"] += 1
        if state["n"] == 1:
            raise RuntimeError("boom")
        return np.ones((4, 2))

    worker = AsyncInference(predict, chunk_length=4, config=AsyncInferenceConfig(threshold=1.0))
    try:
        worker.tick(0, {}, "")
        assert worker.wait_idle(10)
        assert worker.errors == 1 and worker.last_error == "RuntimeError: boom"
        worker.tick(1, {}, "")
        assert worker.wait_idle(10)
        assert worker.tick(2, {}, "").action.tolist() == [1.0, 1.0]
    finally:
        worker.close()


def test_async_reset_discards_in_flight_result():
    release = threading.Event()

    def predict(frame, task):
        release.wait(10)
        return np.ones((4, 1))

    worker = AsyncInference(predict, chunk_length=4)
    try:
        worker.tick(0, {}, "")
        worker.reset()
        release.set()
        assert worker.wait_idle(10)
        assert worker.queue.depth(0) == 0
    finally:
        worker.close()


def test_openmp_spin_is_limited_unless_the_user_chose():
    import sys

    from lerobot_ros.policy.openmp import SPIN_COUNT, limit_openmp_spin

    env = {}
    assert limit_openmp_spin(env) == ("torch" not in sys.modules) and env["GOMP_SPINCOUNT"] == SPIN_COUNT
    env = {"GOMP_SPINCOUNT": "300000"}
    assert limit_openmp_spin(env) is False and env["GOMP_SPINCOUNT"] == "300000"
    env = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert limit_openmp_spin(env) is False and "GOMP_SPINCOUNT" not in env


def test_policy_node_main_limits_openmp_spin_before_torch_loads():
    """policy_node's main() calls limit_openmp_spin() first: importing the node module must not load torch."""
    import os
    import subprocess
    import sys

    from lerobot_ros.policy.openmp import SPIN_COUNT

    code = (
        "import os, sys; import lerobot_ros.nodes.policy_node; from lerobot_ros.policy.openmp import limit_openmp_spin; "
        "print(limit_openmp_spin(), os.environ['GOMP_SPINCOUNT'], 'torch' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["True", SPIN_COUNT, "False"], out.stderr[-2000:]
