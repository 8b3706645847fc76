"""A tiny SmolVLA (lerobot_ros.testing.vla, random weights, local tokenizer) in policy_node: the task sentence from the
parameter, the contract or the task topic reaches its tokenizer step; a new task conditions the next chunk; the bad
inputs of a VLA (no task, a task over the tokenizer's limit, an extra not installed, another image size, a
policy that raises) each give one clear outcome."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch
from diagnostic_msgs.msg import DiagnosticArray
from std_msgs.msg import String

from lerobot_ros.codecs import float64_multi_array_to_numpy, numpy_to_image
from lerobot_ros.contract import load_contract
from lerobot_ros.policy import PolicyLoadError, load_policy
from lerobot_ros.policy.build import build_tick_loop, load_checked
from lerobot_ros.policy.config import PolicyNodeConfig as PolicyParams
from lerobot_ros.policy.language import TASK_SOURCES
from lerobot_ros.ros.qos import LATCHED_QOS, RELIABLE_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until
from lerobot_ros.testing.policies import SO101_JOINTS, cached_policy_folder, random_frames
from lerobot_ros.testing.policy_harness import PERIOD, T0, Harness, observations, write_contract

pytest.importorskip("transformers")

CHUNK = 10
PUSH, DRAWER = "push the puck to the goal", "reach the red target"
LONG = "pick up the cube and place it in the bowl then open the top drawer of the cabinet and push the puck to the goal"


@pytest.fixture(scope="module")
def smolvla(tmp_path_factory):
    """The tiny SmolVLA on the SO-101 test layout (state 6, one 48x64 camera `front`, chunk 10)."""
    return cached_policy_folder(
        tmp_path_factory.getbasetemp() / "policies", "smolvla", chunk_size=CHUNK, n_action_steps=CHUNK
    )


def contract_with(tmp_path, task_line: str, h=48, w=64):
    """The test contract with its `task:` entry replaced ('' drops it); returns (path, topic prefix)."""
    path, prefix = write_contract(tmp_path, h=h, w=w)
    text = path.read_text().replace('task: {default: "pick the cube"}\n', task_line.format(p=prefix))
    path.write_text(text)
    return path, prefix


class TokenizerSpy:
    """Records the task texts that reach the policy's tokenizer step (its call goes through unchanged)."""

    def __init__(self, preprocessor):
        from lerobot_ros.policy.language import tokenizer_step

        self.step, self.texts = tokenizer_step(preprocessor), []
        original = self.step._tokenize_text

        def spy(text):
            self.texts.append(list(text) if isinstance(text, list) else [text])
            return original(text)

        self.step._tokenize_text = spy


# ---- where the task comes from ------------------------------------------------------------------------------
def test_a_vla_with_no_task_is_one_startup_error(tmp_path, smolvla):
    path, _ = contract_with(tmp_path, "")
    with pytest.raises(ValueError) as err:
        load_checked(PolicyParams(policy_path=str(smolvla), contract=str(path), policy_device="cpu"))
    text = str(err.value)
    assert "\n" not in text and text.startswith(
        "this smolvla policy is conditioned on a task sentence and none is given"
    )
    for way in ("-p task:=", "task: {default: ...}", "task: {topic: ...}", "sim bridges"):
        assert way in text, way
    assert all(source in text for source in TASK_SOURCES)
    # the same contract with any one of the three is accepted
    load_checked(PolicyParams(policy_path=str(smolvla), contract=str(path), policy_device="cpu", task=PUSH))
    for line in (f'task: {{{{default: "{PUSH}"}}}}\n', "task: {{topic: /{p}/task}}\n"):
        other, _ = contract_with(tmp_path, line)
        load_checked(PolicyParams(policy_path=str(smolvla), contract=str(other), policy_device="cpu"))


