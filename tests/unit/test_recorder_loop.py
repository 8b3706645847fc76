"""The episode recorder's logic without ROS (record/recorder.py): typed dispatch of the episode loop onto a
real EpisodeSession writing real bags, the first episode's wait for topics, draining before exit, a writer
error ending the session, run-time reconfiguration and the status / diagnostics / progress reports."""

from __future__ import annotations

import pytest
from rosbags.rosbag2 import Reader

from lerobot_ros.record.episode_loop import DONE, RECORDING, RESETTING, EpisodeControl
from lerobot_ros.record.recorder import ERROR, OK, Recorder
from lerobot_ros.record.session import EpisodeError, EpisodeSession, TopicSpec
from lerobot_ros.record.streams import WantedTopic
from lerobot_ros.testing.raw_messages import JS, SENSOR, joint_state


class Lines:
    """Collects what the recorder logs (it logs through an rclpy logger in the node)."""

    def __init__(self):
        self.lines: list[tuple[str, str]] = []

    def info(self, message):
        self.lines.append(("info", message))

    def warning(self, message):
        self.lines.append(("warning", message))

    def error(self, message):
        self.lines.append(("error", message))

    def text(self, level: str) -> str:
        return "\n".join(m for lv, m in self.lines if lv == level)


def make(tmp_path, topics=("/js",), subscribed=("/js",), **kwargs):
    session = EpisodeSession(tmp_path / "out", clock_ns=iter(range(10**9, 10**12, 10**6)).__next__)
    control = EpisodeControl(
        kwargs.pop("episode_time_s", 0.0), kwargs.pop("reset_time_s", 0.0), kwargs.pop("num_episodes", 0)
    )
    statuses, saved, log = [], [], Lines()
    rec = Recorder(
        session,
        control,
        [WantedTopic(t, JS, 30.0) for t in topics],
        log,
        now=0.0,
        on_status=statuses.append,
        on_saved=saved.append,
        fps=30.0,
        **kwargs,
    )
    for topic in subscribed:
        session.add_topic(TopicSpec(topic, JS, [SENSOR], expected_hz=30.0))
        rec.subscribed.add(topic)
    return rec, statuses, saved, log


def write(rec, n, now=0.0, topic="/js"):
    for i in range(n):
        rec.message(topic, 10**9 + i, joint_state(i), now)


def counts(path):
    with Reader(path) as reader:
        return {c.topic: c.msgcount for c in reader.connections}


def test_keyboard_commands_drive_the_session(tmp_path):
    rec, statuses, saved, log = make(tmp_path, task="pour")
    rec.command(" NEXT\n", 1.0)  # as the keyboard sends it
    assert rec.session.recording and rec.control.state == RECORDING
    assert statuses[-1].episode_index == 0 and not statuses[-1].done and statuses[-1].task == "pour"
    write(rec, 5)
    rec.command("rerecord", 2.0)  # discard, record the same index again
    assert "episode 0 discarded" in log.text("info") and rec.session.recording and rec.session.index == 0
    write(rec, 7)
    rec.command("next", 3.0)
    assert [r.path.name for r in saved] == ["episode_000000"] and counts(saved[0].path) == {"/js": 7}
    assert statuses[-1].done and statuses[-1].success
    assert statuses[-1].episode_index == 0  # the episode that ended (the session already counts the next one)
    assert rec.status().episode_index == 0 and rec.status().done  # between episodes: still the last one
    rec.command("jump", 4.0)
    assert "unknown command 'jump'" in log.text("warning") and rec.exit_code is None
    rec.command("stop", 5.0)  # idle: the session ends without a new episode
    assert rec.control.state == DONE and rec.exit_code == 0 and not rec.session.recording


