"""Settings of the secure link node (secure_link_node), declared once."""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param

DEFAULT_CERTS_DIR = "~/.config/lerobot_ros/certs"
DEFAULT_PORT = 7447


@dataclass(frozen=True)
class SecureLinkConfig:
    role: str = param(
        "robot", "robot: connects out, sends observations; policy: listens, sends actions", choices=("robot", "policy")
    )
    contract: str = param("so101", "contract whose topics cross the link (observations one way, the action back)")
    address: str = param(
        "",
        "robot: the policy host to connect to (HOST[:PORT]); policy: where to listen (ADDRESS[:PORT], default 0.0.0.0)",
    )
    certs_dir: str = param(DEFAULT_CERTS_DIR, "folder with ca.pem, crl.pem and hosts/<name>.pem/.key")
    host_name: str = param("", "this host's certificate name (default: the role)")
    peer_name: str = param("", "the other host's certificate name (default: the other role)")
    queue_depth: int = param(4, "messages kept per topic while the link is slow (keep-last; oldest dropped)", min=1)
