"""secure_link_node: one side of the secure two-host link (lerobot_ros.secure.link) on a loopback-only graph.

What crosses is decided by lerobot_ros.secure.routes from the contract: the robot sends the observation topics,
the policy host the action (on whichever sibling topic the policy node uses). What arrives is published as is
(CDR bytes) on this host's graph with the contract's QoS. Services cross too (`robot_services`,
`policy_services`; by default the recorder's episode services on the robot host): the side without the service
offers a stand-in that forwards each call and answers with the real one's response. Certificates are checked
before anything touches the network: a missing, unreadable, expired, revoked or foreign one ends the node in one
line. Parameters: `SecureLinkConfig` (secure/config.py).
"""

from __future__ import annotations

import functools
import time

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message

from lerobot_ros.contract import load_contract, message_class
from lerobot_ros.contract.errors import ContractError
from lerobot_ros.conventions.addresses import parse_host_port
from lerobot_ros.ros import network
from lerobot_ros.ros.diagnostics import diagnostic_array, values_status
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import PROFILES, RELIABLE_QOS
from lerobot_ros.secure.certs import CertificateError, HostFiles, check_host_files
from lerobot_ros.secure.config import DEFAULT_PORT, SecureLinkConfig
from lerobot_ros.secure.link import SecureLink
from lerobot_ros.secure.routes import (
    REQUEST,
    RESPONSE,
    PendingCalls,
    link_routes,
    pack_call,
    split_service_stream,
    unpack_call,
)


class _NextTurn:
    """Awaiting it hands the executor back once (rclpy resumes a waiting coroutine on its next turn)."""

    def __await__(self):
        yield


def _next_turn() -> _NextTurn:
    return _NextTurn()


class SecureLinkNode(Node):
    params_class = SecureLinkConfig

    def __init__(self, **kwargs):
        super().__init__("secure_link", **kwargs)
        p: SecureLinkConfig = declare_params(self, SecureLinkConfig).values
        setting = network.current()
        if setting is not None and setting.is_open:
            raise NodeStartupError(
                "secure link: this graph is open to the network (remote:=true, network lan), so the link would "
                "protect nothing: use secure:=true without remote:=true"
            )
        host_name = p.host_name or p.role
        peer_name = p.peer_name or ("policy" if p.role == "robot" else "robot")
        listen = p.role == "policy"
        try:
            address = parse_host_port(p.address or ("0.0.0.0" if listen else ""), DEFAULT_PORT)
        except ValueError:
            what = "where to listen, ADDRESS[:PORT]" if listen else "the policy host to connect to, HOST[:PORT]"
            raise NodeStartupError(f"secure link: address {p.address!r} is not {what}") from None
        try:
            routes = link_routes(load_contract(p.contract), p.role, p.robot_services, p.policy_services)
            files = HostFiles.in_folder(p.certs_dir, host_name)
            check_host_files(files)
            self.service_types = {n: message_class(t) for n, t in routes.own_services + routes.peer_services}
        except (ContractError, CertificateError, ValueError) as exc:
            raise NodeStartupError(f"secure link: {exc}") from None
        self.service_timeout_s = p.service_timeout_s
        self.calls = PendingCalls()
        self.service_clients = {n: self.create_client(self.service_types[n], n) for n, _t in routes.own_services}
        self.publishers_ = {
            r.topic: self.create_publisher(message_class(r.msg_type), r.topic, PROFILES[r.qos]) for r in routes.receives
        }
        sends, receives = routes.streams(p.queue_depth)
        self.link = SecureLink(
            p.role,
            files,
            host_name,
            peer_name,
            address,
            sends=sends,
            receives=receives,
            on_message=self.on_message,
            log=lambda line: self.get_logger().info(line),
        )
        for r in routes.sends:
            self.create_subscription(
                message_class(r.msg_type),
                r.topic,
                lambda data, t=r.topic: self.link.send(t, data),
                PROFILES[r.qos],
                raw=True,
            )
        # a stand-in is a coroutine: it waits for the peer between executor turns. Its own reentrant group: a
        # waiting coroutine holds its callback group, and the node's default one carries the topics and the timer
        stand_ins = ReentrantCallbackGroup()
        self._wake = self.create_guard_condition(lambda: None, stand_ins)  # a response came: resume the stand-in
        for name, _t in routes.peer_services:
            self.create_service(
                self.service_types[name], name, functools.partial(self.stand_in, name), callback_group=stand_ins
            )
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_timer(1.0, self.on_diagnostics)
        try:
            self.link.start()
        except OSError as exc:  # e.g. the port is taken by another link
            raise NodeStartupError(f"secure link: cannot listen on {address[0]}:{address[1]}: {exc}") from None
        where = "listening on" if listen else "connecting to"
        self.get_logger().info(
            f"secure link ({p.role}, {host_name} <-> {peer_name}) {where} {address[0]}:{address[1]}; "
            f"sends {[r.topic for r in routes.sends]}, receives {[r.topic for r in routes.receives]}"
        )

    # -- messages and services from the peer -----------------------------------------------------------
    def on_message(self, stream: str, data: bytes) -> None:
        name, kind = split_service_stream(stream)
        if not kind:
            self.publishers_[stream].publish(data)
            return
        call_id, payload = unpack_call(data)
        if kind == REQUEST:  # the peer calls one of ours: call it, send its response back
            request = deserialize_message(payload, self.service_types[name].Request)
            future = self.service_clients[name].call_async(request)
            future.add_done_callback(lambda f, n=name, c=call_id: self._respond(n, c, f))
        elif self.calls.answer(call_id, payload):
            self._wake.trigger()

    def _respond(self, name: str, call_id: int, future) -> None:
        if future.result() is not None:
            self.link.send(name + RESPONSE, pack_call(call_id, serialize_message(future.result())))

    async def stand_in(self, name: str, request, response):
        """Our stand-in of the peer's service `name`: forward the call, then wait for the real response, giving
        the executor back between checks (resumed on every executor turn: a response, a message, the 1 s timer)."""
        if not self.link.connected.is_set():
            self.get_logger().warning(f"{name} called while the secure link is down: empty response")
            return response
        call_id = self.calls.begin()
        self.link.send(name + REQUEST, pack_call(call_id, serialize_message(request)))
        deadline = time.monotonic() + self.service_timeout_s
        try:
            while (payload := self.calls.poll(call_id)) is None and time.monotonic() < deadline:
                await _next_turn()
        finally:
            self.calls.forget(call_id)
        if payload is None:
            self.get_logger().warning(f"{name}: no response from the peer within {self.service_timeout_s:g} s")
            return response
        return deserialize_message(payload, self.service_types[name].Response)

    def on_diagnostics(self) -> None:
        s = self.link.stats
        values = {
            "connected": str(self.link.connected.is_set()).lower(),
            "connections": s.connections,
            "rejected": s.rejected,
            "last_rejection": s.last_rejection,
            "ignored_frames": s.ignored,
            **{f"sent {t}": n for t, n in s.sent.items()},
            **{f"received {t}": n for t, n in s.received.items()},
            **{f"dropped {t}": n for t, n in s.dropped.items()},
        }
        message = "connected" if self.link.connected.is_set() else f"not connected ({s.last_rejection or 'waiting'})"
        status = values_status(
            "secure_link", self.get_fully_qualified_name(), message, values, warn=not self.link.connected.is_set()
        )
        self.diag_pub.publish(diagnostic_array(self.get_clock().now().nanoseconds, status))

    def close(self) -> None:
        self.link.close()


def main(args=None) -> None:
    run_node(SecureLinkNode, args)


if __name__ == "__main__":
    main()
