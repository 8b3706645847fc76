"""Bag -> episodes -> frames, per a contract. No dataset writing here (see lerobot_ros.dataset).

Pass 1 (`plan_bag`) reads every contract topic once: numeric features are decoded (they are small),
image messages only have their stamps and sizes noted. Episodes are cut (one per bag, or where the
contract's episode_boundary topic changes episode_index), resampled and checked. Pass 2
(`iter_frames`) reads the image topics again and decodes only the images the frames use, emitting
frames in order with a small look-ahead buffer, so memory does not grow with the bag's length.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from lerobot_ros.bag.errors import BagError
from lerobot_ros.bag.reader import BagReader
from lerobot_ros.codecs.cdr import header_stamp_ns
from lerobot_ros.contract import Contract, ContractError
from lerobot_ros.contract import messages as M
from lerobot_ros.resample import Resampled, ResampleReport, Stream, resample

if TYPE_CHECKING:
    from concurrent.futures import Future

IMAGE_DECODE_THREADS = 2
LOOKAHEAD = 4  # frames whose images are queued for decoding before a frame is emitted


@dataclass
class _Samples:
    times: list = field(default_factory=list)
    values: list = field(default_factory=list)  # numeric: decoded vectors; images: topic ordinals
    sizes: dict = field(default_factory=dict)  # Image: (h, w) -> first ordinal seen
    clock_offset_ns: int | None = None  # header timeline: first header stamp - its log time


@dataclass
class EpisodePlan:
    """One episode of a bag: resampled streams, the task, and the QA report."""

    index_in_bag: int
    task: str
    resampled: Resampled
    numeric: dict[str, np.ndarray]  # feature -> (frames, D) float32
    image_ordinals: dict[str, np.ndarray]  # feature -> per frame, the topic ordinal of the image message
    warnings: list[str]

    @property
    def frames(self) -> int:
        return int(self.resampled.grid.size)

    @property
    def report(self) -> ResampleReport:
        return self.resampled.report


@dataclass
class BagPlan:
    bag: str
    episodes: list[EpisodePlan]
    truncated: bool = False
    notes: list[str] = field(default_factory=list)


def _check_topics(reader: BagReader, contract: Contract) -> None:
    topics = reader.topics
    if reader.message_count == 0:
        raise BagError(reader.path, "the bag is empty (no messages)")
    for name, feature in contract.features.items():
        info = topics.get(feature.topic)
        if info is not None and info.count == 0:
            raise BagError(
                reader.path,
                f"contract topic {feature.topic} ({name}) has no messages in the bag: it was subscribed, but its "
                "publisher sent nothing while the episode recorded",
            )
        if info is None:
            have = ", ".join(sorted(topics)) or "none"
            raise BagError(
                reader.path, f"contract topic {feature.topic} ({name}) is not in the bag; its topics: {have}"
            )
        if info.msgtype != feature.msg_type:
            raise BagError(
                reader.path,
                f"topic {feature.topic} is {info.msgtype} in the bag, the contract expects {feature.msg_type} ({name})",
            )
    boundary = contract.episode_boundary.topic if contract.episode_boundary else None
    for topic, what, allowed in (
        (contract.task.topic, "task", (M.STRING, M.EPISODE_STATUS)),
        (boundary, "episode_boundary", (M.EPISODE_STATUS,)),
    ):
        info = topics.get(topic) if topic else None
        if info is not None and info.msgtype not in allowed:
            raise BagError(
                reader.path,
                f"the contract's {what} topic {topic} is {info.msgtype} in the bag, not "
                f"{' or '.join(allowed)}; point `{what}: {{topic: ...}}` at the right topic",
            )


def _resize_hint(feature) -> str:
    h, w = feature.shape[:2]
    return f"; add `{{resize: [{h}, {w}]}}` to {feature.name}'s transforms to write them all at {w}x{h}"


def _task_of(msg, msgtype: str) -> str:
    return str(msg.task if msgtype == M.EPISODE_STATUS else msg.data)


def plan_bag(reader: BagReader, contract: Contract, task: str | None = None) -> BagPlan:
    """Pass 1: samples of every contract topic, cut into episodes and resampled onto the fps grid."""
    _check_topics(reader, contract)
    by_topic: dict[str, list] = {}
    for feature in contract.features.values():
        by_topic.setdefault(feature.topic, []).append(feature)
    samples = {name: _Samples() for name in contract.features}
    tasks: list[tuple[int, str]] = []
    bounds: list[tuple[int, int]] = []  # (t, episode_index)
    ordinal: dict[str, int] = {}
    task_topic = contract.task.topic if contract.task.topic in reader.topics else None
    boundary = contract.episode_boundary.topic if contract.episode_boundary else None
    if boundary and boundary not in reader.topics:
        boundary = None
    wanted = set(by_topic) | {t for t in (task_topic, boundary) if t}
    for topic, msgtype, log_t, raw in reader.messages(wanted):
        n = ordinal.get(topic, 0)
        ordinal[topic] = n + 1
        if topic in (task_topic, boundary):
            msg = reader.deserialize(raw, msgtype, topic)
            if topic == task_topic:
                tasks.append((log_t, _task_of(msg, msgtype)))
            if topic == boundary:
                bounds.append((log_t, int(msg.episode_index)))
                if task_topic is None and msg.task:
                    tasks.append((log_t, str(msg.task)))
        for feature in by_topic.get(topic, ()):
            s = samples[feature.name]
            if feature.is_image:
                stamp = header_stamp_ns(raw) if feature.timeline == "header" else log_t
                if feature.msg_type == M.IMAGE:
                    msg = reader.deserialize(raw, msgtype, topic)
                    s.sizes.setdefault((int(msg.height), int(msg.width)), n)
                s.times.append(stamp)
                s.values.append(n)
            else:
                msg = reader.deserialize(raw, msgtype, topic)
                try:
                    s.values.append(feature.decode(msg))
                except ContractError as exc:
                    raise BagError(reader.path, f"message {n} on {topic}: {exc}") from None
                s.times.append(feature.stamp_ns(msg, log_t))
            if feature.timeline == "header" and s.clock_offset_ns is None:
                s.clock_offset_ns = s.times[-1] - log_t
    for name, s in samples.items():
        if len(s.sizes) > 1 and not contract.features[name].resizes:
            sizes = " -> ".join(f"{w}x{h}" for (h, w) in s.sizes)
            raise BagError(
                reader.path,
                f"images on {contract.features[name].topic} change size mid-bag ({sizes}){_resize_hint(contract.features[name])}",
            )
    _check_clocks(reader, contract, samples, boundary)
    spans = _episode_spans(bounds)
    plan = BagPlan(str(reader.path), [], truncated=reader.truncated, notes=list(reader.notes))
    if reader.truncated:
        plan.notes.append(
            f"truncated bag: read the complete chunks only ({reader.stream_stats.stop_reason if reader.stream_stats else ''})"
        )
    default_task = task or reader.custom_data.get(contract.task.metadata_key) or contract.task.default
    for i, (start, end) in enumerate(spans):
        plan.episodes.append(_plan_episode(reader, contract, samples, i, start, end, task, tasks, default_task))
    return plan


#: header stamps further than this from their log times are on another clock than the recorder's
CLOCK_SKEW_LIMIT_NS = 60 * 1_000_000_000


def _check_clocks(reader: BagReader, contract: Contract, samples: dict, boundary: str | None) -> None:
    """Header stamps are compared with log times (receive-timeline features, episode boundaries): both must come
    from one clock. A publisher on sim time and a recorder on wall time put every sample in the first episode
    and misalign the streams by the clocks' difference; say so instead."""
    header = {n: s.clock_offset_ns for n, s in samples.items() if s.clock_offset_ns is not None}
    receive = [n for n, f in contract.features.items() if f.timeline != "header"]
    if not header or not (receive or boundary):
        return
    name, offset = max(header.items(), key=lambda kv: abs(kv[1]))
    if abs(offset) <= CLOCK_SKEW_LIMIT_NS:
        return
    against = f"the episode boundaries on {boundary}" if boundary else f"{receive[0]}'s receive times"
    raise BagError(
        reader.path,
        f"{contract.features[name].topic} is stamped {offset / 1e9:+.0f} s from when the bag "
        f"logged it, and the contract compares its header stamps with {against}: the publisher "
        "and the recorder ran on different clocks (sim time and wall time?); record with one "
        f"clock (use_sim_time on both), or set `timeline: receive` on {name}",
    )


