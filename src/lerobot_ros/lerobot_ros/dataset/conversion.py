"""Bags -> one LeRobotDataset: the whole conversion a user asks for, as one library call.

`converter.convert(ConvertConfig) -> ConvertResult` checks the settings, finds the bags (the shard's share of them),
converts each bag into a dataset part (`dataset.convert`: whole episodes or nothing), decoding in worker
processes where cores are left beside the encoder (`dataset.parallel`), or hands the shards to Ray
(`dataset.ray_conversion`); then merges the parts, reloads the result with LeRobotDataset as a check, writes
the QA report and, if asked, uploads the dataset. The dataset is built in a `.partial` folder and renamed
into place only when it reloaded: an interrupted or failed run leaves no half dataset.

Expected failures (a bad setting, a missing bag, an unloadable contract) raise `ConvertError` with one line.
This module converts on this machine (`convert_local`, what a Ray shard task runs too); `converter.convert` is
the entry point that also dispatches to Ray and uploads.
"""

from __future__ import annotations

import errno
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from lerobot_ros.conventions.errors import UserError
from lerobot_ros.dataset.config import ConvertConfig

if TYPE_CHECKING:
    from lerobot_ros.contract import Contract

QA_NAME = Path("meta") / "lerobot_ros_qa.json"
CONTRACT_NAME = Path("meta") / "lerobot_ros_contract.yaml"


class ConvertError(UserError):
    """A conversion that cannot start or finish; the message says what is wrong and what to do."""


@dataclass
class ConvertResult:
    """What a conversion did: the dataset (None when no episode made it), its QA report and the bags' fates."""

    dataset: Path | None
    repo_id: str
    report: dict
    report_path: Path | None = None
    entries: list = field(default_factory=list)  # dataset.convert.BagEntry per bag
    interrupted: bool = False
    uploaded: str | None = None  # the dataset's Hub URL
    upload_error: str | None = None
    failed_shards: int = 0  # executor ray: shards with a bag that did not convert

    @property
    def failed_bags(self) -> int:
        return sum(1 for e in self.entries if str(e.status) != "ok") + self.failed_shards

    @property
    def ok(self) -> bool:
        """Every bag converted, the dataset written (and uploaded when asked), not interrupted."""
        return self.dataset is not None and not self.interrupted and not self.failed_bags and not self.upload_error


def find_bags(paths: list[str]) -> list[Path]:
    """Bags among the arguments (bag folders, storage files, folders holding bags at any depth)."""
    from lerobot_ros.bag.layout import find_bags as find

    for arg in paths:
        if not Path(arg).exists():  # a mistyped path: one line before anything is converted
            raise FileNotFoundError(errno.ENOENT, "no such bag file or folder", str(arg))
    return find(paths)


def _quiet(_text: str) -> None:
    return None


def check(cfg: ConvertConfig) -> None:
    """The settings that can be checked before any bag is read; ConvertError otherwise."""
    from lerobot_ros.dataset.lerobot_writer import vcodec_choices

    if not cfg.bags:
        raise ConvertError("no bags given; pass bag folders, .mcap/.db3 files or folders holding bags")
    if not cfg.contract:
        raise ConvertError("no contract given; pass --contract (a contract YAML or a shipped name such as so101)")
    if not cfg.root:
        raise ConvertError("no output folder given; pass --dataset.root DIR (a new folder)")
    if cfg.vcodec not in vcodec_choices():
        raise ConvertError(
            f"unknown dataset.rgb_encoder.vcodec {cfg.vcodec!r}; choose one of {', '.join(vcodec_choices())}"
        )
    if cfg.ray_address and cfg.executor != "ray":
        raise ConvertError("ray_address needs executor ray (--executor ray)")
    if cfg.push_to_hub:
        from huggingface_hub.utils import HFValidationError, validate_repo_id

        repo = cfg.repo_id or ""
        try:
            validate_repo_id(repo)
            if "/" not in repo:
                raise HFValidationError("expected namespace/name")
        except HFValidationError as exc:
            raise ConvertError(
                f"dataset.push_to_hub needs dataset.repo_id as namespace/name on the Hub, got {repo!r} "
                f"({' '.join(str(exc).split())[:160]})"
            ) from None


