"""Decode bags in worker processes while this process encodes: one LeRobot writer, never two.

On a small machine two encoders (one per worker, each multi-threaded) fight for the same cores and a
run with two workers took longer than with one. Here the workers only read and decode (lerobot_ros.bag,
no LeRobot or torch import, so each starts quickly and is started once for the whole run) and stream
frames through a bounded queue each; the parent writes them into a single dataset in bag order. Worker
w converts bags w, w+N, ... in order, so the parent always reads the queue whose bag is next.
Memory stays flat: each queue holds at most QUEUE_FRAMES frames. The caller decodes the first bag
itself, which hides the workers' start-up (a few seconds of imports) behind useful work.

Decode processes only help where cores are left over: the encoder (SVT-AV1, one per camera, each
threaded over every core) keeps a 2-core machine busy on its own, and decoding is ~10 % of the CPU
time, so there a process adds only its start-up and the frame copies through a pipe (measured: 2 workers
took 1.33x as long as 1). `decode_processes` picks the number from the cores, so N workers are never
slower than one.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue as queue_mod
import signal
from collections.abc import Generator, Iterator

from lerobot_ros.dataset.convert import END, FAILED, BagEntry, BagJob, BagStatus, read_bag

QUEUE_FRAMES = 8  # decoded frames buffered per worker (2 cameras 640x480: ~15 MB)
ENCODER_CORES = 2  # cores the encoder keeps busy before a decode process can run beside it without slowing it


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask, as a container or taskset limits it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def decode_processes(requested: int, bags: int, cores: int | None = None) -> int:
    """Decode processes to start for `--workers requested` over `bags` bags: none where the encoder needs
    every core (this process then decodes in turn), else up to one per core beyond the encoder's."""
    cores = usable_cores() if cores is None else cores
    return max(0, min(requested, bags - 1, cores - ENCODER_CORES))


def _decode_worker(jobs: list[BagJob], out, stop) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it stops us through `stop`
    for job in jobs:
        for item in read_bag(job, stop):
            out.put(item)
        if stop.is_set():
            return


class DecodePool:
    """`workers` decode processes for `jobs`; `items(job)` yields read_bag's items for each job in turn."""

    def __init__(self, jobs: list[BagJob], workers: int):
        ctx = mp.get_context("spawn")
        self.jobs = jobs
        self.n = max(1, min(workers, len(jobs)))
        self.stop = ctx.Event()
        self.queues = [ctx.Queue(maxsize=QUEUE_FRAMES) for _ in range(self.n)]
        self.procs = [
            ctx.Process(
                target=_decode_worker,
                args=(jobs[w :: self.n], self.queues[w], self.stop),
                daemon=True,
                name=f"lerobot-ros-decode-{w}",
            )
            for w in range(self.n)
        ]
        for proc in self.procs:
            proc.start()

    def items(self, position: int) -> Generator:
        """read_bag's items for jobs[position]: its BagEntry, then frames up to END/FAILED."""
        w = position % self.n
        q, proc, job = self.queues[w], self.procs[w], self.jobs[position]
        first = True
        while True:
            try:
                item = q.get(timeout=0.5)
            except queue_mod.Empty:
                if proc.is_alive():
                    continue
                error = f"{job.bag}: its decoding worker process died (exit code {proc.exitcode})"
                if first:
                    yield BagEntry(job.bag, BagStatus.FAILED, error)
                else:
                    yield FAILED, error
                return
            yield item
            if first and isinstance(item, BagEntry) and item.status is not BagStatus.OK:
                return  # a failed entry has nothing after it
            first = False
            if not isinstance(item, BagEntry) and item[0] in (END, FAILED):
                return

    def drain(self, items: Iterator) -> None:
        """Read a job's remaining items (the writer gave up part-way) so the next job's start is next."""
        for _ in items:
            pass

    def close(self) -> None:
        self.stop.set()
        for q in self.queues:  # unblock workers waiting on a full queue
            try:
                while True:
                    q.get_nowait()
            except (queue_mod.Empty, OSError, ValueError):
                pass
        for proc in self.procs:
            proc.join(timeout=2)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=2)
        for q in self.queues:
            q.close()
            q.cancel_join_thread()
