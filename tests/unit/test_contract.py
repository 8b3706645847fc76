"""Contract: shipped files, LeRobot feature parity with lerobot-record, unit transforms, decode/encode,
and validation errors that name the offending key."""

from __future__ import annotations

import copy
import pathlib

import numpy as np
import pytest
import yaml

from lerobot_ros.codecs import (
    chunk_to_joint_trajectory,
    numpy_to_compressed,
    numpy_to_float64_multi_array,
    numpy_to_image,
    numpy_to_joint_state,
)
from lerobot_ros.contract import ContractError, load_contract, parse_contract, shipped_contracts

SHIPPED = ["so101", "so101_sim", "koch", "metaworld", "libero", "bi_so101", "lekiwi"]
ARM = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


def lerobot_record_features(robot) -> dict:
    """The dataset features lerobot-record builds for `robot` (its default processors, videos on)."""
    from lerobot.datasets.pipeline_features import aggregate_pipeline_dataset_features, create_initial_features
    from lerobot.processor import make_default_processors
    from lerobot.utils.feature_utils import combine_feature_dicts

    teleop_proc, _robot_proc, obs_proc = make_default_processors()
    return combine_feature_dicts(
        aggregate_pipeline_dataset_features(
            teleop_proc, create_initial_features(action=robot.action_features), use_videos=True
        ),
        aggregate_pipeline_dataset_features(
            obs_proc, create_initial_features(observation=robot.observation_features), use_videos=True
        ),
    )


def test_shipped_contracts_load():
    assert set(SHIPPED) <= set(shipped_contracts())
    for name in SHIPPED:
        c = load_contract(name)
        assert c.action_feature.name == "action"
        assert "observation.state" in c.observation_features
        assert list(c.features)[0] == "action"


def test_so101_matches_lerobot_record(tmp_path):
    """Same features dict as lerobot-record builds for so101_follower (its own pipeline code)."""
    from lerobot.cameras.opencv import OpenCVCameraConfig
    from lerobot.robots.so_follower import SO101FollowerConfig, SOFollower

    robot = SOFollower(
        SO101FollowerConfig(
            port="/dev/null",
            calibration_dir=tmp_path,
            cameras={"front": OpenCVCameraConfig(index_or_path=0, width=640, height=480, fps=30)},
        )
    )
    expected = lerobot_record_features(robot)
    for name in ("so101", "so101_sim"):
        ours = load_contract(name).lerobot_features()
        assert ours == expected
        assert list(ours) == list(expected)


def test_bi_so101_matches_lerobot_record_for_bi_so_follower(tmp_path):
    """The pair's features as lerobot-record builds them for bi_so_follower with a top-level front camera: names
    prefixed left_/right_ in that order, the camera unprefixed; the units of each half are so101's."""
    from lerobot.cameras.opencv import OpenCVCameraConfig
    from lerobot.robots.bi_so_follower import BiSOFollower, BiSOFollowerConfig
    from lerobot.robots.so_follower import SOFollowerConfig

    robot = BiSOFollower(
        BiSOFollowerConfig(
            left_arm_config=SOFollowerConfig(port="/dev/null"),
            right_arm_config=SOFollowerConfig(port="/dev/null"),
            calibration_dir=tmp_path,
            cameras={"front": OpenCVCameraConfig(index_or_path=0, width=640, height=480, fps=30)},
        )
    )
    expected = lerobot_record_features(robot)
    pair = load_contract("bi_so101")
    assert pair.robot_type == BiSOFollower.name
    ours = pair.lerobot_features()
    assert ours == expected and list(ours) == list(expected)
    single = load_contract("so101").features["observation.state"]
    rad = np.array([0.1, -0.5, 1.0, 0.0, 2.0, 0.3, -0.2, 0.4, -1.0, 0.5, -2.0, -0.3])
    both = pair.features["observation.state"].to_lerobot(rad)
    np.testing.assert_array_equal(both, np.concatenate([single.to_lerobot(rad[:6]), single.to_lerobot(rad[6:])]))


