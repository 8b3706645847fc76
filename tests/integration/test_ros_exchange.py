"""Real rclpy nodes over real DDS: across processes, custom messages and a service round trip."""

import subprocess
import sys

import numpy as np
import pytest
from sensor_msgs.msg import CameraInfo, Image, JointState

from lerobot_ros.codecs import image_to_rgb, joint_state_to_numpy, time_to_ns
from lerobot_ros.nodes.talker import SO101_JOINTS, synthetic_frame
from lerobot_ros.ros.qos import LATCHED_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, RosRuntime, wait_until

pytestmark = pytest.mark.ros


def test_joint_state_and_image_cross_processes(ros, ros_env):
    node = ros.create_node("probe")
    joints = MessageCollector(node, JointState, "/arm/joint_states", SENSOR_QOS)
    images = MessageCollector(node, Image, "/arm/camera/image_raw", SENSOR_QOS)
    infos = MessageCollector(node, CameraInfo, "/arm/camera/camera_info", SENSOR_QOS)
    talker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lerobot_ros.nodes.talker",
            "--ros-args",
            "-r",
            "__ns:=/arm",
            "-p",
            "rate_hz:=20.0",
            "-p",
            "width:=160",
            "-p",
            "height:=120",
        ],
        env=ros_env,
    )
    try:
        js = joints.wait_for(5, timeout=30)
        imgs = images.wait_for(5, timeout=30)
        info = infos.wait_for(1, timeout=30)[0]
    finally:
        talker.terminate()
        assert talker.wait(timeout=10) in (0, -15)
    positions = joint_state_to_numpy(js[-1], SO101_JOINTS)
    assert positions.shape == (6,) and np.all(np.abs(positions) <= 0.5 + 1e-9)
    stamps = [time_to_ns(m.header.stamp) for m in js]
    assert stamps == sorted(stamps) and stamps[0] > 0
    rgb = image_to_rgb(imgs[0])
    assert rgb.shape == (120, 160, 3) and imgs[0].header.frame_id == "camera_optical_frame"
    # the talker draws a deterministic pattern per tick: the received frame must be one of them
    ticks = [t for t in range(200) if np.array_equal(synthetic_frame(160, 120, t), rgb)]
    assert ticks, "received image does not match any frame of the talker's pattern"
    assert (info.width, info.height) == (160, 120)


def test_episode_status_and_reset_service_round_trip(ros):
    from lerobot_ros_msgs.msg import EpisodeStatus
    from lerobot_ros_msgs.srv import ResetEpisode

    calls = []

    def on_reset(request, response):
        calls.append((request.seed, request.options))
        response.success, response.message = True, "reset"
        response.task, response.episode_index = "pick the cube", len(calls) - 1
        return response

    server_node = ros.create_node("sim")
    server_node.create_service(ResetEpisode, "/sim/reset_episode", on_reset)
    status_pub = server_node.create_publisher(EpisodeStatus, "/sim/episode_status", LATCHED_QOS)
    status_pub.publish(
        EpisodeStatus(
            episode_index=3, step=17, reward=0.5, sum_reward=2.5, done=True, success=True, task="pick the cube"
        )
    )

    # A second context is a second DDS participant: the same path as another process.
    with RosRuntime() as other:
        client_node = other.create_node("client")
        status = MessageCollector(client_node, EpisodeStatus, "/sim/episode_status", LATCHED_QOS)
        client = client_node.create_client(ResetEpisode, "/sim/reset_episode")
        assert client.wait_for_service(timeout_sec=10.0)
        future = client.call_async(ResetEpisode.Request(seed=123, options='{"task_id": 2}'))
        wait_until(future.done, timeout=10, what="the ResetEpisode response")
        response = future.result()
        got = status.wait_for(1, timeout=10)[0]
    assert calls == [(123, '{"task_id": 2}')]
    assert (response.success, response.task, response.episode_index) == (True, "pick the cube", 0)
    assert (got.episode_index, got.step, got.done, got.success) == (3, 17, True, True)
    assert got.sum_reward == pytest.approx(2.5) and got.task == "pick the cube"


def test_smoke_cli_reports_the_exchange(ros_env):
    out = subprocess.run(
        [sys.executable, "-m", "lerobot_ros.cli.main", "smoke", "--count", "5", "--timeout_s", "60"],
        env=ros_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "images (480, 640, 3) over DDS" in out.stdout
