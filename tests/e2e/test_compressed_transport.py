"""Compressed image transport end to end, over real DDS: the codec, image_republish_node (raw -> jpeg, lazy),
camera_node's live jpeg quality, the SO-101 twin publishing jpeg to a policy_node that runs a saved ACT on it
(slow), and a recorded compressed topic converted into a LeRobotDataset with the source frames (slow).

JPEG tolerance used here: a smooth 8-bit image at quality 90 decodes within a mean absolute error of 3
levels (of 255) of the original; after the dataset's AV1 video on top, within 12 (as tests/e2e/test_convert.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import cv2
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from sensor_msgs.msg import CompressedImage, Image, JointState
from std_msgs.msg import Float64MultiArray

from lerobot_ros.codecs import (
    CodecError,
    compressed_to_numpy,
    image_to_compressed,
    numpy_to_compressed,
    numpy_to_image,
    numpy_to_joint_state,
    time_to_ns,
)
from lerobot_ros.ros.entry import NodeStartupError
from lerobot_ros.ros.qos import RELIABLE_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until

JPEG_TOL = 3.0  # mean |decoded - original| at quality 90, smooth content
VIDEO_TOL = 12.0  # the same after LeRobot's AV1 video encoding


def smooth_frame(i: int, h: int = 120, w: int = 160) -> np.ndarray:
    """A frame whose content says which one it is: a gradient, a moving bar and a colour that changes."""
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([x * 255 // w, y * 255 // h, np.full_like(x, (37 * i) % 256)], axis=-1).astype(np.uint8)
    bar = (8 * i) % (w - 12)
    img[:, bar : bar + 12] = (255, 255 - 20 * (i % 10), 0)
    return img


def mae(a, b) -> float:
    return float(np.abs(np.asarray(a, dtype=np.int16) - np.asarray(b, dtype=np.int16)).mean())


# ---- codec -------------------------------------------------------------------------------------------
def test_image_to_compressed_keeps_the_header_and_the_encoding():
    rgb = smooth_frame(3)
    for encoding, pixels in (("rgb8", rgb), ("bgr8", rgb[..., ::-1]), ("mono8", rgb[..., 0])):
        msg = numpy_to_image(
            np.ascontiguousarray(pixels), encoding, stamp_ns=1_234_567_890_123, frame_id="cam_optical_frame"
        )
        out = image_to_compressed(msg, "jpeg", 90)
        assert out.format == f"{encoding}; jpeg compressed {'mono8' if encoding == 'mono8' else 'bgr8'}"
        assert time_to_ns(out.header.stamp) == 1_234_567_890_123 and out.header.frame_id == "cam_optical_frame"
        back = compressed_to_numpy(out, "mono8" if encoding == "mono8" else "rgb8")
        assert mae(back, rgb[..., 0] if encoding == "mono8" else rgb) < JPEG_TOL
    rgba = np.dstack([rgb, np.full(rgb.shape[:2], 255, np.uint8)])
    out = image_to_compressed(numpy_to_image(rgba, "rgba8"), "png")
    assert out.format == "rgb8; png compressed bgr8"
    np.testing.assert_array_equal(compressed_to_numpy(out), rgb)  # png: lossless, alpha dropped
    with pytest.raises(CodecError, match="cannot turn a '32FC1' image into RGB"):
        image_to_compressed(numpy_to_image(np.zeros((4, 4), np.float32), "32FC1"))


def test_an_opencv_older_than_4_10_decodes_to_the_same_rgb():
    """IMREAD_COLOR_RGB is OpenCV >= 4.10; apt's python3-opencv (Ubuntu 24.04) is older: the module must import
    there, decoding to BGR and converting, with the same pixels."""
    import types

    import cv2

    from lerobot_ros.codecs.compressed import decode_flags

    old = types.SimpleNamespace(**{k: getattr(cv2, k) for k in ("IMREAD_COLOR", "IMREAD_GRAYSCALE", "COLOR_BGR2RGB")})
    flags = decode_flags(old)
    assert flags["rgb8"] == (cv2.IMREAD_COLOR, cv2.COLOR_BGR2RGB) and flags["bgr8"] == (cv2.IMREAD_COLOR, None)
    rgb = np.random.default_rng(3).integers(0, 255, (24, 32, 3), dtype=np.uint8)
    data = np.frombuffer(numpy_to_compressed(rgb, "rgb8", "png").data, np.uint8)  # lossless: exact pixels
    via_bgr = cv2.cvtColor(cv2.imdecode(data, flags["rgb8"][0]), flags["rgb8"][1])
    np.testing.assert_array_equal(via_bgr, rgb)
    np.testing.assert_array_equal(via_bgr, cv2.imdecode(data, decode_flags(cv2)["rgb8"][0]))


def test_jpeg_quality_sets_the_size_and_broken_data_is_a_codec_error():
    rgb = smooth_frame(5, 480, 640)
    sizes = [len(numpy_to_compressed(rgb, "rgb8", "jpeg", q).data) for q in (30, 60, 90)]
    assert sizes[0] < sizes[1] < sizes[2] < rgb.nbytes / 10
    msg = numpy_to_compressed(rgb, "rgb8", "jpeg", 90)
    decoded = compressed_to_numpy(msg)
    assert decoded.shape == rgb.shape and decoded.flags.owndata and decoded.flags.c_contiguous
    np.testing.assert_array_equal(compressed_to_numpy(msg, "bgr8"), decoded[..., ::-1])
    broken = CompressedImage(format="rgb8; jpeg compressed bgr8", data=b"\xff\xd8 not a jpeg")
    with pytest.raises(CodecError, match=r"could not be decoded"):
        compressed_to_numpy(broken)


# ---- image_republish_node ------------------------------------------------------------------------------
def republisher(ros, **params):
    from lerobot_ros.nodes.image_republish_node import ImageRepublishNode

    overrides = [Parameter(k, value=v) for k, v in params.items()]
    return ros.add_node(ImageRepublishNode(context=ros.context, parameter_overrides=overrides))


def test_republish_is_lazy_keeps_stamps_and_takes_a_new_quality(ros):
    probe = ros.create_node("probe")
    raw_pub = probe.create_publisher(Image, "/rp/image_raw", RELIABLE_QOS)
    node = republisher(ros, in_topic="/rp/image_raw", qos="reliable", diagnostics_period_s=0.2)
    assert node.pub.topic_name == "/rp/image_raw/compressed"
    time.sleep(1.0)  # discovery has had time: still nobody reads the output, so the input is not subscribed
    assert not node.subscribed and raw_pub.get_subscription_count() == 0

    out = MessageCollector(probe, CompressedImage, "/rp/image_raw/compressed", RELIABLE_QOS)
    wait_until(lambda: node.subscribed and raw_pub.get_subscription_count() == 1, 20, what="lazy subscribe")
    frames = [smooth_frame(i) for i in range(5)]
    for i, frame in enumerate(frames):
        raw_pub.publish(numpy_to_image(frame, "rgb8", stamp_ns=(100 + i) * 10**9, frame_id="front_optical_frame"))
    got = out.wait_for(5, timeout=20)
    for i, msg in enumerate(got):
        assert time_to_ns(msg.header.stamp) == (100 + i) * 10**9 and msg.header.frame_id == "front_optical_frame"
        assert msg.format == "rgb8; jpeg compressed bgr8"
        assert mae(compressed_to_numpy(msg), frames[i]) < JPEG_TOL
    size_90 = np.mean([len(m.data) for m in got])

    assert node.set_parameters([Parameter("jpeg_quality", value=20)])[0].successful
    raw_pub.publish(numpy_to_image(frames[0], "rgb8", stamp_ns=200 * 10**9))
    assert len(out.wait_for(6, timeout=20)[5].data) < 0.6 * size_90
    assert not node.set_parameters([Parameter("jpeg_quality", value=0)])[0].successful  # out of [1, 100]
    values = node.values()
    assert values["published"] == "6" and int(values["bytes_per_frame"]) > 0

    probe.destroy_subscription(out.subscription)  # the last reader leaves: the input is dropped again
    wait_until(lambda: not node.subscribed and raw_pub.get_subscription_count() == 0, 20, what="lazy unsubscribe")


def test_republish_not_lazy_and_bad_settings(ros):
    probe = ros.create_node("probe")
    raw_pub = probe.create_publisher(Image, "/eager/image_raw", RELIABLE_QOS)
    node = republisher(ros, in_topic="/eager/image_raw", out_topic="/eager/jpeg", lazy=False, qos="reliable")
    wait_until(lambda: raw_pub.get_subscription_count() == 1, 20, what="eager subscription")
    assert node.subscribed and node.pub.topic_name == "/eager/jpeg"
    with pytest.raises(NodeStartupError, match="out_topic and in_topic are both '/x'"):
        republisher(ros, in_topic="/x", out_topic="/x")
    with pytest.raises(NodeStartupError, match="unknown QoS profile 'fast'"):
        republisher(ros, qos="fast")


# ---- camera_node: compressed only while subscribed, quality at run time ----------------------------------
def test_camera_node_jpeg_only_while_subscribed_and_quality_live(ros, tmp_path):
    from lerobot_ros.nodes.camera_node import CameraNode

    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (160, 120))
    for i in range(10):
        writer.write(cv2.cvtColor(smooth_frame(i), cv2.COLOR_RGB2BGR))
    writer.release()
    params = dict(source=str(path), camera_name="jc", fps=30.0, loop=True, qos="reliable", jpeg_quality=95)
    node = ros.add_node(
        CameraNode(context=ros.context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    )
    try:
        wait_until(lambda: node.published >= 10, 30, what="frames captured")
        assert node.topics.sent == {"raw": 0, "compressed": 0}  # no subscriber: nothing converted or encoded
        probe = ros.create_node("probe")
        jpeg = MessageCollector(probe, CompressedImage, "/jc/image_raw/compressed", RELIABLE_QOS)
        first = jpeg.wait_for(3, timeout=30)
        assert node.topics.sent["raw"] == 0
        assert node.set_parameters([Parameter("jpeg_quality", value=10)])[0].successful
        n = len(jpeg.messages)
        jpeg.wait_for(n + 3, timeout=30)
        assert len(jpeg.messages[-1].data) < 0.5 * min(len(m.data) for m in first)
        assert node.topics.values()["jpeg_bytes_per_frame"] != ""
    finally:
        node.close()


# ---- the SO-101 twin publishes jpeg, policy_node acts on it (slow: a simulator) ------------------------------
def compressed_so101_contract(tmp_path, ns: str, h: int, w: int):
    """The shipped so101_sim contract moved to `ns`, its camera read from `front/image_raw/compressed`."""
    import yaml

    from lerobot_ros.contract import load_contract
    from lerobot_ros.eval.node_process import namespaced_contract

    data = namespaced_contract(load_contract("so101_sim").raw, ns, (h, w))
    cam = data["features"]["observation.images.front"]
    cam["type"], cam["topic"] = "sensor_msgs/msg/CompressedImage", f"{ns}/front/image_raw/compressed"
    path = tmp_path / "so101_compressed.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.slow
def test_twin_publishes_jpeg_and_policy_node_acts_on_it(ros, tmp_path):
    from lerobot_ros.nodes.policy_node import PolicyNode
    from lerobot_ros.nodes.sim_bridge_node import SimBridgeNode
    from lerobot_ros.testing.policies import cached_policy_folder
    from lerobot_ros_msgs.srv import ResetEpisode

    h, w, ns = 48, 64, "/cz"
    policy_dir = cached_policy_folder(tmp_path / "policies", "act", cameras={"front": (h, w)})
    contract = compressed_so101_contract(tmp_path, ns, h, w)
    bridge_params = {
        "env.type": "so101",
        "env.observation_width": w,
        "env.observation_height": h,
        "antialias": False,
        "reset_on_start": False,
        "jpeg_quality": 80,
    }
    bridge = SimBridgeNode(
        context=ros.context,
        namespace=ns,
        parameter_overrides=[
            Parameter("cameras", Parameter.Type.STRING_ARRAY, ["front"]),
            *[Parameter(k, value=v) for k, v in bridge_params.items()],
        ],
    )
    ros.add_node(bridge)
    policy = ros.add_node(
        PolicyNode(
            context=ros.context,
            parameter_overrides=[
                Parameter(k, value=v)
                for k, v in {
                    "use_sim_time": True,
                    "policy.path": str(policy_dir),
                    "contract": str(contract),
                    "policy.device": "cpu",
                    "seed": 0,
                    "tick_on": "observation.images.front",
                    "diagnostics_period_s": 0.5,
                }.items()
            ],
        )
    )
    try:
        probe = ros.create_node("probe")
        commands = MessageCollector(probe, Float64MultiArray, f"{ns}/commands", RELIABLE_QOS)
        diags = MessageCollector(probe, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        jpeg_pub = bridge.cameras["front"].compressed_pub
        wait_until(
            lambda: jpeg_pub.get_subscription_count() >= 1 and policy.action_pub.get_subscription_count() >= 1,
            30,
            what="policy_node and bridge matched",
        )
        client = probe.create_client(ResetEpisode, f"{ns}/reset_episode")
        assert client.wait_for_service(timeout_sec=20)
        future = client.call_async(ResetEpisode.Request(seed=0))
        wait_until(future.done, 120, what="reset")
        assert future.result().success
        # lockstep closed loop: jpeg frame -> policy tick -> commands -> one twin step -> the next jpeg frame
        wait_until(lambda: bridge.bridge.runner.total_steps >= 20, 240, what="20 twin steps driven by the policy")
        # the probe is a second reader of the same commands: its copy of the 20th may land after the bridge's
        wait_until(lambda: len(commands.messages) >= 20, 10, what="the probe's copy of the 20 commands")
        actions = np.array([m.data for m in commands.messages[:20]])
        assert actions.shape == (20, 6) and np.all(np.isfinite(actions))
        assert np.ptp(actions, axis=0).max() > 0  # the policy's actions, not a held constant
        cam = bridge.cameras["front"]
        assert cam.sent["compressed"] >= 20 and cam.sent["raw"] == 0  # the raw topic had no reader: never built
        assert policy.loop.decode_ms["observation.images.front"].count >= 20
        assert policy.loop.rejected["observation.images.front"] == 0

        def decode_report():
            for m in diags.messages:
                for s in m.status:
                    values = {kv.key: kv.value for kv in s.values}
                    if s.name.endswith(": policy") and values.get("decode_ms_p50.observation.images.front"):
                        return values
            return None

        wait_until(lambda: decode_report() is not None, 20, what="decode_ms on /diagnostics")
        values = decode_report()
        assert float(values["decode_ms_p50.observation.images.front"]) > 0 and values["inference_ms_p50"]
    finally:
        policy.close()
        bridge.close()


# ---- recorder + converter on a compressed topic (slow: processes, video encoding) ----------------------------
RECORD_CONTRACT = """
robot_type: test_cam
fps: 15
task: "watch the bar"
features:
  action:
    topic: /rc/commands
    type: std_msgs/msg/Float64MultiArray
    qos: reliable
    names: [a0, a1]
    timeline: receive
  observation.state:
    topic: /rc/joint_states
    type: sensor_msgs/msg/JointState
    qos: reliable
    joints: [j0, j1]
    timeline: receive
  observation.images.front:
    topic: /rc/front/image_raw/compressed
    type: sensor_msgs/msg/CompressedImage
    qos: reliable
    shape: [120, 160, 3]
    timeline: receive
    alignment: {policy: nearest, tolerance_ms: 100}