def test_lekiwi_matches_lerobot_record_for_lekiwi(tmp_path):
    """LeKiwi with LeRobot's default cameras (front 640x480, wrist 480x640): the arm's arm_<motor>.pos, then
    x.vel, y.vel, theta.vel; the yaw rate from ROS's rad/s to LeRobot's deg/s."""
    from lerobot.robots.lekiwi import LeKiwi, LeKiwiConfig

    robot = LeKiwi(LeKiwiConfig(port="/dev/null", calibration_dir=tmp_path))
    expected = lerobot_record_features(robot)
    kiwi = load_contract("lekiwi")
    assert kiwi.robot_type == LeKiwi.name
    ours = kiwi.lerobot_features()
    assert ours == expected and list(ours) == list(expected)
    state = kiwi.features["observation.state"].to_lerobot(np.array([0.1, 0, 0, 0, 0, 0, 0.2, -0.1, np.pi / 2]))
    arm = load_contract("so101").features["observation.state"].to_lerobot(np.array([0.1, 0, 0, 0, 0, 0]))
    np.testing.assert_allclose(state, [*arm, 0.2, -0.1, 90.0])


def test_so101_real_and_sim_have_identical_features_and_units():
    real, sim = load_contract("so101"), load_contract("so101_sim")
    assert real.lerobot_features() == sim.lerobot_features()
    assert real.fps == sim.fps
    rad = np.array([0.1, -0.5, 1.0, 0.0, 2.0, 0.3])
    for name in ("observation.state", "action"):
        a, b = real.features[name], sim.features[name]
        np.testing.assert_array_equal(a.to_lerobot(rad), b.to_lerobot(rad))


def test_so101_units_degrees_and_gripper_range():
    c = load_contract("so101")
    state = c.features["observation.state"]
    half = 0.9599310885968813
    msg = numpy_to_joint_state(ARM[::-1], position=[0.5, np.pi, -np.pi / 4, 0.0, np.pi / 2, -half][::-1], stamp_ns=5)
    out = state.decode(msg)  # the message lists joints in reverse: selection is by name
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [0.5 * 180 / np.pi, 180.0, -45.0, 0.0, 90.0, 0.0], rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(state.to_lerobot([0, 0, 0, 0, 0, half]), [0, 0, 0, 0, 0, 100.0], atol=1e-5)
    np.testing.assert_allclose(state.to_lerobot([0, 0, 0, 0, 0, 0.0]), [0, 0, 0, 0, 0, 50.0], atol=1e-5)
    assert state.stamp_ns(msg, receive_ns=999) == 5


def test_koch_units_ranges():
    f = load_contract("koch").features["observation.state"]
    np.testing.assert_allclose(
        f.to_lerobot([np.pi / 2, -np.pi / 2, 0.0, np.pi / 4, 0.0, np.pi / 4]), [100, -100, 0, 50, 0, 100], atol=1e-4
    )


def test_action_encode_decode_roundtrip_float64_array():
    f = load_contract("so101").action_feature
    values = np.array([10.0, -20.5, 33.0, 0.0, 90.0, 75.0], dtype=np.float32)
    msg = f.encode(values, stamp_ns=123)
    assert type(msg).__name__ == "Float64MultiArray"
    np.testing.assert_allclose(np.asarray(msg.data)[:5], np.deg2rad(values[:5]), rtol=1e-6)
    np.testing.assert_allclose(f.decode(msg), values, rtol=1e-6, atol=1e-5)
    assert f.stamp_ns(msg, receive_ns=777) == 777  # headerless: receive timeline


def test_joint_state_encode_uses_joint_names():
    f = load_contract("so101").features["observation.state"]
    msg = f.encode(np.array([1, 2, 3, 4, 5, 60], dtype=np.float32), stamp_ns=2_500_000_001)
    assert list(msg.name) == ARM
    assert msg.header.stamp.sec == 2 and msg.header.stamp.nanosec == 500_000_001
    np.testing.assert_allclose(f.decode(msg), [1, 2, 3, 4, 5, 60], rtol=1e-6)


def _contract(**feature_overrides):
    data = {
        "robot_type": "test",
        "fps": 10,
        "features": {
            "action": {"topic": "/cmd", "type": "std_msgs/msg/Float64MultiArray", "slice": [0, 2], "names": ["a", "b"]},
            "observation.state": {"topic": "/js", "type": "sensor_msgs/msg/JointState", "joints": ["j1", "j2"]},
            "observation.images.cam": {"topic": "/cam/image_raw", "type": "sensor_msgs/msg/Image", "shape": [4, 6, 3]},
        },
    }
    for name, spec in feature_overrides.items():
        data["features"][name] = spec
    return data


