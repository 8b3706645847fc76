"""`lerobot-ros convert --executor ray`: the sharded conversion driven by Ray, on one machine or a cluster.

Each Ray task is exactly what a batch job runs: `lerobot-ros convert BAGS --num-shards K --shard-index I`
into its own folder, with its own QA report; the driver then joins the shards with `lerobot-ros merge`
(LeRobot's aggregation, no re-encoding; QA reports merged with the joined episode numbers). Without
`--ray-address` a local Ray cluster is started (one CPU per core, no dashboard) and shut down at the end;
with it (or inside a program that already called `ray.init`), the same tasks run on that cluster, so the
bags, the contract and `--out` must be on storage every node sees under the same path.
"""

from __future__ import annotations

import shutil
import sys
from argparse import Namespace
from pathlib import Path

TASK_CPUS = 2  # a shard's encoder keeps two cores busy (see lerobot_ros.dataset.parallel.ENCODER_CORES)


def convert_shard(argv: list[str]) -> int:
    """One shard's conversion in a Ray worker: the `convert` verb itself, so it matches a batch job's."""
    from lerobot_ros.cli.main import main

    return main(argv)


def run(args, contract, out: Path, bags: list[Path], repo_id: str) -> int:
    """Convert `bags` as Ray tasks (one per shard) and merge the shards into `out`."""
    from lerobot_ros.cli.convert import _fail

    try:
        import ray
    except ImportError:
        return _fail("--executor ray needs the `ray` package (pip install ray)")
    scratch = out.with_name(f".{out.name}.shards")
    if scratch.exists():
        return _fail(f"{scratch} exists (left by an interrupted run?); remove it first")
    started = not ray.is_initialized()
    if started:
        try:
            _init(ray, args.ray_address)
        except Exception as exc:  # ConnectionError, RuntimeError, ValueError: one line, nothing written
            why = " ".join(str(exc).split())[:200]
            return _fail(f"cannot reach the Ray cluster at {args.ray_address or 'local'} ({type(exc).__name__}: {why})")
    scratch.mkdir(parents=True)
    try:
        shards = _shard_count(ray, args, len(bags))
        task = ray.remote(num_cpus=min(TASK_CPUS, _cluster_cpus(ray)))(convert_shard)
        outs = [scratch / f"shard-{i:05d}" for i in range(shards)]
        refs = [
            task.remote(_shard_argv(args, contract, bags, shard_out, i, shards)) for i, shard_out in enumerate(outs)
        ]
        try:
            codes = ray.get(refs)
        except KeyboardInterrupt:
            for ref in refs:
                ray.cancel(ref, force=True)
            return _fail("interrupted; the Ray tasks were cancelled, nothing written", 130)
        parts = [shard_out for shard_out in outs if (shard_out / "meta" / "info.json").is_file()]
        if not parts:
            print("no episode converted; no dataset written", file=sys.stderr)
            return 1
        from lerobot_ros.cli import merge

        code = merge.run(Namespace(parts=[str(p) for p in parts], out=str(out), repo_id=repo_id))
        if code != 0:
            return code
        if getattr(args, "report", None):  # --report: the merged QA report there too, as one run writes it
            report = Path(args.report)
            report.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out / merge.QA, report)
            print(f"QA report: {report}")
        if getattr(args, "push_to_hub", None):
            from lerobot_ros.cli.convert import _push

            code = _push(out, args.push_to_hub)
        return max(code, 1 if any(codes) else 0)  # a shard with a failed bag: exit 1, as one run would
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if started:
            ray.shutdown()


#: Ray's raylet gives its Python agents 15 s to start, which a loaded small machine misses (the node then
#: aborts); a local cluster gets longer. Set RAY_agent_register_timeout_ms yourself to choose.
AGENT_TIMEOUT_MS = "180000"


def _init(ray, address: str | None) -> None:
    import logging
    import os

    if address:
        _check_reachable(address)
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    else:
        from lerobot_ros.dataset.parallel import usable_cores

        os.environ.setdefault("RAY_agent_register_timeout_ms", AGENT_TIMEOUT_MS)
        ray.init(num_cpus=usable_cores(), include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)


def _check_reachable(address: str, timeout_s: float = 10.0) -> None:
    """A host:port (or ray://host:port) that takes no TCP connection fails here, in seconds, instead of in
    Ray's own connection retries (minutes). `auto` and other forms are left to Ray."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ConnectionError(f"no Ray head answers at {host}:{port} ({exc.strerror or exc})") from None


def _cluster_cpus(ray) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _shard_count(ray, args, bags: int) -> int:
    """--workers shards when given, else as many as the cluster runs at once (its CPUs / a task's)."""
    if args.workers > 1:
        return min(bags, args.workers)
    return max(1, min(bags, _cluster_cpus(ray) // TASK_CPUS))


def _shard_argv(args, contract, bags: list[Path], shard_out: Path, index: int, count: int) -> list[str]:
    argv = [
        "convert",
        *map(str, bags),
        "--contract",
        str(contract.source),
        "--out",
        str(shard_out),
        "--num-shards",
        str(count),
        "--shard-index",
        str(index),
        "--vcodec",
        args.vcodec,
        "--no-progress",
    ]
    if args.task is not None:
        argv += ["--task", args.task]
    if args.strict:
        argv.append("--strict")
    return argv
