"""secure_link_node: one side of the secure two-host link (lerobot_ros.secure.link) on a loopback-only graph.

The robot side subscribes to the contract's observation topics and sends them to the policy host; the policy
side sends the action back, on whichever of the action topic and its siblings the policy node uses
(…/commands, …/joint_command, …/joint_trajectory: policy/output.py). What arrives is published as is (CDR bytes) on this host's graph, with the
contract's QoS. Services cross too (`robot_services`, `policy_services`; by default the recorder's episode
services on the robot host): the side without the service offers a stand-in that forwards each call and
answers with the real one's response. Certificates are checked before anything touches the network: a missing, unreadable,
expired, revoked or foreign one ends the node in one line. Parameters: `SecureLinkConfig` (secure/config.py).
"""

from __future__ import annotations

import itertools
import struct
import threading

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message

from lerobot_ros.contract import load_contract, message_class
from lerobot_ros.contract.errors import ContractError
from lerobot_ros.policy.output import MODE_OF_TYPE, action_topic
from lerobot_ros.ros import network
from lerobot_ros.ros.diagnostics import diagnostic_array, values_status
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import PROFILES, RELIABLE_QOS
from lerobot_ros.secure.certs import CertificateError, HostFiles, check_host_files
from lerobot_ros.secure.config import DEFAULT_PORT, SecureLinkConfig, parse_service
from lerobot_ros.secure.link import SecureLink, Stream, split_address


class SecureLinkNode(Node):
    params_class = SecureLinkConfig

    def __init__(self, **kwargs):
        super().__init__("secure_link", **kwargs)
        p: SecureLinkConfig = declare_params(self, SecureLinkConfig).values
        other = "policy" if p.role == "robot" else "robot"
        setting = network.current()
        if setting is not None and setting.is_open:
            raise NodeStartupError(
                "secure link: this graph is open to the network (remote:=true, network lan), so the link would "
                "protect nothing: use secure:=true without remote:=true"
            )
        host_name, peer_name = p.host_name or p.role, p.peer_name or other
        try:
            contract = load_contract(p.contract)
            files = HostFiles.in_folder(p.certs_dir, host_name)
            check_host_files(files)
            address = split_address(p.address or ("" if p.role == "robot" else "0.0.0.0"), DEFAULT_PORT)
            own = [parse_service(e) for e in (p.robot_services if p.role == "robot" else p.policy_services)]
            peers = [parse_service(e) for e in (p.policy_services if p.role == "robot" else p.robot_services)]
            service_types = {name: message_class(t) for name, t in own + peers}
        except (ContractError, CertificateError, ValueError) as exc:
            raise NodeStartupError(f"secure link: {exc}") from None
        action = contract.action_feature
        actions = [
            (action_topic(mode, "", action.msg_type, action.topic), msg_type, action.qos)
            for msg_type, mode in MODE_OF_TYPE.items()
        ]
        observations = [(f.topic, f.msg_type, f.qos) for f in contract.observation_features.values()]
        sends, receives = (actions, observations) if p.role == "policy" else (observations, actions)
        streams = lambda fs: [Stream(topic, msg_type, p.queue_depth) for topic, msg_type, _qos in fs]  # noqa: E731
        # services: requests for our own ones come in and their responses go out; the peer's the other way
        service_sends = [Stream(f"{n}#response", t, 16) for n, t in own] + [
            Stream(f"{n}#request", t, 16) for n, t in peers
        ]
        service_receives = [Stream(f"{n}#request", t, 16) for n, t in own] + [
            Stream(f"{n}#response", t, 16) for n, t in peers
        ]
        self.service_types, self.service_timeout_s = service_types, p.service_timeout_s
        self._call_ids = itertools.count(1)
        self._waiting_calls: dict[int, list] = {}
        self._service_clients = {name: self.create_client(service_types[name], name) for name, _t in own}
        self.publishers_ = {
            topic: self.create_publisher(message_class(msg_type), topic, PROFILES[qos])
            for topic, msg_type, qos in receives
        }
        self.link = SecureLink(
            p.role,
            files,
            host_name,
            peer_name,
            address,
            sends=streams(sends) + service_sends,
            receives=streams(receives) + service_receives,
            on_message=self.on_message,
            log=lambda line: self.get_logger().info(line),
        )
        for topic, msg_type, qos in sends:
            self.create_subscription(
                message_class(msg_type), topic, lambda data, t=topic: self.link.send(t, data), PROFILES[qos], raw=True
            )
        stand_ins = ReentrantCallbackGroup()  # a stand-in waits for the peer without holding up the topics
        for name, _t in peers:
            self.create_service(
                service_types[name], name, lambda req, res, n=name: self.stand_in(n, req, res), callback_group=stand_ins
            )
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_timer(1.0, self.on_diagnostics)
        try:
            self.link.start()
        except (OSError, CertificateError) as exc:  # e.g. the port is taken by another link
            raise NodeStartupError(f"secure link: cannot listen on {address[0]}:{address[1]}: {exc}") from None
        where = (
            f"connecting to {address[0]}:{address[1]}"
            if p.role == "robot"
            else f"listening on {address[0]}:{address[1]}"
        )
        self.get_logger().info(
            f"secure link ({p.role}, {host_name} <-> {peer_name}) {where}; sends {[s[0] for s in sends]}, "
            f"receives {[r[0] for r in receives]}"
        )

    # -- messages and services from the peer -----------------------------------------------------------
    def on_message(self, stream: str, data: bytes) -> None:
        if stream in self.publishers_:
            self.publishers_[stream].publish(data)
            return
        name, _, kind = stream.rpartition("#")
        call_id, payload = struct.unpack("!Q", data[:8])[0], data[8:]
        if kind == "request":  # the peer calls one of ours: call it, send its response back
            client = self._service_clients[name]
            future = client.call_async(deserialize_message(payload, self.service_types[name].Request))
            future.add_done_callback(lambda f, n=name, c=call_id: self._respond(n, c, f))
        elif (waiting := self._waiting_calls.get(call_id)) is not None:
            waiting[1] = deserialize_message(payload, self.service_types[name].Response)
            waiting[0].set()

    def _respond(self, name: str, call_id: int, future) -> None:
        if future.result() is not None:
            self.link.send(f"{name}#response", struct.pack("!Q", call_id) + serialize_message(future.result()))

    def stand_in(self, name: str, request, response):
        """Our stand-in of the peer's service `name`: forward the call, wait for the real response."""
        if not self.link.connected.is_set():
            self.get_logger().warning(f"{name} called while the secure link is down: empty response")
            return response
        call_id = next(self._call_ids)
        waiting: list = [threading.Event(), None]
        self._waiting_calls[call_id] = waiting
        self.link.send(f"{name}#request", struct.pack("!Q", call_id) + serialize_message(request))
        answered = waiting[0].wait(self.service_timeout_s)
        self._waiting_calls.pop(call_id, None)
        if not answered:
            self.get_logger().warning(f"{name}: no response from the peer within {self.service_timeout_s:g} s")
            return response
        return waiting[1]

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
    run_node(SecureLinkNode, args, multi_threaded=True)  # stand-in services wait for the peer


if __name__ == "__main__":
    main()