def test_a_key_whose_episode_cannot_start_ends_the_loop_without_a_phantom_episode(tmp_path):
    """The output folder cannot be made: `next` logged the error but left the loop RECORDING, so the next `next`
    counted a kept episode that was never recorded."""
    (tmp_path / "out").write_text("a file where the episodes folder should be")
    rec, statuses, saved, log = make(tmp_path)
    rec.command("next", 1.0)
    assert "cannot start an episode: cannot create" in log.text("error")
    assert rec.control.state == DONE and not rec.session.recording and rec.exit_code == 1
    rec.command("next", 2.0)
    assert rec.control.kept == 0 and not saved


def test_services_and_the_default_outcome(tmp_path):
    rec, statuses, saved, log = make(tmp_path)
    assert rec.start("wave", 0.0).startswith("recording episode 0 into")
    with pytest.raises(EpisodeError, match="already recording"):
        rec.start(None, 0.5)
    write(rec, 3)
    rec.reconfigure({"default_outcome": "failure"})
    message, path = rec.stop(None, 1.0)  # no outcome in the request: the default
    assert "saved (failure)" in message and path.endswith("episode_000000")
    assert saved[0].custom_data["outcome"] == "failure" and saved[0].custom_data["task"] == "wave"
    rec.start(None, 2.0)
    assert rec.stop("discard", 3.0) == ("episode 1 discarded", "")
    with pytest.raises(EpisodeError, match="no episode is recording"):
        rec.stop("success", 4.0)


def test_the_clock_jumping_back_ends_the_episode_at_the_jump_and_keeps_it(tmp_path):
    """A simulator restarted under use_sim_time: its /clock starts over. The episode keeps what came before the
    jump (an ordered, readable bag), ends in one line, and the next one records on the new clock."""
    rec, statuses, saved, log = make(tmp_path)
    rec.start("pick", 0.0)
    for i in range(5):
        rec.message("/js", 20 * 10**9 + i * 33 * 10**6, joint_state(i), 0.1)
    for i in range(3):  # the restarted simulator's clock: 12.1 s back
        rec.message("/js", 8 * 10**9 + i * 33 * 10**6, joint_state(i), 0.2)
    assert rec.session.recording  # the jump is handled on the recorder's tick, not in the DDS callback
    rec.tick(0.3)
    assert not rec.session.recording and [r.path.name for r in saved] == ["episode_000000"]
    assert counts(saved[0].path) == {"/js": 5}
    assert saved[0].custom_data["ended"] == "ROS time jumped back 12.1 s (a simulator restarted?)"
    assert saved[0].custom_data["outcome"] == "success" and statuses[-1].done
    assert log.text("warning") == (
        "ROS time jumped back 12.1 s (a simulator restarted?): episode 0 ended at the jump with what it had; "
        "start the next one when ready"
    )
    rec.message("/js", 9 * 10**9, joint_state(0), 0.4)  # between episodes: not recorded, no error
    rec.start(None, 0.5)
    write(rec, 4, now=0.6)  # the new clock, 1 s on
    rec.stop("success", 0.7)
    assert counts(saved[1].path) == {"/js": 4} and "ended" not in saved[1].custom_data


def test_a_jump_in_the_automatic_loop_starts_the_next_episode_on_the_new_clock(tmp_path):
    rec, statuses, saved, log = make(tmp_path, episode_time_s=60.0)
    rec.tick(0.0)
    assert rec.session.recording
    rec.message("/js", 30 * 10**9, joint_state(0), 0.1)
    rec.message("/js", 30 * 10**9 + 10**8, joint_state(1), 0.1)
    rec.message("/js", 10**9, joint_state(2), 0.2)
    rec.tick(0.3)
    assert [r.path.name for r in saved] == ["episode_000000"] and counts(saved[0].path) == {"/js": 2}
    assert rec.session.recording and rec.session.index == 1  # the next one at once
    assert log.text("warning").endswith("the next one starts on the new clock")
    rec.message("/js", 10**9 + 10**8, joint_state(3), 0.4)
    rec.command("next", 0.5)
    assert counts(saved[1].path) == {"/js": 1}


