"""Real-time chunking (policy.rtc) with the tiny SmolVLA: the leftover guides the next chunk, the delay is measured
in ticks, and policies without RTC are refused.

Tolerance of the frozen prefix: the first `delay` rows of a guided chunk stay within PREFIX_TOL of the leftover they
were guided by, in the policy's model space (normalized actions: one unit = one standard deviation of the dataset's
actions). An unguided chunk of the random-weight policy differs from the same leftover by about one unit per row.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from lerobot_ros.testing.policies import cached_policy_folder, random_frames

pytest.importorskip("transformers")

from lerobot_ros.policy import (  # noqa: E402
    AsyncInference,
    AsyncInferenceConfig,
    PolicyController,
    PolicyRunner,
    RtcGuide,
    RtcSettings,
    enable_rtc,
    load_policy,
    supports_rtc,
)
from lerobot_ros.policy.async_inference import resolve_chunking  # noqa: E402

PREFIX_TOL = 0.25  # model-space units (dataset action standard deviations)
TASK = "pick up the cube and place it in the bowl"
CHUNK = 20


@pytest.fixture(scope="module")
def smolvla(tmp_path_factory):
    return cached_policy_folder(
        tmp_path_factory.getbasetemp() / "policies", "smolvla", chunk_size=CHUNK, n_action_steps=CHUNK
    )


# ---- the mode, and who may use it -------------------------------------------------------------------
def test_chunking_mode_from_the_parameters():
    assert resolve_chunking("auto", False) == "switch"
    assert resolve_chunking("auto", True) == "aggregate"
    assert resolve_chunking("rtc", False) == "rtc"  # rtc runs inference in its own thread by itself
    assert resolve_chunking("aggregate", False) == "aggregate"
    with pytest.raises(ValueError, match="chunking:=switch runs inference inline"):
        resolve_chunking("switch", True)
    with pytest.raises(ValueError, match="unknown chunking 'blend'"):
        resolve_chunking("blend", False)


def test_policies_without_rtc_are_refused_in_one_line(tmp_path_factory):
    folder = cached_policy_folder(tmp_path_factory.getbasetemp() / "policies", "act")
    loaded = load_policy(str(folder), "cpu")
    assert not supports_rtc(loaded.policy)
    with pytest.raises(ValueError) as err:
        PolicyController(PolicyRunner(loaded), async_inference=AsyncInferenceConfig(rtc=RtcSettings()))
    message = str(err.value)
    assert (
        "\n" not in message
        and "chunking:=rtc" in message
        and "act policy" in message
        and "chunking:=aggregate" in message
    )


def test_other_modes_do_not_touch_rtc(smolvla):
    loaded = load_policy(str(smolvla), "cpu")
    sync = PolicyController(PolicyRunner(loaded))
    assert sync.chunking == "switch" and loaded.policy.config.rtc_config is None
    blend = PolicyController(PolicyRunner(loaded), async_inference=AsyncInferenceConfig())
    try:
        assert blend.chunking == "aggregate" and blend.worker.rtc is None and loaded.policy.config.rtc_config is None
    finally:
        blend.close()


# ---- the bookkeeping ------------------------------------------------------------------------------------
def test_guide_aligns_the_leftover_with_ticks_and_measures_the_delay():
    guide = RtcGuide(RtcSettings(execution_horizon=4, delay_window=2))
    assert guide.prepare(0) == {"inference_delay": 0, "prev_chunk_left_over": None}
    raw = np.arange(20, dtype=np.float32).reshape(10, 2)  # row i meant for tick 5 + i
    assert guide.merged(5, raw, last_executed_tick=7) == 3  # ticks 5, 6, 7 ran from the old chunk meanwhile
    np.testing.assert_array_equal(guide.leftover(8), raw[3:7])  # from tick 8 on, at most execution_horizon rows
    assert guide.leftover(15) is None  # nothing left of it
    assert guide.estimate() == 3
    guide.merged(8, raw, 13)
    assert guide.estimate() == 6
    guide.merged(14, raw, 14)
    guide.merged(15, raw, 15)
    assert guide.estimate() == 1  # the window forgot the slow inferences
    guide.reset()
    assert guide.leftover(16) is None and guide.estimate() == 1


# ---- the real policy in the inference thread ---------------------------------------------------------
class GatedPredict:
    """Wraps the runner's RTC predict: records what each inference got, and holds its result until the test has
    run the ticks it wants to pass meanwhile (an inference latency of exactly that many ticks)."""

    def __init__(self, runner):
        self.runner = runner
        self.release = threading.Event()
        self.calls: list[dict] = []

    def __call__(self, frame, task, **guidance):
        chunk, raw = self.runner.predict_chunk_rtc(frame, task, **guidance)
        self.calls.append({**guidance, "raw": raw, "chunk": chunk})
        assert self.release.wait(30)
        self.release.clear()
        return chunk, raw


def run_with_latencies(runner, latencies, settings):
    """Tick a real AsyncInference; the i-th inference takes latencies[i] ticks. Returns (predict, executed actions)."""
    predict = GatedPredict(runner)
    worker = AsyncInference(predict, CHUNK, AsyncInferenceConfig(threshold=0.5, rtc=settings))
    frames = random_frames(4)
    executed = {}
    try:
        tick, pending = 0, None
        for latency in latencies:
            while True:  # tick until the worker takes the next observation
                out = worker.tick(tick, frames[tick % 4], TASK)
                if out.action is not None:
                    executed[tick] = out.action
                tick += 1
                if out.submitted:
                    break
            pending = tick - 1
            while tick < pending + latency:  # the ticks that run from the old chunk while it infers
                out = worker.tick(tick, frames[tick % 4], TASK)
                if out.action is not None:
                    executed[tick] = out.action
                tick += 1
            predict.release.set()
            assert worker.wait_idle(60)
            assert worker.rtc.last_delay == latency
    finally:
        predict.release.set()
        worker.close()
    return predict, worker, executed


def test_rtc_chunks_start_from_the_leftover_and_the_delay_follows_the_latency(smolvla):
    loaded = load_policy(str(smolvla), "cpu")
    settings = RtcSettings(execution_horizon=8, delay_window=2)
    enable_rtc(loaded, settings)
    runner = PolicyRunner(loaded, seed=0)
    latencies = [3, 3, 6, 6, 2, 2, 2]
    predict, worker, _ = run_with_latencies(runner, latencies, settings)
    delays = [c["inference_delay"] for c in predict.calls]
    # estimate = max of the last two measured delays; the first inference has none
    assert delays == [0, 3, 3, 6, 6, 6, 2], delays
    assert predict.calls[0]["prev_chunk_left_over"] is None
    for call in predict.calls[1:]:
        left, d = call["prev_chunk_left_over"], call["inference_delay"]
        assert left is not None and len(left) == settings.execution_horizon
        gap = np.abs(call["raw"][:d] - left[:d]).max()
        assert gap <= PREFIX_TOL, (d, gap)
    # an unguided chunk (no leftover given) is far from the same leftover: the tolerance above means something
    last = predict.calls[-1]
    _, free = runner.predict_chunk_rtc(random_frames(1)[0], TASK)
    d = last["inference_delay"]
    assert np.abs(free[:d] - last["prev_chunk_left_over"][:d]).max() > 4 * PREFIX_TOL


def test_rtc_queue_switches_to_the_new_chunk_after_the_delay(smolvla):
    """What executes: the old chunk for the delayed ticks, then the new chunk from row `delay` on."""
    loaded = load_policy(str(smolvla), "cpu")
    settings = RtcSettings(execution_horizon=8)
    enable_rtc(loaded, settings)
    predict, worker, executed = run_with_latencies(PolicyRunner(loaded, seed=0), [4, 4], settings)
    first, second = predict.calls
    # first chunk submitted at tick 0, merged after 4 ticks: ticks 4.. from it
    s2 = CHUNK // 2  # submitted once at most half a chunk was left for the coming ticks (threshold 0.5)
    np.testing.assert_allclose(executed[s2 + 3], first["chunk"][s2 + 3])  # the last delayed tick: old chunk
    ticks, pending = worker.queue.pending()
    assert ticks[0] == s2 + 4
    np.testing.assert_allclose(pending[0], second["chunk"][4])  # then the new chunk's row `delay`


# ---- policy_node over real DDS -------------------------------------------------------------------------
@pytest.mark.slow
def test_policy_node_runs_rtc_and_reports_it(ros, tmp_path, smolvla):
    """The tiny SmolVLA in policy_node with chunking:=rtc, lockstep on /clock; each inference is held for three
    ticks: /diagnostics (published) shows the mode and the measured delay; an ACT node refuses rtc at start-up."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.parameter import Parameter

    from lerobot_ros.nodes.policy_node import PolicyNode
    from lerobot_ros.ros.entry import NodeStartupError
    from lerobot_ros.ros.qos import RELIABLE_QOS
    from lerobot_ros.ros.runtime import MessageCollector, wait_until
    from lerobot_ros.testing.policy_harness import PERIOD, T0, Harness, observations, write_contract

    path, prefix = write_contract(tmp_path)
    act = cached_policy_folder(tmp_path.parent / "policies_act", "act")
    with pytest.raises(NodeStartupError, match="chunking:=rtc needs a flow-matching policy") as err:
        PolicyNode(
            context=ros.context,
            parameter_overrides=[
                Parameter("policy.path", value=str(act)),
                Parameter("contract", value=str(path)),
                Parameter("policy.device", value="cpu"),
                Parameter("chunking", value="rtc"),
            ],
        )
    assert "\n" not in str(err.value)

    h = Harness(
        ros, path, prefix, smolvla, chunking="rtc", rtc_execution_horizon=8, task=TASK, diagnostics_period_s=0.2
    )
    worker = h.node.controller.worker
    gated = GatedPredict(h.node.controller.runner)
    worker.predict = gated
    submits, tick = [], worker.tick

    def counted(t, frame, task="", ages_ns=None):  # which ticks started an inference
        out = tick(t, frame, task, ages_ns)
        if out.submitted:
            submits.append(t)
        return out

    worker.tick = counted
    joints, images = observations(30, seed=3)
    statuses = []
    try:
        for k in range(len(joints)):
            t = T0 + k * PERIOD
            h.publish(t, joints[k], images[k])
            statuses.append(h.tick(t))
            if worker.busy and k - submits[-1] >= 2:  # held for 3 ticks
                gated.release.set()
                assert worker.wait_idle(60)
    finally:
        gated.release.set()
    assert [s["status"] for s in statuses[:3]] == ["dry"] * 3 and all(s["status"] == "ok" for s in statuses[3:])
    assert submits == [0, 10, 20] and [c["inference_delay"] for c in gated.calls] == [0, 3, 3]
    assert [k for k, s in enumerate(statuses) if s["new_chunk"]] == [3, 13, 23]  # ~/tick_info marks each hand-over
    for call in gated.calls[1:]:
        assert np.abs(call["raw"][:3] - call["prev_chunk_left_over"][:3]).max() <= PREFIX_TOL
    diags = MessageCollector(h.probe, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    mine = lambda: [s for m in diags.messages for s in m.status if s.hardware_id == h.node.get_fully_qualified_name()]  # noqa: E731
    wait_until(lambda: mine(), 10, what="/diagnostics from policy_node")
    values = {kv.key: kv.value for kv in mine()[-1].values}
    assert values["chunking"] == "rtc" and values["rtc_delay_ticks"] == "3" and values["rtc_last_delay_ticks"] == "3"