def test_trajectory_feature_chunks():
    data = _contract(
        action={
            "topic": "/jt",
            "type": "trajectory_msgs/msg/JointTrajectory",
            "joints": ["j1", "j2"],
            "transforms": ["rad2deg"],
        }
    )
    f = parse_contract(data).action_feature
    assert f.names == ["j1.pos", "j2.pos"]
    chunk = np.array([[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]])
    msg = f.encode(chunk, stamp_ns=0)
    assert len(msg.points) == 3 and list(msg.joint_names) == ["j1", "j2"]
    assert msg.points[1].time_from_start.nanosec == 200_000_000  # (i + 1) / fps
    np.testing.assert_allclose(f.decode(msg), [10.0, 20.0], rtol=1e-6)  # first point
    reordered = chunk_to_joint_trajectory(["j2", "j1"], np.deg2rad(chunk[:, ::-1]), 10)
    np.testing.assert_allclose(f.decode(reordered), [10.0, 20.0], rtol=1e-6)


def test_multi_array_indices_and_transform_subset():
    data = _contract(
        action={
            "topic": "/cmd",
            "type": "std_msgs/msg/Float64MultiArray",
            "indices": [3, 1],
            "names": ["a", "b"],
            "transforms": [{"scale": 2.0, "only": ["b"]}, {"offset": 1.0}, {"clip": [0, 10]}],
        }
    )
    f = parse_contract(data).action_feature
    msg = numpy_to_float64_multi_array([0.0, 4.0, 0.0, 3.0])
    np.testing.assert_allclose(f.decode(msg), [4.0, 9.0])  # a = 3 + 1, b = 4 * 2 + 1
    np.testing.assert_allclose(f.decode(numpy_to_float64_multi_array([0.0, 40.0, 0.0, 3.0])), [4.0, 10.0])  # clipped
    np.testing.assert_allclose(f.to_ros([4.0, 9.0]), [3.0, 4.0])
    with pytest.raises(ContractError, match="selects index 3"):
        f.decode(numpy_to_float64_multi_array([1.0, 2.0]))


def test_linear_map_inverse_exact():
    data = _contract(
        action={
            "topic": "/cmd",
            "type": "std_msgs/msg/Float64MultiArray",
            "slice": [0, 2],
            "names": ["a", "b"],
            "transforms": [{"linear": {"from": [-2, 2], "to": [0, 100]}}],
        }
    )
    f = parse_contract(data).action_feature
    np.testing.assert_allclose(f.to_lerobot([-2, 1]), [0, 75])
    np.testing.assert_allclose(f.to_ros([0, 75]), [-2, 1])


def test_a_ticks_plain_float_path_is_bit_identical_to_numpys():
    """decode (JointState state) and to_ros_values (the action) run on plain floats for speed; on random
    values, NaN, inf, masked and chained transforms they give exactly what the numpy path gives."""
    from lerobot_ros.codecs import joint_state_to_numpy

    joints = ["j1", "j2", "j3", "j4"]
    transforms = [
        "rad2deg",
        {"clip": [-90, 120], "only": ["j2", "j4"]},
        {"linear": {"from": [0, 1.7], "to": [-3, 11]}, "only": ["j3"]},
        {"scale": 0.37},
        {"offset": -1.25, "only": ["j1"]},
    ]
    data = _contract(
        action={
            "topic": "/jt",
            "type": "trajectory_msgs/msg/JointTrajectory",
            "joints": joints,
            "transforms": transforms,
        },
        **{
            "observation.state": {
                "topic": "/js",
                "type": "sensor_msgs/msg/JointState",
                "joints": joints,
                "transforms": transforms,
            }
        },
    )
    contract = parse_contract(data)
    state, action = contract.features["observation.state"], contract.action_feature
    rng = np.random.default_rng(3)
    rows = [rng.normal(scale=3.0, size=4) for _ in range(200)] + [np.array([np.nan, np.inf, -np.inf, 1e300])]
    for row in rows:
        msg = numpy_to_joint_state(joints[::-1], position=row[::-1])  # another order: picked by name
        fast = state.decode(msg)
        slow = state.to_lerobot(joint_state_to_numpy(msg, joints))
        assert fast.dtype == np.float32 and fast.shape == (4,)
        np.testing.assert_array_equal(fast, slow)  # NaN == NaN here
        lerobot = rng.normal(scale=50.0, size=4).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(action.to_ros_values(lerobot)), action.to_ros(lerobot))
    assert state.elementwise is not None and action.elementwise is not None  # the plain path was the one compared
    assert np.isnan(action.to_ros_values(np.array([np.nan, 0, 0, 0], np.float32))[0])  # the safety filter drops it
    with pytest.raises(ContractError, match=r"lacks joint\(s\) \['j4'\]"):
        state.decode(numpy_to_joint_state(["j1", "j2", "j3", "j5"], position=[0.0] * 4))
    with pytest.raises(ContractError, match="4 names but 3 position values"):
        bad = numpy_to_joint_state(joints, position=[0.0] * 4)
        bad.position = [0.0] * 3
        state.decode(bad)


