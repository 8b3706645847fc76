"""Convert rosbag2 recordings into a LeRobotDataset v3, per a topic contract.

Each bag is one episode (or several, where the contract's episode_boundary topic says so). With
--workers N, up to N processes read and decode bags while this one encodes them into a single dataset
(as many as the cores beyond the encoder's: none on 2 cores). With --executor ray, shards of the bags are
converted as Ray tasks (local cluster, or --ray-address) and merged (lerobot_ros.cli.convert_ray).
Each episode is written whole or not at all; bad bags are reported and skipped; the dataset is reloaded with LeRobotDataset as a check; a QA report (JSON and
a table) says per episode and stream what the resampler had to do. Ctrl-C keeps the finished episodes.
"""

from __future__ import annotations

import argparse
import errno
import shutil
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bags", nargs="+", help="bag folders, .mcap/.db3 files, or folders holding bags")
    p.add_argument("--contract", required=True, help="contract YAML path or shipped name (so101, koch, metaworld ...)")
    p.add_argument("--out", required=True, help="output dataset folder (must not exist)")
    p.add_argument("--repo-id", default=None, help="dataset repo id (default: local/<out folder name>)")
    p.add_argument("--task", default=None, help="task string for every episode (overrides topic and metadata)")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="decode processes (default 1: none); used only where cores are left beside the encoder. "
        "With --executor ray: the number of shards (default: the cluster's CPUs / 2)",
    )
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="local: this machine (default); ray: shards as Ray tasks, merged at the end",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="with --executor ray: an existing Ray cluster (e.g. ray://head:10001 or auto); default: a local one. "
        "Bags, contract and --out must then be on storage every node sees",
    )
    p.add_argument("--vcodec", default="libsvtav1", help="video codec (LeRobot's choices; default libsvtav1)")
    p.add_argument("--strict", action="store_true", help="treat QA warnings as failures (the episode is not written)")
    p.add_argument("--report", default=None, help="QA report JSON path (default: OUT/meta/lerobot_ros_qa.json)")
    p.add_argument(
        "--num-shards", type=int, default=1, help="split the bags into K shards (batch jobs); see --shard-index"
    )
    p.add_argument(
        "--shard-index",
        type=int,
        default=0,
        help="convert only shard I of --num-shards (bags I, I+K, ... of the sorted list); join the parts with `lerobot-ros merge`",
    )
    p.add_argument(
        "--push-to-hub",
        default=None,
        metavar="REPO",
        help="upload the finished dataset to the Hugging Face Hub as REPO (namespace/name) with LeRobot's push_to_hub",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def find_bags(paths: list[str]) -> list[Path]:
    """Bags among the arguments (bag folders, storage files, folders holding bags at any depth)."""
    from lerobot_ros.bag.layout import find_bags as find

    for arg in paths:
        if not Path(arg).exists():  # a mistyped path: one line (cli.main) before anything is converted
            raise FileNotFoundError(errno.ENOENT, "no such bag file or folder", str(arg))

    return find(paths)


def _fail(msg: str, code: int = 2) -> int:
    print(f"lerobot-ros convert: {msg}", file=sys.stderr)
    return code


def run(args) -> int:
    from lerobot_ros.contract import ContractError, load_contract

    try:
        contract = load_contract(args.contract)
    except ContractError as exc:
        return _fail(str(exc))
    out = Path(args.out).resolve()
    if out.exists():
        return _fail(f"{out} exists already; choose a new --out (episodes are never appended to an existing dataset)")
    if args.workers < 1:
        return _fail("--workers must be at least 1")
    from lerobot_ros.dataset.writer import vcodec_choices

    if args.vcodec not in vcodec_choices():
        return _fail(f"unknown --vcodec {args.vcodec!r}; choose one of {', '.join(vcodec_choices())}")
    if args.num_shards < 1 or not 0 <= args.shard_index < args.num_shards:
        return _fail(f"--shard-index must be in 0..{args.num_shards - 1} and --num-shards at least 1")
    all_bags = find_bags(args.bags)
    bags = all_bags[args.shard_index :: args.num_shards]
    if not bags:
        return _fail(f"shard {args.shard_index} of {args.num_shards} holds no bag ({len(all_bags)} bag(s) found)")
    args.shard = (
        None
        if args.num_shards == 1
        else {"index": args.shard_index, "count": args.num_shards, "bags_total": len(all_bags)}
    )
    if args.push_to_hub is not None:
        from huggingface_hub.utils import HFValidationError, validate_repo_id

        try:
            validate_repo_id(args.push_to_hub)
            if "/" not in args.push_to_hub:
                raise HFValidationError("expected namespace/name")
        except HFValidationError as exc:
            return _fail(
                f"--push-to-hub {args.push_to_hub!r} is not a Hub repo id ({' '.join(str(exc).split())[:160]})"
            )
    repo_id = args.repo_id or args.push_to_hub or f"local/{out.name}"
    if args.executor == "ray":
        from lerobot_ros.cli import convert_ray

        return convert_ray.run(args, contract, out, bags, repo_id)
    if args.ray_address:
        return _fail("--ray-address needs --executor ray")
    work = out.with_name(f".{out.name}.partial")
    if work.exists():
        return _fail(f"{work} exists (left by an interrupted run?); remove it first")
    work.mkdir(parents=True)
    from lerobot_ros.dataset.convert import BagJob

    jobs = [
        BagJob(
            i,
            str(b),
            str(contract.source),
            str(work / f"part-{i:05d}"),
            f"local/part-{i:05d}",
            args.task,
            args.strict,
            args.vcodec,
        )
        for i, b in enumerate(bags)
    ]
    try:
        entries, interrupted = _run_jobs(jobs, args.workers, not args.no_progress)
        return _finish(args, contract, out, work, repo_id, entries, interrupted)
    except KeyboardInterrupt:
        print("lerobot-ros convert: interrupted again; nothing written", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_jobs(jobs, workers: int, show_progress: bool):
    """Convert every job into one dataset part. --workers 1 decodes in this process; N > 1 decodes in N
    worker processes (lerobot_ros.dataset.parallel) while this process encodes, so there is only ever one
    encoder. Ctrl-C keeps the episodes saved so far."""
    from tqdm import tqdm

    from lerobot_ros.contract import load_contract
    from lerobot_ros.dataset.convert import BagStatus, read_bag, write_frames
    from lerobot_ros.dataset.writer import create_dataset

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
            print(
                f"lerobot-ros convert: --workers {workers}: {n} decode process(es) on {usable_cores()} core(s); the video "
                f"encoder keeps {'every core' if n == 0 else 'the rest'} busy, more would only slow it down",
                file=sys.stderr,
            )
        if n > 0:
            pool = DecodePool(jobs[1:], n)
    shared = None
    try:
        shared = create_dataset(
            Path(jobs[0].part_root), jobs[0].part_repo_id, load_contract(jobs[0].contract), jobs[0].vcodec
        )
        for position, job in enumerate(jobs):
            items = pool.items(position - 1) if pool is not None and position > 0 else read_bag(job)
            try:
                entry = next(items)
                if entry.status is BagStatus.OK:
                    entry = write_frames(job, entry, items, shared, None, tick)
                    if pool is not None:
                        pool.drain(items)
            except KeyboardInterrupt:
                interrupted = True
                break
            finally:
                items.close()
            entries[job.index] = entry
            bar.update(1)
            if entry.status is BagStatus.STOPPED:
                interrupted = True
                break
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


def _finish(args, contract, out: Path, work: Path, repo_id: str, entries: list, interrupted: bool) -> int:
    from lerobot_ros.dataset.qa import build_report, format_table, write_report
    from lerobot_ros.dataset.writer import merge_parts, verify_dataset

    parts, expected = [], []
    for entry in entries:
        if entry.part:
            parts.append((entry.part[0], Path(entry.part[1])))
        for ep in entry.written:
            ep.dataset_episode = len(expected)
            expected.append(ep.frames)
    dataset_path = None
    code = 0
    if parts:
        staged = work / "dataset"
        merge_parts(parts, repo_id, staged)
        try:
            verify_dataset(staged, repo_id, expected)
        except Exception as exc:
            print(f"lerobot-ros convert: the written dataset failed its reload check: {exc}", file=sys.stderr)
            return 1
        meta = staged / "meta"
        shutil.copyfile(contract.source, meta / "lerobot_ros_contract.yaml")
        staged.rename(out)
        dataset_path = str(out)
    report = build_report(str(contract.source), entries, dataset_path, interrupted)
    if getattr(args, "shard", None):
        report["shard"] = args.shard
    report_path = Path(args.report) if args.report else (out / "meta" / "lerobot_ros_qa.json" if dataset_path else None)
    if report_path is not None:
        write_report(report, report_path)
    print(format_table(report))
    if report_path is not None:
        print(f"QA report: {report_path}")
    if dataset_path:
        print(f"dataset: {dataset_path} (repo id {repo_id})")
    else:
        print("no episode converted; no dataset written", file=sys.stderr)
        code = 1
    if interrupted:
        return 130
    if any(e.status != "ok" for e in entries):
        code = 1
    if dataset_path and getattr(args, "push_to_hub", None):
        code = max(code, _push(out, args.push_to_hub))
    return code


def _push(root: Path, repo: str) -> int:
    """LeRobot's own upload of the finished dataset; a failure (offline, no token) is one line, and the
    dataset stays complete on disk."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    try:
        LeRobotDataset(repo, root=root).push_to_hub()
    except Exception as exc:
        why = " ".join(str(exc).split())[:200]
        return _fail(
            f"the dataset is complete at {root}, but uploading it to the Hub as {repo} failed "
            f"({type(exc).__name__}: {why}); upload it later with LeRobotDataset({repo!r}, root={str(root)!r}).push_to_hub()",
            1,
        )
    print(f"uploaded: https://huggingface.co/datasets/{repo}")
    return 0