def test_an_act_policy_needs_no_task(tmp_path):
    act = cached_policy_folder(tmp_path / "policies", "act")
    path, _ = contract_with(tmp_path, "")
    contract, loaded = load_checked(PolicyParams(policy_path=str(act), contract=str(path), policy_device="cpu"))
    loop = build_tick_loop(loaded, contract, PolicyParams(policy_path=str(act), policy_device="cpu"), "commands")
    assert not loop.needs_task and loop.task_source == "none"


@pytest.mark.slow
def test_task_topic_reaches_the_tokenizer_and_a_new_task_applies_from_the_next_chunk(ros, tmp_path, smolvla):
    """The task on the contract's (latched) task topic conditions the policy as LeRobot's predict_action does;
    ticks wait until one is known; a new one mid-chunk changes nothing until the policy predicts its next chunk;
    /diagnostics says the current task, where it came from, and the prompt of the executing chunk."""
    path, prefix = contract_with(tmp_path, "task: {{topic: /{p}/task}}\n")
    joints, images = observations(2 * CHUNK + 2, seed=4)
    h = Harness(ros, path, prefix, smolvla)
    spy = TokenizerSpy(h.node.loop.controller.runner.loaded.preprocessor)
    task_pub = h.probe.create_publisher(String, f"/{prefix}/task", LATCHED_QOS)
    diagnostics = MessageCollector(h.probe, DiagnosticArray, "/diagnostics", RELIABLE_QOS)

    h.publish(T0, joints[0], images[0])
    info = h.tick(T0)
    assert info["status"] == "gated" and f"waiting for a task on /{prefix}/task" in info["reason"]
    assert not h.actions.messages and spy.texts == []  # nothing ran on an empty sentence

    task_pub.publish(String(data=PUSH))
    wait_until(lambda: h.node.loop.task == PUSH, 10, what="the task at the node")
    infos = []
    for k in range(1, 2 * CHUNK + 2):
        t = T0 + k * PERIOD
        if k == 4:  # mid-chunk: the executing chunk runs out as predicted, the next one reads the new task
            task_pub.publish(String(data=DRAWER))
            wait_until(lambda: h.node.loop.task == DRAWER, 10, what="the new task at the node")
            values = h.node.diagnostic_values()
            assert (values["task"], values["task_source"]) == (DRAWER, f"topic /{prefix}/task")
            assert values["chunk_task"] == PUSH + "\n"  # SmolVLA's newline step, then its tokenizer
        h.publish(t, joints[k], images[k])
        infos.append(h.tick(t))
    assert [i["status"] for i in infos] == ["ok"] * len(infos)
    chunks = {i["tick"]: i["chunk_task"] for i in infos if i["chunk_task"] is not None}
    assert chunks == {1: PUSH + "\n", 1 + CHUNK: DRAWER + "\n", 1 + 2 * CHUNK: DRAWER + "\n"}

    # what reached the tokenizer on the chunk ticks is what LeRobot's predict_action gives it for these tasks
    first = spy.texts[0]
    assert first == [PUSH + "\n"]
    got = np.stack([float64_multi_array_to_numpy(m) for m in h.actions.wait_for(len(infos))])
    expected = direct(path, smolvla, joints[1:], images[1:], [PUSH] * 3 + [DRAWER] * (len(infos) - 3))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)

    status = wait_status(diagnostics, lambda v: v.get("chunk_task") == DRAWER + "\n")
    assert (status["task"], status["task_source"]) == (DRAWER, f"topic /{prefix}/task")


def wait_status(collector, predicate, timeout=10.0) -> dict:
    def found():
        for msg in collector.messages:
            for s in msg.status:
                values = {kv.key: kv.value for kv in s.values}
                if s.name.endswith(": policy") and predicate(values):
                    return values
        return None

    wait_until(lambda: found() is not None, timeout, what="a matching /diagnostics status")
    return found()