def test_a_given_task_makes_the_first_episode_wait_for_the_data_topics_only(tmp_path):
    """The contract's task topic is metadata: with `task` set nobody needs to publish it, so the automatic loop does
    not wait wait_for_topics_s for it (a robot without a /task publisher recorded 120 s late)."""
    rec, *_ = make(
        tmp_path, topics=("/js", "/task"), episode_time_s=1.0, num_episodes=1, wait_for_topics_s=60.0,
        task="pour", task_topic=("/task", "std_msgs/msg/String"),
    )  # fmt: skip
    rec.tick(0.5)
    assert rec.session.recording and rec.missing() == ["/task"]
    waiting, *_ = make(
        tmp_path / "b", topics=("/js", "/task"), episode_time_s=1.0, num_episodes=1, wait_for_topics_s=60.0,
        task_topic=("/task", "std_msgs/msg/String"),
    )  # fmt: skip
    waiting.tick(0.5)
    assert not waiting.session.recording  # its episodes take their task from /task: it waits


def test_automatic_loop_waits_for_its_topics_then_ends(tmp_path):
    rec, statuses, saved, log = make(
        tmp_path, topics=("/js", "/late"), episode_time_s=1.0, reset_time_s=0.5, num_episodes=2, wait_for_topics_s=3.0
    )
    rec.tick(1.0)
    assert not rec.session.recording and rec.missing() == ["/late"]  # still waiting for /late
    rec.tick(3.5)  # gave up waiting: records without it, and says so once
    assert rec.session.recording and "no publisher after 3 s for: /late" in log.text("warning")
    write(rec, 4, now=3.6)
    rec.tick(4.5)
    assert rec.control.state == RESETTING and [r.path.name for r in saved] == ["episode_000000"]
    assert rec.progress_line(4.7).startswith("reset 0.2/0.5 s (1/2 episodes kept)")
    rec.tick(5.0)
    assert rec.session.recording and rec.progress_line(5.1).startswith("episode 1 (2/2)")
    rec.tick(6.0)
    assert rec.exit_code == 0 and len(saved) == 2 and log.text("warning").count("no publisher") == 1


def test_exit_when_done_false_keeps_the_process(tmp_path):
    rec, *_ = make(tmp_path, num_episodes=1, exit_when_done=False)
    rec.command("next", 0.0)
    rec.command("next", 1.0)
    assert rec.control.state == DONE and rec.exit_code is None


def test_a_stop_request_drains_before_the_exit(tmp_path):
    rec, *_ = make(tmp_path, drain_s=1.0)
    rec.start(None, 0.0)
    write(rec, 3, now=10.0)
    assert rec.request_stop(10.0) and not rec.request_stop(10.1)  # a second request: the caller stops at once
    rec.tick(10.1)
    assert rec.exit_code is None  # messages still arriving
    write(rec, 2, now=10.2)
    rec.tick(10.3)
    assert rec.exit_code is None
    rec.tick(10.5)  # quiet for 0.3 s: drained
    assert rec.exit_code == 0
    result = rec.close()
    assert result.custom_data["outcome"] == "interrupted" and counts(result.path) == {"/js": 5}


def test_draining_ends_after_drain_s_even_while_messages_arrive(tmp_path):
    rec, *_ = make(tmp_path, drain_s=0.5)
    rec.start(None, 0.0)
    rec.request_stop(1.0)
    for now in (1.1, 1.2, 1.3, 1.4):
        write(rec, 1, now=now)
        rec.tick(now)
        assert rec.exit_code is None
    write(rec, 1, now=1.6)
    rec.tick(1.6)
    assert rec.exit_code == 0


def test_a_writer_error_closes_the_episode_and_ends_with_status_1(tmp_path):
    rec, statuses, saved, log = make(tmp_path, episode_time_s=10.0)
    assert rec.tick(0.0)  # the first tick reports
    write(rec, 3)
    diag = {d.name: d for d in rec.diagnostics()}
    assert diag["episode_recorder: writer"].level == OK and diag["episode_recorder: /js"].values["count"] == "3"
    # what the bag writer does on ENOSPC / EFBIG: it stops and reports through the session's error hook
    rec.session._writer_error("write failed: [Errno 28] No space left on device")
    assert rec.diagnostics()[-1].level == ERROR
    assert not rec.tick(0.5)  # the next report is due 1 s after the first
    assert rec.exit_code == 1 and rec.control.state == DONE and not rec.session.recording
    assert saved[0].custom_data["outcome"] == "failure" and rec.diagnostics() == []


