"""LeRobotDataset v3 writing with LeRobot's own writer at its fastest settings (streaming encoding).

One dataset per worker ("part"), merged at the end with LeRobot's `aggregate_datasets` (no re-encoding);
outputs are built in a `.partial` folder and renamed, so a failed run never leaves a half-written dataset.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from lerobot_ros.contract import Contract

DEFAULT_VCODEC = "libsvtav1"  # LeRobot's default


def vcodec_choices() -> list[str]:
    from lerobot.configs.video import VALID_VIDEO_CODECS, VIDEO_CODECS_ALIASES

    return sorted(set(VALID_VIDEO_CODECS) | set(VIDEO_CODECS_ALIASES))


def create_dataset(
    root: Path, repo_id: str, contract: Contract, vcodec: str = DEFAULT_VCODEC, encoder_threads: int | None = None
):
    """An empty LeRobotDataset for the contract's features: streaming video encoding, codec `vcodec`."""
    from lerobot.configs.video import RGBEncoderConfig
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    return LeRobotDataset.create(
        repo_id=repo_id,
        fps=contract.fps,
        features=contract.lerobot_features(use_video=True),
        root=root,
        robot_type=contract.robot_type,
        use_videos=True,
        streaming_encoding=True,
        rgb_encoder=RGBEncoderConfig(vcodec=vcodec),
        encoder_threads=encoder_threads,
    )


def merge_parts(parts: list[tuple[str, Path]], repo_id: str, out: Path) -> None:
    """Write the parts (repo_id, root) as one dataset at `out` (which must not exist)."""
    if len(parts) == 1:
        shutil.move(str(parts[0][1]), str(out))
        _set_repo_id(out, repo_id)
        return
    from lerobot.datasets.aggregate import aggregate_datasets

    logging.getLogger("lerobot").setLevel(logging.WARNING)
    aggregate_datasets(repo_ids=[r for r, _ in parts], roots=[p for _, p in parts], aggr_repo_id=repo_id, aggr_root=out)


def _set_repo_id(root: Path, repo_id: str) -> None:
    """info.json does not store the repo id in v3; nothing to rewrite (kept for clarity)."""
    return None


def verify_dataset(root: Path, repo_id: str, episode_frames: list[int]) -> None:
    """Reload with LeRobotDataset and check episodes, frame counts, and that first/last frames decode."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset(repo_id, root=root)
    if ds.num_episodes != len(episode_frames):
        raise RuntimeError(f"reload check: {ds.num_episodes} episodes in the dataset, expected {len(episode_frames)}")
    if ds.num_frames != sum(episode_frames):
        raise RuntimeError(f"reload check: {ds.num_frames} frames in the dataset, expected {sum(episode_frames)}")
    lengths = [int(e["length"]) for e in ds.meta.episodes] if ds.meta.episodes is not None else []
    if lengths and lengths != list(episode_frames):
        raise RuntimeError(f"reload check: episode lengths {lengths}, expected {list(episode_frames)}")
    if len(ds):
        ds[0]
        ds[len(ds) - 1]


def wait_for_encoder(dataset, poll_s: float = 0.002) -> None:
    """Block until every camera's streaming-encoder queue has room for one more frame.

    LeRobot's streaming encoder is built for live recording: when its queue is full it DROPS the frame
    (after 0.1 s). Offline, the producer is faster than the encoder, so we apply back-pressure here
    instead; the queues stay bounded, so memory stays flat. (Reads LeRobot 0.6.1 internals; a no-op if
    they change.)
    """
    import time

    encoder = getattr(getattr(dataset, "writer", None), "_streaming_encoder", None)
    queues = getattr(encoder, "_frame_queues", None) or {}
    for q in list(queues.values()):
        while q.maxsize > 0 and q.qsize() >= q.maxsize:
            time.sleep(poll_s)


def dropped_frames(dataset) -> dict[str, int]:
    """Frames the streaming encoder dropped in the current episode (must be empty for a valid episode)."""
    encoder = getattr(getattr(dataset, "writer", None), "_streaming_encoder", None)
    return {k: v for k, v in (getattr(encoder, "_dropped_frames", None) or {}).items() if v}


def add_frame(dataset, frame: dict) -> None:
    """`dataset.add_frame` with encoder back-pressure (never a dropped video frame)."""
    wait_for_encoder(dataset)
    dataset.add_frame(frame)


def save_episode(dataset) -> None:
    """`dataset.save_episode`, refusing an episode whose video lost frames (it would not match its data)."""
    dropped = dropped_frames(dataset)
    if dropped:
        raise RuntimeError(f"the video encoder dropped frames {dropped}; the episode is discarded")
    dataset.save_episode()
