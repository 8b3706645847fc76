"""secure_link_node: one side of the secure two-host link (lerobot_ros.secure.link) on a loopback-only graph.

The robot side subscribes to the contract's observation topics and sends them to the policy host; the policy
side sends the action back, on whichever of the action topic and its siblings the policy node uses
(…/commands, …/joint_command, …/joint_trajectory: policy/output.py). What arrives is published as is (CDR bytes) on this host's graph, with the
contract's QoS. Certificates are checked before anything touches the network: a missing, unreadable,
expired, revoked or foreign one ends the node in one line. Parameters: `SecureLinkConfig` (secure/config.py).
"""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node

from lerobot_ros.contract import load_contract, message_class
from lerobot_ros.contract.errors import ContractError
from lerobot_ros.policy.output import MODE_OF_TYPE, action_topic
from lerobot_ros.ros import network
from lerobot_ros.ros.diagnostics import diagnostic_array, values_status
from lerobot_ros.ros.entry import NodeStartupError, run_node
from lerobot_ros.ros.parameters import declare_params
from lerobot_ros.ros.qos import PROFILES, RELIABLE_QOS
from lerobot_ros.secure.certs import CertificateError, HostFiles, check_host_files
from lerobot_ros.secure.config import DEFAULT_PORT, SecureLinkConfig
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
            sends=streams(sends),
            receives=streams(receives),
            on_message=lambda topic, data: self.publishers_[topic].publish(data),
            log=lambda line: self.get_logger().info(line),
        )
        for topic, msg_type, qos in sends:
            self.create_subscription(
                message_class(msg_type), topic, lambda data, t=topic: self.link.send(t, data), PROFILES[qos], raw=True
            )
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", RELIABLE_QOS)
        self.create_timer(1.0, self.on_diagnostics)
        self.link.start()
        where = (
            f"connecting to {address[0]}:{address[1]}"
            if p.role == "robot"
            else f"listening on {address[0]}:{address[1]}"
        )
        self.get_logger().info(
            f"secure link ({p.role}, {host_name} <-> {peer_name}) {where}; sends {[s[0] for s in sends]}, "
            f"receives {[r[0] for r in receives]}"
        )

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
    run_node(SecureLinkNode, args, multi_threaded=False)


if __name__ == "__main__":
    main()
