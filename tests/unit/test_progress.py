"""processes.progress.LogProgress: a child's log read as it grows, its counts turned into a console bar."""

from __future__ import annotations

from lerobot_ros.processes.progress import EVAL_EPISODE, TQDM_COUNT, TRAIN_STEP, LogProgress


def test_counts_follow_what_the_child_writes(tmp_path):
    log = tmp_path / "train.log"
    progress = LogProgress(log, TRAIN_STEP, 100, "train", enabled=False)
    assert progress.read() == 0  # no log yet
    log.write_text("INFO step:10 smpl:80 loss:1.5\nINFO step:2")  # the last line is still being written
    assert progress.read() == 10
    with open(log, "a") as f:
        f.write("0 smpl:160 loss:1.2\n")
    assert progress.read() == 20  # the partial line completed, not taken as step 2


def test_eval_episodes_and_a_tqdm_bar_give_done_and_total(tmp_path):
    log = tmp_path / "eval.log"
    log.write_text("ready in 3 s\n[1/4] push-v3 0 episode 0 seed 1000 (/sim_0): success\n[2/4] push-v3 ...\n")
    progress = LogProgress(log, EVAL_EPISODE, None, "eval", enabled=False)
    assert progress.read() == 2 and progress.total == 4
    bar = tmp_path / "convert.log"
    bar.write_text("convert:   0%|          | 0/3 [00:00<?, ?bag/s]\rconvert:  67%|######6   | 2/3 [00:04<00:02]\r")
    progress = LogProgress(bar, TQDM_COUNT, 3, "convert", enabled=False)
    assert progress.read() == 2  # \r-separated updates of one line, the newest counts


def test_the_bar_runs_in_a_thread_and_stops_with_the_context(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step:5\n")
    with LogProgress(log, TRAIN_STEP, 10, "train", enabled=True, poll_s=0.01) as progress:
        pass
    assert progress.done == 5 and not progress._thread.is_alive()