def test_reconfigure_applies_or_refuses(tmp_path):
    rec, *_ = make(tmp_path, episode_time_s=5.0, num_episodes=3)
    rec.reconfigure(
        {
            "dataset.episode_time_s": 2,
            "dataset.num_episodes": 1,
            "task": "stack",
            "min_free_mb": 1.0,
            "progress_period_s": 0.2,
        }
    )
    c, s = rec.control, rec.session
    assert (c.episode_time_s, c.num_episodes, s.task, s.writer_settings.min_free_bytes, rec.progress_period_s) == (
        2.0,
        1,
        "stack",
        2**20,
        0.2,
    )
    rec.tick(0.0)
    rec.tick(2.0)  # the new episode length and count act at once: one 2 s episode, then done
    assert rec.exit_code == 0
    with pytest.raises(ValueError, match="cannot switch between manual"):
        rec.reconfigure({"dataset.episode_time_s": 0.0})
    with pytest.raises(ValueError, match="output_dir: not settable at run time"):
        rec.reconfigure({"output_dir": "/elsewhere"})


def test_status_and_description(tmp_path):
    rec, *_ = make(tmp_path)
    assert rec.status() == (0, 0, True, False, "")
    assert rec.describe("out") == "recording 1 topic(s) into out; manual (services / keyboard); next episode index 0"
    assert rec.progress_line(0.0) == "idle: 0 episodes kept"
    rec.offer(["/rosout", "/x"])  # only with all_topics
    assert list(rec.wanted) == ["/js"]
    with pytest.raises(ValueError, match="nothing to record"):
        make(tmp_path, topics=(), subscribed=())
    everything, *_ = make(tmp_path / "all", topics=(), subscribed=(), all_topics=True)
    everything.offer(["/rosout", "/parameter_events", "/diagnostics", "/ns/episode_status", "/cam/image_raw"])
    assert list(everything.wanted) == ["/cam/image_raw"]


def test_the_task_topic_names_the_next_episode_unless_a_task_was_given(tmp_path):
    """A latched task published before an episode starts is not in that episode's bag: the recorder keeps the
    newest one and writes it into the episode's metadata (where the converter looks next)."""
    from lerobot_ros.bag.typestore import make_typestore

    store = make_typestore(shared=True)
    String = store.types["std_msgs/msg/String"]

    def task(text: str) -> bytes:
        return bytes(store.serialize_cdr(String(data=text), "std_msgs/msg/String"))

    rec, _statuses, saved, _log = make(tmp_path / "a", task_topic=("/task", "std_msgs/msg/String"))
    rec.session.add_topic(TopicSpec("/task", "std_msgs/msg/String", [SENSOR]))
    rec.message("/task", 5, task("pick the cube"), 0.0)  # before the episode: not in its bag
    rec.start(None, 0.0)
    write(rec, 3)
    rec.message("/task", 10**9 + 5, task("place it"), 0.5)  # during it: the next episode's
    rec.stop("success", 1.0)
    rec.start(None, 2.0)
    rec.stop("success", 3.0)
    assert [r.custom_data["task"] for r in saved] == ["pick the cube", "place it"]
    given, _statuses, saved_given, _log = make(tmp_path / "b", task="wave", task_topic=("/task", "std_msgs/msg/String"))
    given.session.add_topic(TopicSpec("/task", "std_msgs/msg/String", [SENSOR]))
    given.message("/task", 5, task("pick the cube"), 0.0)
    given.start(None, 0.0)
    given.stop("success", 1.0)
    assert saved_given[0].custom_data["task"] == "wave"  # an explicit task wins over the topic