def test_images_rgb_bgr_compressed_and_resize():
    c = parse_contract(_contract())
    cam = c.features["observation.images.cam"]
    rgb = np.random.default_rng(0).integers(0, 255, (4, 6, 3), dtype=np.uint8)
    np.testing.assert_array_equal(cam.decode(numpy_to_image(rgb, "rgb8")), rgb)
    np.testing.assert_array_equal(cam.decode(numpy_to_image(np.ascontiguousarray(rgb[..., ::-1]), "bgr8")), rgb)
    out = cam.decode(numpy_to_image(rgb, "rgb8"))
    assert out.flags.owndata and out.flags.c_contiguous
    with pytest.raises(ContractError, match="image is 8x12, the contract expects 4x6"):
        cam.decode(numpy_to_image(np.zeros((8, 12, 3), np.uint8), "rgb8"))
    data = _contract(
        **{
            "observation.images.cam": {
                "topic": "/c",
                "type": "sensor_msgs/CompressedImage",
                "shape": [4, 6, 3],
                "transforms": [{"crop": [0, 0, 8, 10]}, {"resize": [4, 6]}],
            }
        }
    )
    cam2 = parse_contract(data).features["observation.images.cam"]
    flat = np.full((8, 12, 3), (200, 100, 50), np.uint8)
    decoded = cam2.decode(numpy_to_compressed(flat, "rgb8", "png"))
    assert decoded.shape == (4, 6, 3)
    np.testing.assert_array_equal(decoded[1, 1], [200, 100, 50])
    assert type(cam2.encode(decoded, stamp_ns=1)).__name__ == "CompressedImage"
    assert c.lerobot_features()["observation.images.cam"]["dtype"] == "video"
    assert c.lerobot_features(use_video=False)["observation.images.cam"]["dtype"] == "image"


def test_joint_state_missing_joint_is_named():
    f = parse_contract(_contract()).features["observation.state"]
    with pytest.raises(ContractError, match=r"lacks joint\(s\) \['j2'\]"):
        f.decode(numpy_to_joint_state(["j1"], position=[0.0]))


BAD = [
    (
        lambda d: d["features"]["observation.state"].update(alignment={"policy": "cubic"}),
        "features.observation.state.alignment.policy",
    ),
    (
        lambda d: d["features"]["observation.images.cam"].update(alignment="interpolate"),
        "images are never interpolated",
    ),
    (lambda d: d["features"]["observation.state"].update(alignment={"policy": "asof"}), "asof needs tolerance_ms"),
    (
        lambda d: d["features"]["observation.state"].pop("topic"),
        "features.observation.state: missing required key 'topic'",
    ),
    (
        lambda d: d["features"]["observation.state"].update(type="foo_msgs/msg/Bar"),
        "features.observation.state.type: unsupported message type",
    ),
    (lambda d: d["features"]["observation.state"].update(topci="/x"), "unknown key(s) ['topci']"),
    (lambda d: d["features"]["action"].update(names=["a"]), "features.action.names: 1 names for 2 selected values"),
    (lambda d: d["features"]["action"].update(timeline="header"), "has no header stamp; use timeline: receive"),
    (
        lambda d: d["features"]["action"].update(transforms=[{"linear": {"from": [1, 1], "to": [0, 1]}}]),
        "features.action.transforms[0].linear",
    ),
    (
        lambda d: d["features"]["action"].update(transforms=[{"rad2deg": True, "only": ["zz"]}]),
        "features.action.transforms[0].only[0]: no value named 'zz'",
    ),
    (lambda d: d["features"]["observation.images.cam"].update(shape=[4, 6]), "features.observation.images.cam.shape"),
    (lambda d: d["features"].pop("action"), "a contract needs an 'action' feature"),
    (lambda d: d.update(fps=29.97), "fps: expected a positive integer"),
    (
        lambda d: d["features"].update(
            {"timestamp": {"topic": "/t", "type": "std_msgs/Float64MultiArray", "names": ["x"]}}
        ),
        "invalid feature name 'timestamp'",
    ),
    (
        lambda d: d["features"]["observation.state"].update(qos="fast"),
        "features.observation.state.qos: unknown QoS profile 'fast'",
    ),
    (lambda d: d["features"]["observation.state"].update(topic="js"), "expected an absolute topic name"),
]