@dataclass(frozen=True)
class Prepared:
    """A conversion's inputs once checked: the loaded contract, the output folder, this shard's bags."""

    contract: Contract
    out: Path
    bags: list[Path]
    repo_id: str
    shard_info: dict | None


def prepare(cfg: ConvertConfig) -> Prepared:
    """Check `cfg`, load its contract, find this shard's bags; ConvertError (one line) when any is wrong."""
    from lerobot_ros.contract import ContractError, load_contract

    check(cfg)
    try:
        contract = load_contract(cfg.contract)
    except ContractError as exc:
        raise ConvertError(str(exc)) from None
    out = Path(cfg.root).resolve()
    if out.exists():
        raise ConvertError(
            f"{out} exists already; choose a new dataset.root (episodes are never appended to an existing dataset)"
        )
    all_bags = find_bags(cfg.bags)
    bags = all_bags[cfg.shard_index :: cfg.num_shards]
    if not bags:
        raise ConvertError(f"shard {cfg.shard_index} of {cfg.num_shards} holds no bag ({len(all_bags)} bag(s) found)")
    shard_info = (
        {"index": cfg.shard_index, "count": cfg.num_shards, "bags_total": len(all_bags)} if cfg.num_shards > 1 else None
    )
    return Prepared(contract, out, bags, cfg.repo_id or f"local/{out.name}", shard_info)


def convert_local(cfg: ConvertConfig, say: Callable[[str], None] = _quiet) -> ConvertResult:
    """Convert this shard's bags on this machine into `cfg.root` (no upload: `converter.convert` does that)."""
    job = prepare(cfg)
    return _convert_here(cfg, job.contract, job.out, job.bags, job.repo_id, say, job.shard_info)


def _convert_here(cfg, contract, out: Path, bags: list[Path], repo_id: str, say, shard_info) -> ConvertResult:
    work = out.with_name(f".{out.name}.partial")
    if work.exists():
        raise ConvertError(f"{work} exists (left by an interrupted run?); remove it first")
    work.mkdir(parents=True)
    from lerobot_ros.dataset.convert import BagJob

    jobs = [
        BagJob(
            i,
            str(b),
            str(contract.source),
            str(work / f"part-{i:05d}"),
            f"local/part-{i:05d}",
            cfg.task,
            cfg.strict,
            cfg.vcodec,
        )
        for i, b in enumerate(bags)
    ]
    try:
        entries, interrupted = _run_jobs(jobs, cfg.num_workers, cfg.progress, say)
        return _finish(cfg, contract, out, work, repo_id, entries, interrupted, shard_info)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_jobs(jobs, workers: int, show_progress: bool, say):
    """Convert every job into one dataset part. One worker decodes in this process; N > 1 decode in N worker
    processes (lerobot_ros.dataset.parallel) while this process encodes, so there is only ever one encoder.
    Ctrl-C keeps the episodes saved so far."""
    from tqdm import tqdm

    from lerobot_ros.contract import load_contract
    from lerobot_ros.dataset.convert import BagStatus, read_bag, write_frames
    from lerobot_ros.dataset.lerobot_writer import create_dataset

    entries: dict = {}
    interrupted = False
    bar = tqdm(total=len(jobs), unit="bag", desc="convert", disable=not show_progress, file=sys.stderr)
    frames = [0]

    def tick(n: int) -> None:
        frames[0] += n
        bar.set_postfix(frames=frames[0], refresh=False)
        bar.refresh()

    pool = None
    if workers > 1 and len(jobs) > 1:  # the first bag decodes here while the workers start up
        from lerobot_ros.dataset.parallel import DecodePool, decode_processes, usable_cores

        n = decode_processes(workers, len(jobs))
        if n < min(workers, len(jobs) - 1):
            say(
                f"num_workers {workers}: {n} decode process(es) on {usable_cores()} core(s); the video encoder keeps "
                f"{'every core' if n == 0 else 'the rest'} busy, more would only slow it down"
            )
        if n > 0:
            pool = DecodePool(jobs[1:], n)
    shared = None
    try:
        shared = create_dataset(
            Path(jobs[0].part_root), jobs[0].part_repo_id, load_contract(jobs[0].contract), jobs[0].vcodec
        )
        job = None
        try:
            for position, job in enumerate(jobs):
                items = pool.items(position - 1) if pool is not None and position > 0 else read_bag(job)
                try:
                    entry = entries[job.index] = next(items)
                    if entry.status is BagStatus.OK:
                        write_frames(job, entry, items, shared, None, tick)  # marks `entry`'s written episodes
                        if pool is not None:
                            pool.drain(items)
                finally:
                    items.close()
                bar.update(1)
                if entry.status is BagStatus.STOPPED:
                    interrupted = True
                    break
        except KeyboardInterrupt:  # wherever it lands, between bags too: the episodes saved so far stay
            interrupted = True
            cut = entries.get(job.index) if job is not None else None
            if cut is not None and cut.status is BagStatus.OK and not all(e.written or e.skipped for e in cut.episodes):
                cut.status, cut.error = BagStatus.STOPPED, "interrupted; episodes not yet saved were discarded"
    finally:
        if pool is not None:
            pool.close()
        if shared is not None:
            if shared.has_pending_frames():
                shared.clear_episode_buffer()
            shared.finalize()
            if any(entry.written for entry in entries.values()):
                first = next(iter(entries.values()))
                first.part = (jobs[0].part_repo_id, jobs[0].part_root)
    bar.close()
    return [entries[j.index] if j.index in entries else _not_run(j) for j in jobs], interrupted


