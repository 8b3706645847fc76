"""Find a running sim bridge (and whatever acts on it) for `lerobot-ros eval --attach NS`.

A bridge is recognised by its `NS/reset_episode` service (lerobot_ros_msgs/srv/ResetEpisode). The node that
serves it is asked for its parameters (env, task, render size ...), so the evaluation scores the task the
bridge really runs and sizes a policy's images like the bridge renders them. Policy sources are the nodes
that publish `NS/commands`, wherever they live (the shared launch files start the policy node as `/policy`,
outside the bridge's namespace); one with a `<node>/reset` Trigger service is a policy node.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from lerobot_ros.configs import names
from lerobot_ros.conventions.errors import UserError
from lerobot_ros.ros.runtime import call_until_answered, wait_until
from lerobot_ros.sim.config import BridgeConfig

RESET_TYPE = "lerobot_ros_msgs/srv/ResetEpisode"
TRIGGER_TYPE = "std_srvs/srv/Trigger"
CLOCK_TYPE = "rosgraph_msgs/msg/Clock"
#: the bridge's parameters an attached evaluation reads (every one it declares)
BRIDGE_PARAMS = tuple(names(BridgeConfig))


class AttachError(UserError, RuntimeError):
    """Nothing (or the wrong thing) to attach to; the message says what was looked for and what to do."""


def normalize_ns(ns: str) -> str:
    """'sim', '/sim/', '/' -> '/sim', '/sim', '/'."""
    return "/" + ns.strip().strip("/")


def ns_join(ns: str, name: str) -> str:
    """A name inside a namespace, also for the root namespace ('/' + 'commands' -> '/commands')."""
    return normalize_ns(ns).rstrip("/") + "/" + name.lstrip("/")


def fqn(name: str, namespace: str) -> str:
    return ns_join(namespace, name)


@dataclass
class AttachedBridge:
    """What eval learned about a running bridge."""

    ns: str
    node: str  # fully qualified name of the node serving NS/reset_episode
    params: dict = field(default_factory=dict)
    clock_topic: str | None = None
    sources: list[str] = field(default_factory=list)  # nodes publishing NS/commands (not the evaluator)
    policy_resets: dict[str, str] = field(default_factory=dict)  # source -> its ~/reset (policy nodes)


def discovery_settings() -> str:
    domain = os.environ.get("ROS_DOMAIN_ID", "") or "0 (unset)"
    scope = os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "") or "SUBNET (unset)"
    return f"ROS_DOMAIN_ID={domain}, ROS_AUTOMATIC_DISCOVERY_RANGE={scope}"


def bridges_in_graph(node) -> list[str]:
    """Namespaces of every ResetEpisode service the graph shows (i.e. every running bridge)."""
    out = []
    for name, types in node.get_service_names_and_types():
        if RESET_TYPE in types and name.endswith("/reset_episode"):
            out.append(name[: -len("/reset_episode")] or "/")
    return sorted(out)


def _node_with_service(node, service: str, srv_type: str) -> str | None:
    for name, namespace in node.get_node_names_and_namespaces():
        try:
            services = node.get_service_names_and_types_by_node(name, namespace)
        except Exception:  # noqa: BLE001 - the node left the graph meanwhile
            continue
        if any(s == service and srv_type in t for s, t in services):
            return fqn(name, namespace)
    return None


def _split(full: str) -> tuple[str, str]:
    namespace, _, name = full.rpartition("/")
    return name, namespace or "/"


def clock_topic_of(node, bridge: str) -> str | None:
    """The Clock topic the bridge publishes (`/clock`, or where it was remapped)."""
    try:
        pubs = node.get_publisher_names_and_types_by_node(*_split(bridge))
    except Exception:  # noqa: BLE001
        return None
    return next((t for t, types in pubs if CLOCK_TYPE in types), None)


def sources_of(node, ns: str) -> tuple[list[str], dict[str, str]]:
    """Nodes publishing NS/commands other than `node` itself, and the ~/reset services of the policy nodes."""
    me = fqn(node.get_name(), node.get_namespace())
    sources = sorted(
        {fqn(i.node_name, i.node_namespace) for i in node.get_publishers_info_by_topic(ns_join(ns, "commands"))} - {me}
    )
    resets = {}
    for src in sources:
        try:
            services = node.get_service_names_and_types_by_node(*_split(src))
        except Exception:  # noqa: BLE001
            continue
        reset = ns_join(src, "reset")
        if any(s == reset and TRIGGER_TYPE in t for s, t in services):
            resets[src] = reset
    return sources, resets


def command_publishers(node, ns: str) -> int:
    """How many publishers NS/commands has besides `node`: endpoints, not names (two nodes may share one)."""
    me = fqn(node.get_name(), node.get_namespace())
    infos = node.get_publishers_info_by_topic(ns_join(ns, "commands"))
    return sum(1 for i in infos if fqn(i.node_name, i.node_namespace) != me)


#: Fast DDS re-announces each participant every 3 s; a fresh process that missed a participant's first
#: announcements sees it within one period (measured here: 0.06 to 2.85 s for a fresh participant to see
#: a running node's publisher). A graph quiet for less than that may still be missing a node.
ANNOUNCEMENT_PERIOD_S = 3.0


def settled_sources(
    node, ns: str, quiet_s: float = ANNOUNCEMENT_PERIOD_S + 0.5, max_s: float = 12.0
) -> tuple[list[str], dict[str, str]]:
    """`sources_of` once the graph has stopped changing for `quiet_s` (a fresh process discovers the other
    nodes' endpoints over a few seconds: a source not seen yet must not be taken for no source)."""
    start = last_change = time.monotonic()
    last = None
    while True:
        now = time.monotonic()
        seen = (sources_of(node, ns), sorted(node.get_node_names_and_namespaces()))
        if seen != last:
            last, last_change = seen, now
        if now - last_change >= quiet_s or now - start >= max_s:
            return last[0]
        time.sleep(0.1)


def read_parameters(node, target: str, names: tuple[str, ...], timeout_s: float = 10.0) -> dict:
    """Parameters of a running node through its `get_parameters` service; unknown names are left out."""
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    service = ns_join(target, "get_parameters")
    client = node.create_client(GetParameters, service)
    try:
        deadline = time.monotonic() + timeout_s
        try:
            wait_until(client.service_is_ready, timeout_s, interval=0.05, what=service)
        except TimeoutError:
            raise AttachError(f"{target} does not answer {service} within {timeout_s:.0f} s") from None
        request = GetParameters.Request(names=list(names))
        try:
            reply = call_until_answered(
                lambda: client.call_async(request),
                max(0.0, deadline - time.monotonic()),
                what=f"a reply from {service}",
            )
        except TimeoutError:
            raise AttachError(
                f"no reply from {service} within {timeout_s:.0f} s (a bridge answers nothing "
                "while it builds its simulator or steps; raise --startup_timeout_s)"
            ) from None
        values = reply.values
    finally:
        node.destroy_client(client)
    out = {}
    for name, value in zip(names, values):
        if value.type != 0:  # PARAMETER_NOT_SET
            out[name] = parameter_value_to_python(value)
    return out


def find_bridge(
    node, ns: str, timeout_s: float, alive: Callable[[], str | None] = lambda: None, poll_s: float = 0.1
) -> AttachedBridge:
    """Wait until a bridge serves NS/reset_episode, then describe it; AttachError after `timeout_s`."""
    ns = normalize_ns(ns)
    service = ns_join(ns, "reset_episode")
    deadline = time.monotonic() + timeout_s
    bridge = None
    while bridge is None:
        failure = alive()
        if failure:
            raise AttachError(failure)
        if any(n == service and RESET_TYPE in t for n, t in node.get_service_names_and_types()):
            bridge = _node_with_service(node, service, RESET_TYPE)
        if bridge is None:
            if time.monotonic() > deadline:
                raise AttachError(not_found_message(ns, timeout_s, bridges_in_graph(node)))
            time.sleep(poll_s)
    # a bridge that is building its simulator (first reset) answers no service until it is done
    params = read_parameters(node, bridge, BRIDGE_PARAMS, timeout_s=max(60.0, deadline - time.monotonic()))
    sources, resets = sources_of(node, ns)
    return AttachedBridge(ns, bridge, params, clock_topic_of(node, bridge), sources, resets)


def not_found_message(ns: str, timeout_s: float, seen: list[str]) -> str:
    others = ", ".join(seen) if seen else "none"
    launch = (
        f"lerobot-ros launch sim_metaworld namespace:={ns.strip('/')}"
        if ns != "/"
        else "lerobot-ros launch sim_metaworld"
    )
    return (
        f"no sim bridge in namespace {ns} after {timeout_s:g} s: looked for the service "
        f"{ns_join(ns, 'reset_episode')} ({RESET_TYPE}) next to {ns_join(ns, 'episode_status')} and "
        f"{ns_join(ns, 'commands')}, with {discovery_settings()}; bridges seen: {others}. Start one first "
        f"(`{launch}`, or `python -m lerobot_ros.nodes.sim_bridge_node --ros-args -r __ns:={ns}`), pass its "
        "namespace to --attach, and use the same ROS_DOMAIN_ID and ROS_AUTOMATIC_DISCOVERY_RANGE in both shells"
    )


def no_source_message(bridge: AttachedBridge, timeout_s: float) -> str:
    return (
        f"bridge {bridge.node} found, but nothing publishes {ns_join(bridge.ns, 'commands')} after {timeout_s:g} s: "
        "pass --expert or --policy.path to have eval start a policy source there, or start one beside the bridge "
        "(e.g. the launch's expert:=true or policy.path:=FOLDER; raise --startup_timeout_s if one is still starting)"
    )