@pytest.mark.parametrize("mutate,expected", BAD, ids=[b[1][:40] for b in BAD])
def test_validation_errors_name_the_key(mutate, expected):
    data = _contract()
    mutate(data)
    with pytest.raises(ContractError) as info:
        parse_contract(copy.deepcopy(data))
    assert expected in str(info.value)


@pytest.mark.parametrize(
    "key, section",
    [
        ("episode_boundary.type", {"episode_boundary": {"topic": "/ep", "type": 3}}),
        ("task.type", {"task": {"topic": "/task", "type": None}}),
    ],
)
def test_a_type_that_is_not_a_string_is_a_contract_error(key, section):
    """`type: 3` / `type: ~` outside the features was an AttributeError from `.strip()` (a traceback in convert)."""
    data = {**_contract(), **section}
    with pytest.raises(ContractError, match=rf"{key}: expected a non-empty string, got"):
        parse_contract(data)


def test_load_errors_name_file_and_alternatives(tmp_path):
    with pytest.raises(ContractError, match="no contract named 'nope'; shipped contracts: .*so101"):
        load_contract("nope")
    bad = tmp_path / "c.yaml"
    data = _contract()
    data["features"]["action"]["alignment"] = {"policy": "asof", "tolerance_ms": -1}
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ContractError, match=rf"{bad}: features.action.alignment.tolerance_ms"):
        load_contract(bad)
    (tmp_path / "broken.yaml").write_text("features: [unclosed")
    with pytest.raises(ContractError, match="not valid YAML"):
        load_contract(tmp_path / "broken.yaml")


def test_readme_documents_every_key():
    readme = (pathlib.Path(__file__).resolve().parents[2] / "config" / "contracts" / "README.md").read_text()
    from lerobot_ros.contract.loader import FEATURE_KEYS, TOP_KEYS

    for key in FEATURE_KEYS | TOP_KEYS:
        assert f"`{key}`" in readme, key


def test_flag_transforms_take_no_value():
    data = _contract()
    data["features"]["action"]["transforms"] = [{"rad2deg": False}]
    with pytest.raises(
        ContractError, match=r"features.action.transforms\[0\].rad2deg: rad2deg takes no value \(got False\)"
    ):
        parse_contract(data)
    for spelling in ("rad2deg", {"rad2deg": True}, {"rad2deg": None}):
        data["features"]["action"]["transforms"] = [spelling]
        action = parse_contract(copy.deepcopy(data)).features["action"]
        np.testing.assert_allclose(action.to_lerobot(np.array([np.pi, np.pi / 2])), [180.0, 90.0], rtol=1e-6)


def test_load_errors_say_the_key_path_once(tmp_path):
    data = _contract()
    data["features"]["action"]["alignment"] = {"policy": "asof", "tolerance_ms": -1}
    bad = tmp_path / "c.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ContractError) as info:
        load_contract(bad)
    assert str(info.value).count("features.action.alignment.tolerance_ms") == 1
    data = _contract()
    data["colour"] = "red"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ContractError) as info:
        load_contract(bad)
    assert str(info.value).startswith(f"{bad}: (top level): unknown key(s) ['colour']")
    assert str(info.value).count("(top level)") == 1


def test_readme_says_which_top_level_keys_are_required():
    readme = (pathlib.Path(__file__).resolve().parents[2] / "config" / "contracts" / "README.md").read_text()
    rows = {line.split("|")[1].strip(" `"): line for line in readme.splitlines() if line.startswith("| `")}
    for key in ("robot_type", "fps", "features"):
        data = _contract()
        data.pop(key)
        with pytest.raises(ContractError, match=rf"missing required key '{key}'"):
            parse_contract(data)
        assert "**required**" in rows[key], key
    assert "required" not in rows["description"] and "required" not in rows["version"]


@pytest.mark.parametrize(
    "spelling", ["sensor_msgs/msg/JointState", "sensor_msgs/JointState", "JointState", " JointState "]
)
def test_type_spellings(spelling):
    data = _contract()
    data["features"]["observation.state"]["type"] = spelling
    assert parse_contract(data).features["observation.state"].msg_type == "sensor_msgs/msg/JointState"


def test_unknown_bare_type_lists_the_full_names():
    data = _contract()
    data["features"]["observation.state"]["type"] = "JointStates"
    with pytest.raises(
        ContractError, match=r"unsupported message type 'JointStates'; use one of \[.*'sensor_msgs/msg/JointState'"
    ):
        parse_contract(data)
