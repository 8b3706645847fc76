"""lerobot_ros_msgs/EpisodeStatus from an episode record (the sim bridge's `EpisodeState`, or any object
with the same fields), so the field mapping is written once."""

from __future__ import annotations

from lerobot_ros.codecs.time import set_stamp
from lerobot_ros_msgs.msg import EpisodeStatus


def episode_to_status(episode, stamp_ns: int) -> EpisodeStatus:
    """episode_index, step, done, success, task; reward and sum_reward when the record has them (else 0)."""
    msg = EpisodeStatus(
        episode_index=int(episode.episode_index),
        step=int(episode.step),
        done=bool(episode.done),
        success=bool(episode.success),
        task=str(episode.task),
        reward=float(getattr(episode, "reward", 0.0)),
        sum_reward=float(getattr(episode, "sum_reward", 0.0)),
    )
    set_stamp(msg.header.stamp, stamp_ns)
    return msg
