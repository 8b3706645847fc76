"""A Fast DDS profile for large messages (camera frames) between processes on one machine.

Fast DDS's default shared-memory segment (512 KiB) is smaller than one 480x480 RGB frame (675 KiB),
so such frames go over UDP loopback in fragments: on a busy 2-core machine a lockstep bridge whose
policy side receives the images ran at ~0.35 of the bare env; with this profile (32 MiB segments) at
~1.0 (bench/sim_bridge.py). The sim bridge and camera_node apply it to themselves unless
FASTDDS_DEFAULT_PROFILES_FILE is already set or another RMW is selected; the receiving side needs no
change (it maps our segment).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path

PROFILE = """<?xml version="1.0" encoding="UTF-8" ?>
<dds xmlns="http://www.eprosima.com">
  <profiles>
    <transport_descriptors>
      <transport_descriptor>
        <transport_id>lerobot_ros_shm</transport_id>
        <type>SHM</type>
        <segment_size>33554432</segment_size>
        <maxMessageSize>16777216</maxMessageSize>
      </transport_descriptor>
      <transport_descriptor>
        <transport_id>lerobot_ros_udp</transport_id>
        <type>UDPv4</type>
      </transport_descriptor>
    </transport_descriptors>
    <participant profile_name="lerobot_ros_large_data" is_default_profile="true">
      <rtps>
        <userTransports>
          <transport_id>lerobot_ros_shm</transport_id>
          <transport_id>lerobot_ros_udp</transport_id>
        </userTransports>
        <useBuiltinTransports>false</useBuiltinTransports>
      </rtps>
    </participant>
  </profiles>
</dds>
"""


def large_data_profile_path() -> Path:
    """The profile written to the user cache (so it needs no package data)."""
    cache = Path(os.environ.get("LEROBOT_ROS_CACHE", Path.home() / ".cache" / "lerobot_ros"))
    path = cache / "fastdds_large_data.xml"
    if not path.is_file() or path.read_text() != PROFILE:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(PROFILE)
        tmp.replace(path)
    return path


def use_large_data_profile(env: MutableMapping[str, str] | None = None) -> str | None:
    """Point FASTDDS_DEFAULT_PROFILES_FILE at the profile in `env` (default os.environ) unless it is
    already set or the RMW is not Fast DDS; returns the path set, or None. Call before rclpy.init."""
    if env is None:
        env = os.environ
    if (
        env.get("FASTDDS_DEFAULT_PROFILES_FILE")
        or env.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp") != "rmw_fastrtps_cpp"
    ):
        return None
    if env.get("LEROBOT_ROS_DDS_PROFILE", "large_data") == "default":
        return None
    env["FASTDDS_DEFAULT_PROFILES_FILE"] = str(large_data_profile_path())
    return env["FASTDDS_DEFAULT_PROFILES_FILE"]