def _not_run(job):
    from lerobot_ros.dataset.convert import BagEntry, BagStatus

    return BagEntry(job.bag, BagStatus.STOPPED, "not converted (interrupted)")


def _finish(cfg, contract, out: Path, work: Path, repo_id: str, entries: list, interrupted: bool, shard_info):
    from lerobot_ros.dataset.lerobot_writer import merge_parts, verify_dataset
    from lerobot_ros.dataset.qa import build_report, write_report

    parts: list[tuple[str, Path]]
    expected: list[int]
    parts, expected = [], []
    for entry in entries:
        if entry.part:
            parts.append((entry.part[0], Path(entry.part[1])))
        for ep in entry.written:
            ep.dataset_episode = len(expected)
            expected.append(ep.frames)
    dataset_path = None
    if parts:
        staged = work / "dataset"
        merge_parts(parts, repo_id, staged)
        try:
            verify_dataset(staged, repo_id, expected)
        except Exception as exc:
            raise ConvertError(f"the written dataset failed its reload check: {exc}") from None
        shutil.copyfile(contract.source, staged / CONTRACT_NAME)
        staged.rename(out)
        dataset_path = out
    report = build_report(str(contract.source), entries, str(dataset_path) if dataset_path else None, interrupted)
    if shard_info:
        report["shard"] = shard_info
    report_path = Path(cfg.report) if cfg.report else (out / QA_NAME if dataset_path else None)
    if report_path is not None:
        write_report(report, report_path)
    return ConvertResult(dataset_path, repo_id, report, report_path, entries, interrupted)


def push(root: Path, repo: str) -> tuple[str | None, str | None]:
    """LeRobot's own upload of a finished dataset: (its URL, None), or (None, one line) when it failed (offline,
    no token); the dataset stays complete on disk either way."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    try:
        LeRobotDataset(repo, root=root).push_to_hub()
    except Exception as exc:
        why = " ".join(str(exc).split())[:200]
        return None, (
            f"the dataset is complete at {root}, but uploading it to the Hub as {repo} failed "
            f"({type(exc).__name__}: {why}); upload it later with "
            f"LeRobotDataset({repo!r}, root={str(root)!r}).push_to_hub()"
        )
    return f"https://huggingface.co/datasets/{repo}", None


def shard_config(cfg: ConvertConfig, root: Path, index: int, count: int) -> ConvertConfig:
    """The config of one shard of `cfg` (a batch job's or a Ray task's): its own folder, no upload, quiet."""
    return replace(
        cfg,
        root=str(root),
        repo_id=None,
        num_shards=count,
        shard_index=index,
        executor="local",
        ray_address=None,
        report=None,
        push_to_hub=False,
        progress=False,
        num_workers=1,
    )
