"""episode_keyboard: lerobot-record's keys for the episode recorder, read from the terminal (no X needed).

Right arrow or `n`: next (end the episode early and keep it, or skip the rest of a reset).
Left arrow or `r`: re-record (discard the current episode and record it again).
Esc or `q`: stop (keep the current episode and end the session); the node exits after it.
Each key is published as std_msgs/String ("next", "rerecord", "stop") on `episode_control` (reliable),
which the episode_recorder subscribes to. The topic is volatile (a late recorder must not replay an old
`stop`), so a key pressed before a recorder is matched waits up to `match_timeout_s` for one and says so
when none comes; "recorder listening" is logged once a recorder is matched. stdin is put in cbreak mode
when it is a terminal; any stream of bytes works (tests drive it through a pty).
"""

from __future__ import annotations

import sys
import threading
import time

from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.task import Future
from std_msgs.msg import String

from lerobot_ros.record.config import EpisodeKeyboardConfig
from lerobot_ros.ros.entry import run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import RELIABLE_QOS
from lerobot_ros.teleop.terminal import TerminalKeys

KEYS = {b"n": "next", b"\x1b[C": "next", b"r": "rerecord", b"\x1b[D": "rerecord", b"q": "stop", b"\x1b": "stop"}
HELP = "keys: [->] or n = next, [<-] or r = re-record, Esc or q = stop"


def read_command(keys: TerminalKeys) -> str | None:
    """Block for one key; the command it stands for, "" for an unmapped key, None at end of input."""
    key = keys.read_key()
    if not key:
        return None
    return KEYS.get(key.lower() if len(key) == 1 else key, "")


class EpisodeKeyboard(Node):
    params_class = EpisodeKeyboardConfig

    def __init__(self, **kwargs):
        super().__init__("episode_keyboard", **kwargs)
        self.params = declare_params(self, EpisodeKeyboardConfig)  # both read where they are used: live changes apply
        self.pub = self.create_publisher(String, "episode_control", RELIABLE_QOS)
        self.keys = TerminalKeys().open()
        self._input_done = threading.Event()  # set by the key thread
        self.exit_future = Future()  # run_node spins until it is done (its result: the exit status)
        self._listening = False
        self.create_timer(0.1, self._check_finished)
        threading.Thread(target=self._read_keys, name="keyboard", daemon=True).start()
        print(HELP, file=sys.stderr, flush=True)

    def _read_keys(self) -> None:
        while True:
            try:
                command = read_command(self.keys)
            except OSError:
                command = None
            if command is None:
                break
            if command:
                self._send(command)
                if command == "stop" and self.params.values.exit_on_stop:
                    break
        self.pub.wait_for_all_acked(Duration(seconds=2.0))  # let the last command reach the recorder
        self._input_done.set()

    def _send(self, command: str) -> None:
        deadline = time.monotonic() + self.params.values.match_timeout_s
        while self.pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        if self.pub.get_subscription_count() == 0:
            print(
                f"-> {command}: no episode_recorder is listening on {self.pub.topic_name} "
                f"(start one in this namespace); the key was not received",
                file=sys.stderr,
                flush=True,
            )
            return
        self.pub.publish(String(data=command))
        print(f"-> {command}", file=sys.stderr, flush=True)

    def _check_finished(self) -> None:
        if self._input_done.is_set():
            if not self.exit_future.done():
                self.exit_future.set_result(0)
            return
        listening = self.pub.get_subscription_count() > 0
        if listening != self._listening:
            self._listening = listening
            print(
                f"recorder listening on {self.pub.topic_name}"
                if listening
                else f"no recorder listening on {self.pub.topic_name}",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        self.keys.close()


def main(args=None) -> None:
    run_node(EpisodeKeyboard, args=args, torch=False)  # robot side: no torch (ros.torchless)


if __name__ == "__main__":
    main()
