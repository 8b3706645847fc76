"""camera_node with a video file as its source (written here with OpenCV), over real DDS."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.parameter import Parameter
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from lerobot_ros.codecs import compressed_to_numpy, image_to_numpy, time_to_ns
from lerobot_ros.ros.entry import NodeStartupError
from lerobot_ros.ros.qos import RELIABLE_QOS, SENSOR_QOS
from lerobot_ros.ros.runtime import MessageCollector, wait_until

N_FRAMES, W, H = 12, 160, 120


@pytest.fixture
def video(tmp_path):
    """A short MJPG video whose frames differ (a bar that moves, a colour that changes)."""
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (W, H))
    assert writer.isOpened()
    for i in range(N_FRAMES):
        frame = np.zeros((H, W, 3), np.uint8)
        frame[:, :, 0] = 20 * i  # blue channel in OpenCV's BGR
        frame[:, 10 * i : 10 * i + 10, 1] = 255
        writer.write(frame)
    writer.release()
    cap = cv2.VideoCapture(str(path))
    decoded = []
    while True:
        ok, bgr = cap.read()
        if not ok:
            break
        decoded.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    cap.release()
    assert len(decoded) == N_FRAMES
    return path, decoded


def camera(ros, **params):
    from lerobot_ros.nodes.camera_node import CameraNode

    overrides = [Parameter(k, value=v) for k, v in params.items()]
    return ros.add_node(CameraNode(context=ros.context, parameter_overrides=overrides))


def test_video_frames_published_with_stamps_encodings_and_camera_info(ros, video):
    path, decoded = video
    probe = ros.create_node("probe")
    qos = RELIABLE_QOS.__class__(depth=100, reliability=RELIABLE_QOS.reliability, history=RELIABLE_QOS.history)
    images = MessageCollector(probe, Image, "/cam/image_raw", qos)
    compressed = MessageCollector(probe, CompressedImage, "/cam/image_raw/compressed", qos)
    infos = MessageCollector(probe, CameraInfo, "/cam/camera_info", qos)
    node = camera(ros, source=str(path), camera_name="cam", fps=15.0, qos="reliable")
    try:
        # Frames before discovery are not published (lazy topics); at the end of the file the node reopens it
        # and plays it again, so a complete pass from the first frame arrives. Find it.
        def full_run():
            """A complete pass over the file (frame 0 .. N-1) whose jpeg and camera_info also arrived."""
            got = images.messages
            jpeg = {time_to_ns(m.header.stamp): m for m in compressed.messages}
            info = {time_to_ns(m.header.stamp): m for m in infos.messages}
            for j in range(len(got) - N_FRAMES + 1):
                run = got[j : j + N_FRAMES]
                stamps = [time_to_ns(m.header.stamp) for m in run]
                if np.array_equal(image_to_numpy(run[0]), decoded[0]) and all(t in jpeg and t in info for t in stamps):
                    return run, [jpeg[t] for t in stamps], [info[t] for t in stamps]
            return None

        wait_until(lambda: full_run() is not None, 60, what="a full run of the video")
        msgs, comps, info = full_run()
        for i, (msg, comp) in enumerate(zip(msgs, comps)):
            assert msg.encoding == "rgb8" and (msg.width, msg.height) == (W, H)
            assert msg.header.frame_id == "cam_optical_frame"
            np.testing.assert_array_equal(image_to_numpy(msg), decoded[i])  # the file's frames, in order
            assert comp.format == "rgb8; jpeg compressed bgr8"
            diff = np.abs(compressed_to_numpy(comp).astype(int) - decoded[i].astype(int))
            assert diff.mean() < 3.0  # jpeg tolerance
        stamps = [time_to_ns(m.header.stamp) for m in msgs]
        assert all(b > a for a, b in zip(stamps, stamps[1:]))
        assert (info[0].width, info[0].height, info[0].header.frame_id) == (W, H, "cam_optical_frame")
        assert info[0].k[2] == pytest.approx((W - 1) / 2) and info[0].distortion_model == "plumb_bob"
    finally:
        node.close()


def test_resize_and_no_frame_fault_then_reopen(ros, video):
    path, _ = video
    probe = ros.create_node("probe")
    images = MessageCollector(probe, Image, "/front/image_raw", SENSOR_QOS)  # the default: best effort
    diags = MessageCollector(probe, DiagnosticArray, "/diagnostics", RELIABLE_QOS)
    node = camera(
        ros,
        source=str(path),
        camera_name="front",
        fps=30.0,
        width=80,
        height=60,
        publish_compressed=False,
        diagnostics_period_s=0.2,
    )
    try:
        first = images.wait_for(1, timeout=30)[0]
        assert (first.width, first.height) == (80, 60)

        def camera_statuses():
            return [s for m in diags.messages for s in m.status if s.name.endswith("camera_node: camera")]

        # The file ends (loop=false): "no frame" is reported, and the node reopens the source.
        wait_until(lambda: any("no frame" in s.message for s in camera_statuses()), 20, what="no-frame report")
        assert any(s.level in (DiagnosticStatus.WARN, DiagnosticStatus.ERROR) for s in camera_statuses())
        wait_until(lambda: node.published > N_FRAMES, 30, what="frames after reopening")
        assert node.health.reconnects >= 1
    finally:
        node.close()


def test_missing_video_file_is_a_startup_error(ros, tmp_path):
    with pytest.raises(NodeStartupError, match=r"video file .*nope\.mp4 does not exist"):
        camera(ros, source=str(tmp_path / "nope.mp4"))
    with pytest.raises(NodeStartupError, match="RealSense sources need the pyrealsense2 package"):
        camera(ros, source="realsense:0123456789")
    with pytest.raises(NodeStartupError, match="unknown QoS profile 'fast'"):
        camera(ros, source=str(tmp_path / "x.avi"), qos="fast")


def test_numbers_and_strings_accept_either_type(ros, video):
    path, _ = video
    node = camera(ros, source=str(path), fps=30, width=80.0, height=60)  # int fps, float width
    try:
        assert node.fps == 30.0 and isinstance(node.fps, float)
        assert node.req_width == 80 and isinstance(node.req_width, int)
    finally:
        node.close()
    with pytest.raises(NodeStartupError, match="parameter 'fps' must be a number, got 'fast'"):
        camera(ros, source=str(path), fps="fast")


def test_parameters_described_refused_and_applied_from_another_context(ros, video):
    from lerobot_ros.configs import names
    from lerobot_ros.hardware.config import CameraNodeConfig as CameraParams
    from lerobot_ros.ros.runtime import RosRuntime
    from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described

    path, _ = video
    node = camera(ros, source=str(path), camera_name="cam", fps=10.0, loop=True)
    try:
        with RosRuntime() as other:
            probe = ParamProbe(other, "/camera_node")
            described = assert_all_described(probe)
            assert set(names(CameraParams)) <= set(described)
            assert described["fps"].floating_point_range[0].from_value == 0.0 and not described["fps"].read_only
            refused = probe.set("source", "/dev/video7")
            assert not refused.successful and "read-only" in refused.reason and node.source_spec == str(path)
            assert probe.set("fps", 25).successful  # an integer for a double, as `ros2 param set` sends it
            assert node.fps == 25.0 and node.tick_timer.timer_period_ns == 40_000_000
            assert probe.set("max_missed", 7).successful and node.driver.max_missed == 7
            bad = probe.set("jpeg_quality", 0)
            assert not bad.successful and node.params.values.jpeg_quality == 90
    finally:
        node.close()
