"""Where chunks come from: the one small interface async inference asks of an inference backend.

`local` is `PolicyRunner` (the policy in this process); `lerobot_server` is `PolicyServerBackend`, a client of
LeRobot's async-inference policy server (`lerobot.async_inference.policy_server`, gRPC) on this or another
machine. The controller only calls what `ChunkBackend` lists, so the safety gates, staleness checks, chunk
blending and diagnostics are the same for both. The address helpers here need no gRPC.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from typing import Protocol

import numpy as np

from lerobot_ros.conventions.addresses import parse_host_port
from lerobot_ros.policy.loading import LoadedPolicy

BACKENDS = ("local", "lerobot_server")
DEFAULT_SERVER = "127.0.0.1:8080"  # LeRobot's policy-server port, on loopback


class ChunkBackend(Protocol):
    """A source of action chunks; `predict_chunk` may block (it runs in the inference thread)."""

    name: str  # "local" | "lerobot_server" (for diagnostics)
    loaded: LoadedPolicy  # the policy's config (features, chunk length); weights only where they run here
    last_chunk: np.ndarray | None  # the last (T, D) chunk returned, post-processed (LeRobot units)
    seed: int | None
    chunk_task: str | None  # the text the newest chunk was conditioned on, where known
    #: `select_action` steps the policy's own action queue inline, one action per tick (chunking:=switch without
    #: async inference); False: whole chunks only, so the node runs with async inference
    steps_inline: bool
    #: `predict_chunk_rtc` guides each chunk by the actions still to be executed (chunking:=rtc): the policy
    #: must run in this process
    rtc_in_process: bool

    @property
    def reads_task(self) -> bool:
        """The policy is conditioned on a task sentence that this process can see (ticks wait for one)."""
        ...

    def predict_chunk(self, frame: Mapping[str, np.ndarray], task: str = "") -> np.ndarray: ...

    def reset(self) -> None: ...

    def close(self) -> None: ...

    def problem(self) -> str | None:
        """Why no chunk can come now (e.g. the server is unreachable), None when the backend is fine."""

    def diagnostics(self) -> dict[str, str]: ...


class InlineBackend(ChunkBackend, Protocol):
    """What a backend with `steps_inline` also has: the policy's own action queue, stepped one tick at a time."""

    def select_action(self, frame: Mapping[str, np.ndarray], task: str = "") -> tuple[np.ndarray, np.ndarray | None]:
        """(action (D,), new chunk (T, D) or None): one control step."""
        ...

    def discard_queue(self) -> None: ...


class RtcBackend(ChunkBackend, Protocol):
    """What a backend with `rtc_in_process` also has: chunks guided by the actions still to be executed."""

    def predict_chunk_rtc(
        self,
        frame: Mapping[str, np.ndarray],
        task: str = "",
        inference_delay: int | None = None,
        prev_chunk_left_over: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]: ...


def parse_server_address(text: str) -> tuple[str, int]:
    """'HOST:PORT' (IPv6 as '[::1]:PORT') -> (host, port); ValueError naming the parameter."""
    try:
        return parse_host_port(text)
    except ValueError:
        raise ValueError(f"server must be HOST:PORT (e.g. {DEFAULT_SERVER}), got {text!r}") from None


def public_address_warning(host: str) -> str | None:
    """A warning when `host` is (or resolves to) an address outside loopback / private / link-local ranges.

    LeRobot's policy server unpickles every request: whoever reaches its port runs code on that machine.
    """
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}  # an IP address: a str already
    except (socket.gaierror, UnicodeError):
        return None  # unresolvable: connecting fails with its own message
    public = sorted(a for a in addresses if not _private(a))
    if not public:
        return None
    return (
        f"policy server {host} ({', '.join(public)}) is not a loopback or private address: LeRobot's policy "
        "server unpickles what it receives, so anyone who reaches its port can run code there; keep it on "
        "loopback, a private network or an SSH tunnel"
    )


def _private(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return ip.is_loopback or ip.is_private or ip.is_link_local