def direct(contract_path, policy_dir, joints, images, tasks, seed=0):
    """lerobot-record's predict_action on the contract-decoded frames, one task per step (the node's first tick
    of this sequence starts right after ~/reset seeding, as here)."""
    from lerobot.common.control_utils import predict_action

    from lerobot_ros.codecs import numpy_to_joint_state

    contract = load_contract(str(contract_path))
    lp = load_policy(str(policy_dir), "cpu")
    lp.policy.reset()
    torch.manual_seed(seed)
    state_f, image_f = contract.features["observation.state"], contract.features["observation.images.front"]
    out = []
    for j, im, task in zip(joints, images, tasks):
        frame = {
            "observation.state": state_f.decode(numpy_to_joint_state(SO101_JOINTS, position=j, stamp_ns=T0)),
            "observation.images.front": image_f.decode(numpy_to_image(im, "rgb8", T0)),
        }
        action = predict_action(
            frame, lp.policy, torch.device("cpu"), lp.preprocessor, lp.postprocessor, False, task, contract.robot_type
        )
        out.append(action.numpy().reshape(-1))
    return contract.action_feature.to_ros(np.stack(out))


def test_parameter_and_contract_default_are_task_sources(tmp_path, smolvla):
    path, _ = contract_with(tmp_path, f'task: {{{{default: "{PUSH}"}}}}\n')
    contract, loaded = load_checked(PolicyParams(policy_path=str(smolvla), contract=str(path), policy_device="cpu"))
    p = PolicyParams(policy_path=str(smolvla), policy_device="cpu", task=DRAWER)
    loop = build_tick_loop(loaded, contract, p, "commands")
    assert (loop.task, loop.task_source) == (DRAWER, "parameter")
    loop.reconfigure(PolicyParams(policy_path=str(smolvla), policy_device="cpu", task=""), {"task": ""})
    assert (loop.task, loop.task_source) == (PUSH, "contract default")
    assert loop.diagnostic_values(0, 0.0)["task"] == PUSH


# ---- bad input --------------------------------------------------------------------------------------------------
def test_a_task_over_the_tokenizer_limit_is_truncated_with_one_warning(tmp_path, smolvla, caplog):
    """LeRobot's TokenizerProcessorStep truncates at tokenizer_max_length (16 here); the node warns once per task."""
    path, _ = contract_with(tmp_path, "task: {{topic: /{p}/task}}\n")
    contract, loaded = load_checked(PolicyParams(policy_path=str(smolvla), contract=str(path), policy_device="cpu"))
    warnings = []
    loop = build_tick_loop(
        loaded,
        contract,
        PolicyParams(policy_path=str(smolvla), policy_device="cpu", task=LONG),
        "commands",
        on_warning=warnings.append,
    )
    runner = loop.controller.runner
    frames = random_frames(3 * CHUNK)
    for _k, frame in enumerate(frames):
        runner.select_action(frame, LONG)
    assert runner.chunks == 3 and len(warnings) == 1
    n = runner.language.token_count(LONG + "\n")
    assert n > 16
    assert warnings[0].startswith(
        f"task {LONG!r} is {n} tokens for this smolvla's tokenizer, more than its "
        "tokenizer_max_length 16: LeRobot truncates it"
    )
    # the tokens the policy got are LeRobot's truncation of the sentence: its first 16 tokens
    batch = {
        "observation.state": torch.zeros(1, 6),
        "observation.images.front": torch.zeros(1, 3, 48, 64),
        "task": LONG,
    }
    tokens = loaded.preprocessor(batch)["observation.language.tokens"][0].tolist()
    full = runner.language.step.input_tokenizer(LONG + "\n", truncation=False, padding=False)["input_ids"]
    assert tokens == full[:16]
    runner.select_action(frames[0], PUSH)  # a short task warns nothing
    assert len(warnings) == 1


