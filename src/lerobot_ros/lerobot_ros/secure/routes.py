"""What crosses the secure link, decided without ROS: the contract's topics each way, the services each side
offers the other, and the bookkeeping of forwarded service calls (secure_link_node only wires these).

- the robot sends the contract's observation topics and receives the action, on the contract's action topic
  and its siblings (…/commands, …/joint_command, …/joint_trajectory: whichever the policy node publishes,
  policy/output.py); the policy host the other way round;
- a service NAME of the other host crosses as two streams, `NAME#request` towards its owner and `NAME#response`
  back; each frame is a call id (8 bytes, big endian) and the CDR of the request or response.
"""

from __future__ import annotations

import itertools
import struct
import threading
from dataclasses import dataclass

from lerobot_ros.contract import Contract
from lerobot_ros.policy.output import MODE_OF_TYPE, action_topic
from lerobot_ros.secure.config import parse_service
from lerobot_ros.secure.link import Stream

REQUEST, RESPONSE = "#request", "#response"
SERVICE_DEPTH = 16  # calls in flight per service
_CALL_ID = struct.Struct("!Q")


@dataclass(frozen=True)
class Route:
    """One topic on the link: its name, message type and the contract's QoS profile name."""

    topic: str
    msg_type: str
    qos: str


@dataclass(frozen=True)
class LinkRoutes:
    """One side's view: topics it sends and receives, its own services (the peer may call them) and the peer's
    (this side offers stand-ins); service values are (name, type)."""

    sends: list[Route]
    receives: list[Route]
    own_services: list[tuple[str, str]]
    peer_services: list[tuple[str, str]]

    def streams(self, depth: int) -> tuple[list[Stream], list[Stream]]:
        """(send, receive) streams for SecureLink: topics keep `depth` messages, services SERVICE_DEPTH calls."""
        send = [Stream(r.topic, r.msg_type, depth) for r in self.sends]
        send += [Stream(n + RESPONSE, t, SERVICE_DEPTH) for n, t in self.own_services]
        send += [Stream(n + REQUEST, t, SERVICE_DEPTH) for n, t in self.peer_services]
        receive = [Stream(r.topic, r.msg_type, depth) for r in self.receives]
        receive += [Stream(n + REQUEST, t, SERVICE_DEPTH) for n, t in self.own_services]
        receive += [Stream(n + RESPONSE, t, SERVICE_DEPTH) for n, t in self.peer_services]
        return send, receive


def link_routes(contract: Contract, role: str, robot_services: list[str], policy_services: list[str]) -> LinkRoutes:
    """The routes of side `role` ("robot" or "policy"); ValueError for a malformed service entry."""
    action = contract.action_feature
    actions = [
        Route(action_topic(mode, "", action.msg_type, action.topic), msg_type, action.qos)
        for msg_type, mode in MODE_OF_TYPE.items()
    ]
    observations = [Route(f.topic, f.msg_type, f.qos) for f in contract.observation_features.values()]
    robot = [parse_service(e) for e in robot_services]
    policy = [parse_service(e) for e in policy_services]
    if role == "robot":
        return LinkRoutes(observations, actions, robot, policy)
    return LinkRoutes(actions, observations, policy, robot)


def split_service_stream(stream: str) -> tuple[str, str]:
    """'NAME#request' -> (NAME, REQUEST); a topic gives (topic, '')."""
    for kind in (REQUEST, RESPONSE):
        if stream.endswith(kind):
            return stream[: -len(kind)], kind
    return stream, ""


def pack_call(call_id: int, payload: bytes) -> bytes:
    return _CALL_ID.pack(call_id) + payload


def unpack_call(frame: bytes) -> tuple[int, bytes]:
    if len(frame) < _CALL_ID.size:
        raise ValueError(f"a service frame of {len(frame)} bytes has no call id")
    return _CALL_ID.unpack_from(frame)[0], frame[_CALL_ID.size :]


class PendingCalls:
    """Calls of the peer's services waiting for their responses (any thread may answer, one waits)."""

    def __init__(self):
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[int, tuple[threading.Event, list[bytes]]] = {}

    def begin(self) -> int:
        call_id = next(self._ids)
        with self._lock:
            self._waiting[call_id] = (threading.Event(), [])
        return call_id

    def answer(self, call_id: int, payload: bytes) -> bool:
        """A response arrived; False when nobody waits for it (timed out, or never asked)."""
        with self._lock:
            waiting = self._waiting.get(call_id)
        if waiting is None:
            return False
        waiting[1].append(payload)
        waiting[0].set()
        return True

    def poll(self, call_id: int) -> bytes | None:
        """The response's payload if it has arrived (the call stays pending until `forget`)."""
        with self._lock:
            waiting = self._waiting.get(call_id)
        return waiting[1][0] if waiting is not None and waiting[1] else None

    def forget(self, call_id: int) -> None:
        with self._lock:
            self._waiting.pop(call_id, None)

    def wait(self, call_id: int, timeout: float) -> bytes | None:
        """The response's payload, or None after `timeout`; the call is forgotten either way."""
        with self._lock:
            event = self._waiting[call_id][0]
        try:
            return self.poll(call_id) if event.wait(timeout) else None
        finally:
            self.forget(call_id)
