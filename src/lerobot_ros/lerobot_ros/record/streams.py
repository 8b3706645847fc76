"""Which topics to record: from a contract (lerobot_ros.contract) or an explicit list, with QA rates."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class WantedTopic:
    topic: str
    msgtype: str | None  # None: discovered from the publishers
    expected_hz: float | None  # the contract's fps for feature streams; None: no rate check
    policy: str = "hold"  # the contract's alignment (for QA)
    tolerance_ns: int | None = None


@dataclass
class RecordingPlan:
    topics: list[WantedTopic]
    contract_text: str = ""
    contract_path: str = ""
    fps: float | None = None
    default_task: str = ""
    task_key: str = "task"  #: custom_data key the converter reads the task from
    task_topic: str | None = None  #: the contract's task topic: its newest message is the next episode's task
    task_type: str = "std_msgs/msg/String"


def plan_from_contract(path_or_name: str) -> RecordingPlan:
    """Every topic a contract reads: its features at the contract's fps, plus task/boundary topics."""
    from lerobot_ros.contract import load_contract  # ContractError on a bad file, with the key named

    contract = load_contract(path_or_name)
    wanted = []
    for topic, msgtype in contract.topics.items():
        features = contract.feature_by_topic(topic)
        if features:
            align = features[0].alignment
            wanted.append(WantedTopic(topic, msgtype, float(contract.fps), align.policy, align.tolerance_ns))
        else:  # task / episode-boundary topics: sporadic, no rate to check
            wanted.append(WantedTopic(topic, msgtype, None))
    source = contract.source or str(path_or_name)
    text = Path(source).read_text() if Path(source).is_file() else ""
    default_task = getattr(contract.task, "default", "") or ""
    task_key = getattr(contract.task, "metadata_key", "task") or "task"
    return RecordingPlan(
        wanted, text, source, float(contract.fps), default_task, task_key, contract.task.topic, contract.task.msg_type
    )


def plan_from_topics(topics: list[str], fps: float | None = None) -> RecordingPlan:
    """An explicit list; entries are `topic` or `topic:pkg/msg/Type`."""
    wanted = []
    for entry in topics:
        entry = entry.strip()
        if not entry:
            continue
        topic, _, msgtype = entry.partition(":")
        if not topic.startswith("/"):
            raise ValueError(f"topic {topic!r} must be absolute (start with '/')")
        wanted.append(WantedTopic(topic, msgtype or None, fps))
    return RecordingPlan(wanted, fps=fps)