def _episode_spans(bounds: list[tuple[int, int]]) -> list[tuple[int | None, int | None]]:
    """[start, end) log-time spans where episode_index stays the same; one open span without a boundary topic."""
    if not bounds:
        return [(None, None)]
    spans: list[tuple[int | None, int | None]]
    spans, current, start = [], None, None
    for t, index in bounds:
        if index != current:
            if current is not None:
                spans.append((start, t))
            current, start = index, t
    spans.append((start, None))
    spans[0] = (None, spans[0][1])  # samples before the first status belong to the first episode
    return spans


def _plan_episode(reader, contract, samples, index, start, end, task_cli, tasks, default_task) -> EpisodePlan:
    streams = {}
    for name, s in samples.items():
        feature = contract.features[name]
        times = np.asarray(s.times, dtype=np.int64)
        sel = np.ones(times.size, dtype=bool)
        if start is not None:
            sel &= times >= start
        if end is not None:
            sel &= times < end
        idx = np.flatnonzero(sel)
        if feature.is_image:
            values = np.asarray(s.values, dtype=np.int64)[idx]
        else:
            values = np.stack(s.values)[idx] if s.values else np.zeros((0, len(feature.names)), np.float32)
        streams[name] = Stream(
            times[idx],
            values,
            numeric=not feature.is_image,
            policy=feature.alignment.policy,
            tolerance_ns=feature.alignment.tolerance_ns,
        )
    where = f"episode {index}" if (start is not None or end is not None) else "episode"
    empty = [contract.features[n].topic for n, st in streams.items() if st.times.size == 0]
    if empty:
        raise BagError(reader.path, f"{where}: no messages on {', '.join(empty)}")
    resampled = resample(streams, contract.fps)
    if resampled.grid.size == 0:
        raise BagError(reader.path, f"{where}: zero-length episode (the topics do not overlap in time)")
    ep_task = task_cli
    if ep_task is None:
        in_span = [txt for t, txt in tasks if (start is None or t >= start) and (end is None or t < end) and txt]
        before = [txt for t, txt in tasks if (start is not None and t < start) and txt]
        ep_task = (in_span or before or [None])[-1] or default_task
    if not ep_task:
        raise BagError(
            reader.path,
            f"{where}: no task (no task topic, no '{contract.task.metadata_key}' in the bag metadata, no default); pass --task",
        )
    numeric = {n: resampled.numeric(n) for n, st in streams.items() if st.numeric}
    ordinals = {
        n: np.asarray(resampled.streams[n].values, dtype=np.int64)[resampled.plans[n].a]
        for n, st in streams.items()
        if not st.numeric
    }
    return EpisodePlan(index, ep_task, resampled, numeric, ordinals, resampled.report.warnings())