"""


@pytest.mark.slow
def test_recorded_compressed_topic_converts_to_the_source_frames(ros, ros_env, tmp_path):
    import pyarrow.parquet as pq
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    from lerobot_ros.nodes.camera_node import CameraNode

    n_src = 24
    sources = [smooth_frame(i) for i in range(n_src)]
    video = tmp_path / "bars.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (160, 120))
    for frame in sources:
        writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
    writer.release()
    cap = cv2.VideoCapture(str(video))  # the frames as the camera reads them (the MJPG file is lossy too)
    sources = [cv2.cvtColor(cap.read()[1], cv2.COLOR_BGR2RGB) for _ in range(n_src)]
    cap.release()

    contract = tmp_path / "cam.yaml"
    contract.write_text(RECORD_CONTRACT)
    camera = ros.add_node(
        CameraNode(
            context=ros.context,
            namespace="/rc",
            parameter_overrides=[
                Parameter(k, value=v)
                for k, v in dict(
                    source=str(video), camera_name="front", fps=15.0, loop=True, qos="reliable", jpeg_quality=90
                ).items()
            ],
        )
    )
    probe = ros.create_node("probe")
    js = probe.create_publisher(JointState, "/rc/joint_states", RELIABLE_QOS)
    cmd = probe.create_publisher(Float64MultiArray, "/rc/commands", RELIABLE_QOS)
    k = iter(range(10**9))

    def tick():
        i = next(k)
        js.publish(numpy_to_joint_state(["j0", "j1"], position=np.array([0.01 * i, -0.01 * i])))
        cmd.publish(Float64MultiArray(data=[0.02 * i, 0.0]))

    probe.create_timer(1 / 30, tick)
    out, dataset = tmp_path / "bags", tmp_path / "dataset"
    try:
        rec = subprocess.run(
            [
                sys.executable,
                "-m",
                "lerobot_ros.cli.main",
                "record",
                "--contract",
                str(contract),
                "--output_dir",
                str(out),
                "--dataset.episode_time_s",
                "3.0",
                "--dataset.num_episodes",
                "1",
            ],
            env=ros_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert rec.returncode == 0, rec.stdout[-2000:] + rec.stderr[-2000:]
    finally:
        camera.close()
    bag = out / "episode_000000"
    ts = get_typestore(Stores.ROS2_KILTED)
    with Reader(bag) as reader:
        conns = [c for c in reader.connections if c.topic == "/rc/front/image_raw/compressed"]
        assert conns and conns[0].msgtype == "sensor_msgs/msg/CompressedImage"
        stored = [ts.deserialize_cdr(raw, conns[0].msgtype) for _, _, raw in reader.messages(conns)]
    assert len(stored) >= 20
    for msg in stored:  # in the bag: the camera's frames, jpeg as published (within JPEG tolerance)
        assert msg.format == "rgb8; jpeg compressed bgr8"
        assert min(mae(compressed_to_numpy(msg), s) for s in sources) < JPEG_TOL

    conv = subprocess.run(
        [
            sys.executable,
            "-m",
            "lerobot_ros.cli.main",
            "convert",
            str(bag),
            "--contract",
            str(contract),
            "--dataset.root",
            str(dataset),
            "--progress=false",
        ],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert conv.returncode == 0, conv.stdout[-2000:] + conv.stderr[-2000:]
    info = json.loads((dataset / "meta" / "info.json").read_text())
    assert info["features"]["observation.images.front"]["shape"] == [120, 160, 3]
    ds = LeRobotDataset("local/dataset", root=dataset)
    assert len(ds) == info["total_frames"] >= 30
    matched = []
    for i in range(len(ds)):
        img = (ds[i]["observation.images.front"].numpy().transpose(1, 2, 0) * 255).round().astype(np.uint8)
        errors = sorted((mae(img, s), j) for j, s in enumerate(sources))
        assert errors[0][0] < VIDEO_TOL, (i, errors[:2])  # one of the camera's frames, within JPEG + video tolerance
        assert errors[1][0] > errors[0][0] + 5, (i, errors[:2])  # and clearly that one
        matched.append(errors[0][1])
    assert len(set(matched)) >= n_src // 2  # the frames move on along the episode (not one frame held)
    assert pq.read_table(next((dataset / "data").rglob("*.parquet"))).num_rows == len(ds)


# ---- lerobot-ros eval with a compressed contract (slow: Meta-World, processes) --------------------------------
@pytest.mark.slow
def test_eval_runs_the_policy_on_the_bridges_jpeg(tmp_path):
    """`lerobot-ros eval --contract` whose camera is a CompressedImage: the policy node reads the bridge's
    `corner2/image_raw/compressed` and the episode runs its steps (pixels differ from raw by the JPEG loss, so
    this is not the bit-for-bit parity of test_eval_parity.py)."""
    import yaml

    from lerobot_ros.contract import load_contract
    from lerobot_ros.contract.loader import resolve
    from lerobot_ros.eval.evaluation import EvalConfig, Evaluation
    from lerobot_ros.testing.policies import metaworld_act

    data = yaml.safe_load(resolve("metaworld").read_text())
    data["features"]["observation.image"]["type"] = "sensor_msgs/msg/CompressedImage"
    contract = tmp_path / "metaworld_jpeg.yaml"
    contract.write_text(yaml.safe_dump(data, sort_keys=False))
    policy = metaworld_act(tmp_path / "act", 32)
    cfg = EvalConfig(
        task="push-v3",
        policy_path=str(policy),
        contract=str(contract),
        n_episodes=1,
        start_seed=1000,
        workers=1,
        max_episode_steps=12,
        videos=0,
        output_dir=tmp_path / "ros",
        quiet=True,
    )
    info = Evaluation(cfg).run()
    assert [e["n_steps"] for e in info["lerobot_ros"]["episodes"]] == [12]
    used = [load_contract(str(p)) for p in (tmp_path / "ros" / "contracts").glob("*.yaml")]
    assert used and all(c.features["observation.image"].topic.endswith("/corner2/image_raw/compressed") for c in used)
