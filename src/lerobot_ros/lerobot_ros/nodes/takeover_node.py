"""takeover: pause a running policy, let a person correct it, hand back (LeRobot's DAgger phases over ROS).

Runs in the robot's namespace between the policy, the teleoperator and the driver:
  policy/commands (in)   the policy's targets: start policy_node with action_topic:=<ns>/policy/commands
  teleop/commands (in)   a teleop's targets: teleop_node commands_topic:=<ns>/teleop/commands, or ee_teleop_node
  commands (out)         what the driver executes (std_msgs/Float64MultiArray), at `fps`
  intervention (out)     std_msgs/Bool per tick, True while a person drives (record it: the converter writes it as
                         LeRobot's `intervention` feature), latched
  ~/phase (out)          std_msgs/String: autonomous | paused | correcting, latched
Events: services ~/pause_resume and ~/correction (std_srvs/Trigger; a refused one answers success=false and
says why), the topic ~/event (std_msgs/String "pause_resume" | "correction": a foot pedal or a button), and
keys when `keys` is true and stdin is a terminal (p = pause/resume, c = correction).
On pause the policy node named `policy_node` is stopped (its ~/stop), on resume reset and started (~/reset,
~/start) so its next chunk starts from the current observation, as LeRobot resets its engine.
Handover rules (no jump at either end) are in `lerobot_ros.teleop.takeover`.
Parameters: fps, max_delta (rad per tick), teleop_timeout_s, policy_node, keys.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import numpy as np
from rclpy.node import Node
from std_msgs.msg import Bool, Float64MultiArray, String
from std_srvs.srv import Trigger

from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import LATCHED_QOS, RELIABLE_QOS
from lerobot_ros.teleop.config import TakeoverConfig
from lerobot_ros.teleop.takeover import Event, Phase, Takeover
from lerobot_ros.teleop.terminal import TerminalKeys

if TYPE_CHECKING:
    from rclpy.client import Client

KEY_EVENTS = {b"p": Event.PAUSE_RESUME, b"c": Event.CORRECTION}


class TakeoverNode(Node):
    params_class = TakeoverConfig

    def __init__(self, node_name: str = "takeover", **kwargs):
        super().__init__(node_name, **kwargs)
        self.params = declare_params(self, TakeoverConfig, self._on_params)
        p = self.params.values
        self.policy_node = p.policy_node
        try:
            self.core = Takeover(max_delta=p.max_delta, teleop_timeout_s=p.teleop_timeout_s)
        except ValueError as exc:
            raise NodeStartupError(str(exc)) from None
        self._lock = threading.Lock()
        self.cmd_pub = self.create_publisher(Float64MultiArray, "commands", RELIABLE_QOS)
        self.flag_pub = self.create_publisher(Bool, "intervention", LATCHED_QOS)
        self.phase_pub = self.create_publisher(String, "~/phase", LATCHED_QOS)
        self.create_subscription(Float64MultiArray, "policy/commands", self._on_policy, RELIABLE_QOS)
        self.create_subscription(Float64MultiArray, "teleop/commands", self._on_teleop, RELIABLE_QOS)
        self.create_subscription(String, "~/event", self._on_event_msg, RELIABLE_QOS)
        self.create_service(Trigger, "~/pause_resume", lambda req, res: self._serve(Event.PAUSE_RESUME, res))
        self.create_service(Trigger, "~/correction", lambda req, res: self._serve(Event.CORRECTION, res))
        self._policy_clients: dict[str, Client] = {}
        if self.policy_node:
            for verb in ("stop", "start", "reset"):
                self._policy_clients[verb] = self.create_client(Trigger, f"{self.policy_node.rstrip('/')}/{verb}")
        self.create_timer(1.0 / p.fps, self._tick)
        self._publish_phase()
        self.keys: TerminalKeys | None = None
        if p.keys:
            self._start_keys()
        self.get_logger().info(f"takeover: {Phase.AUTONOMOUS.value}; events on ~/pause_resume, ~/correction, ~/event")

    def _on_params(self, new: TakeoverConfig, changed: dict) -> None:
        with self._lock:
            if "max_delta" in changed:
                self.core.max_delta = np.asarray(new.max_delta, dtype=np.float64)
            if "teleop_timeout_s" in changed:
                self.core.teleop_timeout_s = new.teleop_timeout_s

    # ---- inputs ----------------------------------------------------------------------------------
    def _on_policy(self, msg: Float64MultiArray) -> None:
        self._take(self.core.on_policy, msg.data)

    def _on_teleop(self, msg: Float64MultiArray) -> None:
        self._take(self.core.on_teleop, msg.data, time.monotonic())

    def _take(self, on_target, *args) -> None:
        """Hand a target to the core; one it refuses (another arm's size) is a throttled warning."""
        with self._lock:
            try:
                on_target(*args)
            except ValueError as exc:
                self.get_logger().warning(str(exc), throttle_duration_sec=5.0)

    def _on_event_msg(self, msg: String) -> None:
        try:
            event = Event(msg.data.strip())
        except ValueError:
            self.get_logger().warning(f"unknown event {msg.data!r} on ~/event (use pause_resume or correction)")
            return
        self.apply(event)

    def _serve(self, event: Event, response: Trigger.Response) -> Trigger.Response:
        result = self.apply(event)
        response.success, response.message = result.accepted, result.reason or result.phase.value
        return response

    def apply(self, event: Event):
        with self._lock:
            before = self.core.phase
            result = self.core.request(event, time.monotonic())
        if not result.accepted:
            self.get_logger().warning(result.reason)
            return result
        self.get_logger().info(f"{before.value} -> {result.phase.value}")
        if result.phase is Phase.PAUSED and before is Phase.AUTONOMOUS:
            self._call_policy("stop")
        elif result.phase is Phase.AUTONOMOUS:
            # start only once the reset is done: started first, it would act once on the pre-pause queue
            self._call_policy("reset", then=lambda: self._call_policy("start"))
        self._publish_phase()
        return result

    def _call_policy(self, verb: str, then=None) -> None:
        """Call the policy node's ~/<verb>; `then` runs once it answered (or at once when it cannot be called)."""
        client = self._policy_clients.get(verb)
        if client is None or not client.service_is_ready():
            if client is not None:
                self.get_logger().warning(
                    f"{self.policy_node}/{verb} is not available: the policy is not {verb}ped "
                    "(its actions are dropped while paused anyway)",
                    throttle_duration_sec=10.0,
                )
            if then is not None:
                then()
            return
        future = client.call_async(Trigger.Request())
        if then is not None:
            future.add_done_callback(lambda _done: then())

    def _start_keys(self) -> None:
        self.keys = TerminalKeys().open()

        def read():
            while True:
                key = self.keys.read_key()
                if not key:
                    return
                event = KEY_EVENTS.get(key.lower())
                if event is not None:
                    self.apply(event)

        threading.Thread(target=read, name="keys", daemon=True).start()

    # ---- output ----------------------------------------------------------------------------------
    def _tick(self) -> None:
        with self._lock:
            out = self.core.tick(time.monotonic())
        if out.target is None:
            return
        self.cmd_pub.publish(Float64MultiArray(data=[float(v) for v in out.target]))
        self.flag_pub.publish(Bool(data=out.intervention))

    def _publish_phase(self) -> None:
        self.phase_pub.publish(String(data=self.core.phase.value))

    def close(self) -> None:
        if self.keys is not None:
            self.keys.close()


def main(args=None) -> None:
    run_node(TakeoverNode, args)


if __name__ == "__main__":
    main()
