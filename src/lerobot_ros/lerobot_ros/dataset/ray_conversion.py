"""The sharded conversion driven by Ray (`executor: ray`), on one machine or a cluster.

Each Ray task converts one shard exactly as a batch job would (`conversion.convert_local` of the shard's config,
into its own folder, with its own QA report); the driver then joins the shards with `merge.merge` (LeRobot's
aggregation, no re-encoding; QA reports merged with the joined episode numbers). Without `ray_address` a
local Ray cluster is started (one CPU per core, no dashboard) and shut down at the end; with it (or inside a
program that already called `ray.init`), the same tasks run on that cluster, so the bags, the contract and
the dataset folder must be on storage every node sees under the same path.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from lerobot_ros.dataset.config import ConvertConfig, MergeConfig
from lerobot_ros.dataset.conversion import QA_NAME, ConvertError, ConvertResult, convert_local, prepare, shard_config

TASK_CPUS = 2  # a shard's encoder keeps two cores busy (see lerobot_ros.dataset.parallel.ENCODER_CORES)
#: Ray's raylet gives its Python agents 15 s to start, which a loaded small machine misses (the node then
#: aborts); a local cluster gets longer. Set RAY_agent_register_timeout_ms yourself to choose.
AGENT_TIMEOUT_MS = "180000"


def convert_shard(cfg: ConvertConfig) -> bool:
    """One shard's conversion in a Ray worker; True when every bag of it converted."""
    try:
        return convert_local(cfg).ok
    except ConvertError:
        return False


def convert_with_ray(cfg: ConvertConfig, say) -> ConvertResult:
    """Convert `cfg`'s bags as Ray tasks (one per shard) and merge the shards into `cfg.root`."""
    job = prepare(cfg)
    contract, out, bags, repo_id = job.contract, job.out, job.bags, job.repo_id
    try:
        import ray
    except ImportError:
        raise ConvertError("executor ray needs the `ray` package: pip install 'lerobot-ros[ray]'") from None
    scratch = out.with_name(f".{out.name}.shards")
    if scratch.exists():
        raise ConvertError(f"{scratch} exists (left by an interrupted run?); remove it first")
    started = not ray.is_initialized()
    if started:
        try:
            _init(ray, cfg.ray_address)
        except Exception as exc:  # ConnectionError, RuntimeError, ValueError: one line, nothing written
            why = " ".join(str(exc).split())[:200]
            raise ConvertError(
                f"cannot reach the Ray cluster at {cfg.ray_address or 'local'} ({type(exc).__name__}: {why})"
            ) from None
    scratch.mkdir(parents=True)
    try:
        shards = _shard_count(ray, cfg.num_workers, len(bags))
        task = ray.remote(num_cpus=min(TASK_CPUS, _cluster_cpus(ray)))(convert_shard)
        outs = [scratch / f"shard-{i:05d}" for i in range(shards)]
        base = replace(cfg, bags=[str(b) for b in bags], contract=str(contract.source))
        refs = [task.remote(shard_config(base, shard_out, i, shards)) for i, shard_out in enumerate(outs)]
        try:
            oks = ray.get(refs)
        except KeyboardInterrupt:
            for ref in refs:
                ray.cancel(ref, force=True)
            return ConvertResult(None, repo_id, {}, interrupted=True)
        parts = [shard_out for shard_out in outs if (shard_out / "meta" / "info.json").is_file()]
        if not parts:
            return ConvertResult(None, repo_id, {}, failed_shards=len(outs))
        from lerobot_ros.dataset.merge import merge

        merged = merge(MergeConfig(parts=[str(p) for p in parts], root=str(out), repo_id=repo_id))
        report = merged.report or {}
        report_path = out / QA_NAME if merged.report is not None else None
        if cfg.report and merged.report is not None:  # the merged QA report there too, as one run writes it
            report_path = Path(cfg.report)
            report_path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out / QA_NAME, report_path)
        # a shard with a failed bag makes the run not ok, as one local run would be
        return ConvertResult(out, repo_id, report, report_path, failed_shards=sum(1 for ok in oks if not ok))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if started:
            ray.shutdown()


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


def _shard_count(ray, workers: int, bags: int) -> int:
    """num_workers shards when given, else as many as the cluster runs at once (its CPUs / a task's)."""
    if workers > 1:
        return min(bags, workers)
    return max(1, min(bags, _cluster_cpus(ray) // TASK_CPUS))
