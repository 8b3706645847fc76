"""The episode loop of one task: seeds start_seed + i handed to whichever bridge is free, videos of the first.

A bridge (or its policy source) that dies mid-episode loses only that bridge: its episode goes back in
the queue and is re-run from its seed on a bridge that still runs (a seeded episode is reproducible,
so the re-run scores what the lost one would have). When no bridge is left, the episodes not run are
reported failed in `failed` (not scored) and the loop ends; the caller still writes eval_info.json.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from lerobot_ros.eval.results import EpisodeResult
from lerobot_ros.sim.registry import TaskRef


@dataclass
class TaskOutcome:
    results: list[EpisodeResult]
    eval_s: float
    failed: list[dict] = field(default_factory=list)  # {"episode_ix", "seed", "reason"} of episodes not run
    lost_workers: list[str] = field(default_factory=list)  # one line per bridge that died
    setup_s: float = 0.0  # start-up of this task's processes until the first reset could go out
    video_errors: list[str] = field(default_factory=list)


class EpisodeLoop:
    """Runs one task's episodes over the workers (one thread each)."""

    def __init__(
        self,
        task: TaskRef,
        n_episodes: int,
        start_seed: int,
        videos: int,
        videos_dir: Path,
        writer,
        printer=print,
        alive=None,
        keep=None,
    ):
        self.task, self.n, self.start_seed, self.videos = task, n_episodes, start_seed, videos
        self.videos_dir, self.writer, self.print = Path(videos_dir), writer, printer
        #: worker -> one line when its own processes died (None while they run); None: no such check
        self.alive = alive
        #: (worker, result) -> None: keeps a finished episode as data (eval.rollouts) before the next reset
        self.keep = keep

    def run(self, workers) -> TaskOutcome:
        from lerobot_ros.eval.worker import EvalError

        jobs: deque[int] = deque(range(self.n))
        results: list[EpisodeResult] = []
        errors: list[BaseException] = []
        lost: list[str] = []
        running = {id(w) for w in workers}
        cond = threading.Condition()
        inflight = [0]  # episodes being run: one may come back to the queue if its bridge dies
        start = time.monotonic()

        def take() -> int | None:
            with cond:
                while not errors:
                    if jobs:
                        inflight[0] += 1
                        return jobs.popleft()
                    if inflight[0] == 0:
                        return None
                    cond.wait(0.5)
                return None

        def finish(requeue: int | None = None) -> None:
            with cond:
                inflight[0] -= 1
                if requeue is not None:
                    jobs.appendleft(requeue)
                cond.notify_all()

        def work(w):
            while (i := take()) is not None:
                record = i < self.videos
                try:
                    w.enable_video(record)
                    result, frames = w.run_episode(i, self.start_seed + i, record)
                except EvalError as exc:
                    died = self.alive(w) if self.alive else None
                    if not died:
                        errors.append(exc)
                        finish()
                        return
                    with cond:  # this bridge is gone: its episode goes to another one
                        lost.append(died)
                        running.discard(id(w))
                    self.print(f"{w.ns} stopped ({died}); episode {i} goes back in the queue")
                    finish(requeue=i)
                    return
                except BaseException as exc:  # noqa: BLE001 - surfaced after the other workers stop
                    errors.append(exc)
                    finish()
                    return
                if record:
                    result.video_path = self.writer.write(self.videos_dir / f"eval_episode_{i}.mp4", frames)
                result.group, result.task_id = self.task.group, self.task.task_id
                if self.keep is not None:
                    try:
                        self.keep(w, result)
                    except BaseException as exc:  # noqa: BLE001 - surfaced after the other workers stop
                        errors.append(exc)
                        finish()
                        return
                with cond:
                    results.append(result)
                    done = len(results)
                rate = 60 * done / max(time.monotonic() - start, 1e-9)
                eta = f", about {(self.n - done) / rate:.1f} min to go" if done < self.n else ""
                self.print(
                    f"[{done}/{self.n}] {self.task.group} {self.task.task_id} episode {i} seed {result.seed} ({w.ns}): "
                    f"{'success' if result.success else 'failure'} in {result.n_steps} steps, "
                    f"sum_reward {result.sum_reward:.3f}, {result.wall_s:.1f} s  ({rate:.1f} episodes/min{eta})"
                )
                finish()

        threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        eval_s = time.monotonic() - start
        if errors:
            raise errors[0]
        for w in workers:
            if id(w) in running:
                w.enable_video(False)
        failed = []
        for i in sorted(jobs):
            failed.append(
                {
                    "episode_ix": i,
                    "seed": self.start_seed + i,
                    "reason": f"no bridge left to run it ({lost[-1] if lost else 'none started'})",
                }
            )
        return TaskOutcome(results, eval_s, sorted(failed, key=lambda f: f["episode_ix"]), lost)