def iter_frames(
    reader: BagReader, contract: Contract, plan: BagPlan, episodes: list[int] | None = None
) -> Iterator[tuple[int, int, dict]]:
    """Pass 2: (episode position in plan, frame index, frame) with every feature plus "task", in order."""
    chosen = [i for i in range(len(plan.episodes)) if episodes is None or i in episodes]
    order = [(e, k) for e in chosen for k in range(plan.episodes[e].frames)]
    image_names = list(contract.image_features)
    need: dict[str, set[int]] = {n: set() for n in image_names}
    for e in chosen:
        for n in image_names:
            need[n].update(int(o) for o in plan.episodes[e].image_ordinals[n])
    by_topic: dict[str, list] = {}
    for n in image_names:
        by_topic.setdefault(contract.features[n].topic, []).append(contract.features[n])
    decoded: dict[str, dict[int, Future[np.ndarray]]] = {n: {} for n in image_names}
    raw_size: dict[str, tuple] = {}
    ordinal: dict[str, int] = {}
    pos = 0

    def ready(e: int, k: int) -> bool:
        return all(int(plan.episodes[e].image_ordinals[n][k]) in decoded[n] for n in image_names)

    def emit(e: int, k: int) -> dict:
        ep = plan.episodes[e]
        frame = {n: contract.features[n].frame_value(ep.numeric[n][k]) for n in ep.numeric}
        for n in image_names:
            frame[n] = decoded[n][int(ep.image_ordinals[n][k])].result()
        frame["task"] = ep.task
        return frame

    def drop_unneeded(after: int) -> None:
        if after >= len(order):
            for n in image_names:
                decoded[n].clear()
            return
        e, k = order[after]
        for n in image_names:
            floor = int(plan.episodes[e].image_ordinals[n][k])
            for o in [o for o in decoded[n] if o < floor]:
                del decoded[n][o]

    if not image_names:
        for e, k in order:
            yield e, k, emit(e, k)
        return
    # Images decode on a small thread pool (OpenCV releases the GIL) while earlier frames are written:
    # a frame is emitted once the images of the next LOOKAHEAD frames are queued, which bounds memory.
    from concurrent.futures import ThreadPoolExecutor

    def decode(feature, msg, topic, n_ord):
        try:
            img = feature.raw_image(msg)
            first = raw_size.setdefault(feature.name, img.shape[:2])
            if img.shape[:2] != first and not feature.resizes:
                raise BagError(
                    reader.path,
                    f"images on {topic} change size mid-bag ({first[1]}x{first[0]} -> {img.shape[1]}x{img.shape[0]}){_resize_hint(feature)}",
                )
            return feature.finish_image(img)
        except ContractError as exc:
            raise BagError(reader.path, f"image {n_ord} on {topic}: {exc}") from None

    pool = ThreadPoolExecutor(max_workers=IMAGE_DECODE_THREADS, thread_name_prefix="decode")
    try:
        for topic, msgtype, _log_t, raw in reader.messages(by_topic):
            n_ord = ordinal.get(topic, 0)
            ordinal[topic] = n_ord + 1
            msg = None
            for feature in by_topic[topic]:
                if n_ord not in need[feature.name]:
                    continue
                if msg is None:
                    msg = reader.deserialize(raw, msgtype, topic)
                decoded[feature.name][n_ord] = pool.submit(decode, feature, msg, topic, n_ord)
            while pos < len(order) and ready(*order[min(pos + LOOKAHEAD, len(order) - 1)]):
                yield (*order[pos], emit(*order[pos]))
                pos += 1
                drop_unneeded(pos)
        while pos < len(order):
            if not ready(*order[pos]):
                raise BagError(
                    reader.path, f"image messages ended before frame {order[pos][1]} of episode {order[pos][0]}"
                )
            yield (*order[pos], emit(*order[pos]))
            pos += 1
            drop_unneeded(pos)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
