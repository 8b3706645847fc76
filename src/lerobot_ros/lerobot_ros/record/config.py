"""Settings of the episode recorder (node and `lerobot-ros record`) and of the episode keyboard, declared
once. Episode counts and durations carry lerobot-record's names (`dataset.num_episodes`,
`dataset.episode_time_s`, `dataset.reset_time_s`): the recorder writes the episodes a dataset is made of.
"""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param
from lerobot_ros.record.episode_bag_writer import WriterSettings
from lerobot_ros.record.session import OUTCOMES

WRITER_DEFAULTS = WriterSettings()  # compression, flush_interval_s, min_free_mb: the writer's own defaults

_NEXT = "reconfigurable; applies from the next episode"


@dataclass(frozen=True)
class RecorderConfig:
    """episode_recorder's settings. What to record and where is fixed at start-up; the loop is not."""

    contract: str = param("", "contract file or shipped name whose topics are recorded ('' = topics only)")
    topics: list[str] = param([], "extra topics, '/name' or '/name:pkg/msg/Type' (instead of or on top of a contract)")
    all_topics: bool = param(False, "record every topic in the graph (like `ros2 bag record -a`)")
    output_dir: str = param("recordings", "folder of the episode bags (episode_NNNNNN)")
    task: str = param(
        "",
        "task string of the episodes ('' = the contract's default); applies from the next episode",
        reconfigurable=True,
    )
    compression: str = param(WRITER_DEFAULTS.compression, "MCAP chunk compression", choices=WriterSettings.COMPRESSIONS)
    flush_interval_s: float = param(
        WRITER_DEFAULTS.flush_interval_s,
        f"how often written chunks reach the disk; {_NEXT}",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    episode_time_s: float = param(
        0.0,
        "automatic mode: episode length (0 = manual mode; the mode itself is fixed)",
        unit="s",
        min=0.0,
        reconfigurable=True,
        name="dataset.episode_time_s",
    )
    reset_time_s: float = param(
        0.0,
        "automatic mode: pause between episodes",
        unit="s",
        min=0.0,
        reconfigurable=True,
        name="dataset.reset_time_s",
    )
    num_episodes: int = param(
        0,
        "episodes to keep before the session ends (0 = no limit)",
        min=0,
        reconfigurable=True,
        name="dataset.num_episodes",
    )
    default_outcome: str = param(
        "success", "outcome of a stop_episode request that names none", choices=OUTCOMES[:2], reconfigurable=True
    )
    exit_when_done: bool = param(True, "end the process when the session is over (dataset.num_episodes kept, stop key)")
    stall_timeout_s: float = param(
        1.0,
        f"live QA: a stream silent this long is stalled; {_NEXT}",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    min_free_mb: float = param(
        WRITER_DEFAULTS.min_free_bytes / 2**20,
        f"refuse to start / stop writing below this free disk space; {_NEXT}",
        unit="MiB",
        min=0.0,
        reconfigurable=True,
    )
    progress_period_s: float = param(
        1.0,
        "episode_status, /diagnostics and progress line period",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    discovery_period_s: float = param(
        0.5,
        "how often the graph is searched for publishers of wanted topics",
        unit="s",
        min=0.0,
        min_exclusive=True,
        reconfigurable=True,
    )
    wait_for_topics_s: float = param(
        10.0, "automatic mode: how long the first episode waits for every wanted topic", unit="s", min=0.0
    )
    drain_s: float = param(
        2.0,
        "on Ctrl-C / SIGTERM: keep taking delivered messages up to this long, then close",
        unit="s",
        min=0.0,
        reconfigurable=True,
    )


@dataclass(frozen=True)
class EpisodeKeyboardConfig:
    """episode_keyboard: keys that drive a recorder's episode services."""

    exit_on_stop: bool = param(True, "exit after the stop key (Esc or q) was sent", reconfigurable=True)
    match_timeout_s: float = param(
        5.0,
        "how long a key waits for a recorder to be matched before it is dropped",
        unit="s",
        min=0.0,
        reconfigurable=True,
    )


@dataclass(frozen=True)
class RecordCommandConfig:
    """What `lerobot-ros record` adds around the recorder node: keys in this terminal, and the episodes
    converted into a LeRobotDataset while the next one records."""

    keyboard: bool = param(False, "control episodes from this terminal (right arrow / n, left arrow / r, Esc / q)")
    dataset_root: str | None = param(
        None,
        "convert each kept episode into a LeRobotDataset in this (new) folder, in the background",
        name="dataset.root",
    )
    vcodec: str | None = param(
        None, "video codec of the converted dataset (default: convert's)", name="dataset.rgb_encoder.vcodec"
    )
