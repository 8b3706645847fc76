"""Settings of the secure link node (secure_link_node), declared once."""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param

DEFAULT_CERTS_DIR = "~/.config/lerobot_ros/certs"
DEFAULT_PORT = 7447
#: the recorder's episode services (record.launch.yaml's namespace): record on the robot from the policy host
EPISODE_SERVICES = (
    "/recorder/start_episode:lerobot_ros_msgs/srv/StartEpisode",
    "/recorder/stop_episode:lerobot_ros_msgs/srv/StopEpisode",
)


def parse_service(entry: str) -> tuple[str, str]:
    """'NAME:pkg/srv/Type' -> (name, type); ValueError names the entry."""
    name, sep, type_name = entry.partition(":")
    if not sep or not name.startswith("/") or type_name.count("/") != 2:
        raise ValueError(f"service {entry!r}: write it as /absolute/name:pkg/srv/Type")
    return name, type_name


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
    robot_services: list[str] = param(
        list(EPISODE_SERVICES),
        "services on the robot host the policy host may call, 'NAME:pkg/srv/Type' (a stand-in on the policy host)",
    )
    policy_services: list[str] = param(
        [], "services on the policy host the robot host may call, 'NAME:pkg/srv/Type' (a stand-in on the robot host)"
    )
    service_timeout_s: float = param(
        30.0, "a stand-in service answers with an empty response after this long without the peer's", unit="s", min=0.1
    )