def test_a_policy_type_whose_extra_is_missing_is_one_line_with_the_install_command(tmp_path):
    """wall_x needs `peft` (LeRobot's `wallx` extra), which the project does not install."""
    if importlib.util.find_spec("peft") is not None:
        pytest.skip("peft is installed here: wall_x's extra is not missing")
    from lerobot.configs.types import FeatureType, PolicyFeature
    from lerobot.policies.factory import make_policy_config

    cfg = make_policy_config(
        "wall_x",
        device="cpu",
        input_features={"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(4,))},
        output_features={"action": PolicyFeature(type=FeatureType.ACTION, shape=(4,))},
    )
    cfg._save_pretrained(tmp_path)
    with pytest.raises(PolicyLoadError) as err:
        load_policy(str(tmp_path), "cpu")
    assert str(err.value) == (
        "the wall_x policy needs LeRobot's 'wallx' extra ('peft' is not installed): pip install 'lerobot[wallx]==0.6.1'"
    )


def test_camera_images_of_another_size_are_resized_as_smolvla_does(tmp_path, smolvla):
    """SmolVLA pads and resizes every image to its VLM's size inside the model: a 96x128 camera is accepted for a
    policy trained at 48x64 and acts as LeRobot's predict_action does on the same frames; ACT is refused with both
    shapes named (tests/integration/test_policy_node.py), and a camera off the contract's shape is rejected naming both."""
    path, _ = contract_with(tmp_path, f'task: {{{{default: "{PUSH}"}}}}\n', h=96, w=128)
    contract, loaded = load_checked(PolicyParams(policy_path=str(smolvla), contract=str(path), policy_device="cpu"))
    loop = build_tick_loop(
        loaded, contract, PolicyParams(policy_path=str(smolvla), policy_device="cpu", seed=0), "commands"
    )
    loop.controller.runner.reset()
    frame = random_frames(1, cameras={"front": (96, 128)})[0]
    action, chunk = loop.controller.runner.select_action(frame, PUSH)
    assert chunk.shape == (CHUNK, 6) and np.isfinite(chunk).all()
    from lerobot.common.control_utils import predict_action

    ref = load_policy(str(smolvla), "cpu")
    ref.policy.reset()
    torch.manual_seed(0)
    expected = predict_action(
        dict(frame),
        ref.policy,
        torch.device("cpu"),
        ref.preprocessor,
        ref.postprocessor,
        False,
        PUSH,
        contract.robot_type,
    )
    np.testing.assert_allclose(action, expected.numpy().reshape(-1), atol=1e-5)
    image = contract.features["observation.images.front"]
    with pytest.raises(Exception, match="image is 48x64, the contract expects 96x128"):
        image.decode(numpy_to_image(np.zeros((48, 64, 3), np.uint8), "rgb8", 0))


def test_an_exception_inside_inference_publishes_nothing_and_the_node_lives_on(ros, tmp_path, smolvla):
    """Fault injection (the one stand-in here): the model's sampling raises once. That tick publishes no action,
    /diagnostics says why (level ERROR, the exception), and the next tick acts again."""
    path, prefix = contract_with(tmp_path, f'task: {{{{default: "{PUSH}"}}}}\n')
    joints, images = observations(3, seed=2)
    h = Harness(ros, path, prefix, smolvla)
    model = h.node.loop.controller.runner.policy.model
    original, calls = model.sample_actions, []

    def fails_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("CUDA error: out of memory (injected)")
        return original(*args, **kwargs)

    model.sample_actions = fails_once
    h.publish(T0, joints[0], images[0])
    info = h.tick(T0)
    assert info["status"] == "error" and not info["published"]
    assert "RuntimeError: CUDA error: out of memory (injected)" in info["reason"]
    assert "out of memory (injected)" in h.node.loop.status()[1]
    values = h.node.diagnostic_values()
    assert (
        values["policy_errors"] == "1" and values["last_error"] == "RuntimeError: CUDA error: out of memory (injected)"
    )
    for k in (1, 2):
        h.publish(T0 + k * PERIOD, joints[k], images[k])
        assert h.tick(T0 + k * PERIOD)["status"] == "ok"
    assert h.node.loop.status() == (2, "policy raised: RuntimeError: CUDA error: out of memory (injected)")
    assert len(h.actions.wait_for(2)) == 2
    with pytest.raises(TimeoutError):
        h.actions.wait_for(3, timeout=0.5)  # the failed tick published nothing
