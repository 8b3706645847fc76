"""The secure two-host link: a contract's topics between two loopback-only DDS graphs over one mutually
authenticated TLS 1.3 connection (Python's `ssl`, i.e. OpenSSL; certificates from lerobot_ros.secure.certs).

Why not DDS over the network: plain DDS takes data from any host, this Fast DDS build has no DDS-Security,
and its TLS transport never verifies the clients of a listening participant (docs: explanation/network-security).
Here each host's DDS graph stays on loopback and only this link crosses the network:

- the robot **connects out** and never listens; the policy host listens on one TCP port;
- both sides require the other's certificate, issued by the same CA, not on the CRL (reloaded at every
  connection), and carrying the expected peer name (subjectAltName): another CA, no certificate, a revoked
  host or the wrong host of the CA fail the handshake or are closed before any data is read;
- a side forwards only what its contract says it sends (observations robot -> policy, actions policy ->
  robot) and publishes only topics its contract says it receives, whatever the peer offers.

Frames: a header (stream index: u16, payload length: u32) then the CDR bytes of one ROS message. The first
frame each way is a JSON hello (protocol, host, the streams it sends). Queues are bounded per topic
(keep-last, like DDS): a slow link drops the oldest frames, never grows without bound.
"""

from __future__ import annotations

import collections
import json
import socket
import ssl
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from cryptography import x509

from lerobot_ros.secure.certs import HostFiles, check_host_files

PROTOCOL = 1
HEADER = struct.Struct("!HI")
HELLO_INDEX = 0xFFFF
MAX_FRAME = 64 * 1024 * 1024
ROLES = ("robot", "policy")


class LinkError(RuntimeError):
    """The peer broke the protocol or is not who it must be."""


@dataclass(frozen=True)
class Stream:
    topic: str
    msgtype: str
    depth: int = 10


@dataclass
class LinkStats:
    connections: int = 0
    rejected: int = 0
    last_rejection: str = ""
    sent: collections.Counter = field(default_factory=collections.Counter)
    received: collections.Counter = field(default_factory=collections.Counter)
    dropped: collections.Counter = field(default_factory=collections.Counter)
    ignored: int = 0  # frames of streams this side does not take


def tls_context(files: HostFiles, server: bool) -> ssl.SSLContext:
    """TLS 1.3, the peer's certificate required and checked against the CA and the CRL."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server else ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_cert_chain(str(files.cert), str(files.key))
    ctx.load_verify_locations(cafile=str(files.ca))
    ctx.load_verify_locations(cafile=str(files.crl))
    ctx.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    ctx.verify_mode = ssl.CERT_REQUIRED
    if not server:
        ctx.check_hostname = True  # the server's certificate must name the host we meant
    return ctx


def peer_names(sock: ssl.SSLSocket) -> list[str]:
    der = sock.getpeercert(binary_form=True)
    if der is None:
        return []
    cert = x509.load_der_x509_certificate(der)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return [str(v) for v in san.get_values_for_type(x509.DNSName)]


def hard_close(sock: socket.socket | None) -> None:
    """Shut the connection down, then close: a bare close() from another thread neither wakes a recv() blocked
    on the socket nor sends the peer a FIN while that recv() holds it."""
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


def _recv_exact(sock, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the peer closed the link")
        buf += chunk
    return bytes(buf)


def read_frame(sock) -> tuple[int, bytes]:
    index, size = HEADER.unpack(_recv_exact(sock, HEADER.size))
    if size > MAX_FRAME:
        raise LinkError(f"frame of {size} bytes (over {MAX_FRAME})")
    return index, _recv_exact(sock, size)


def write_frame(sock, index: int, payload: bytes) -> None:
    sock.sendall(HEADER.pack(index, len(payload)) + payload)


class SecureLink:
    """One side of the link. `send(topic, data)` queues a message for the peer; `on_message(topic, data)`
    is called (from the reader thread) for each message the peer sends on a stream this side receives."""

    def __init__(
        self,
        role: str,
        files: HostFiles,
        host_name: str,
        peer_name: str,
        address: tuple[str, int],
        sends: list[Stream],
        receives: list[Stream],
        on_message: Callable[[str, bytes], None],
        log: Callable[[str], None] = print,
        handshake_timeout_s: float = 5.0,
    ):
        if role not in ROLES:
            raise ValueError(f"role {role!r}: use one of {', '.join(ROLES)}")
        self.role, self.files, self.host_name, self.peer_name = role, files, host_name, peer_name
        self.address = address
        self.sends = {s.topic: s for s in sends}
        self.receives = {s.topic: s for s in receives}
        self.on_message, self.log = on_message, log
        self.handshake_timeout_s = handshake_timeout_s
        self.stats = LinkStats()
        self._index = {topic: i for i, topic in enumerate(self.sends)}
        self._queues: dict[str, collections.deque[bytes]] = {
            t: collections.deque(maxlen=s.depth) for t, s in self.sends.items()
        }
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._sock: ssl.SSLSocket | None = None
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._serving: threading.Thread | None = None
        self.connected = threading.Event()

    # -- public --------------------------------------------------------------------------------------
    def start(self) -> SecureLink:
        check_host_files(self.files)  # fail closed before anything touches the network
        if self.role == "policy":
            self._listener = socket.create_server(self.address, reuse_port=False)
            self._listener.settimeout(0.5)
        self._thread = threading.Thread(target=self._run, name=f"secure-link-{self.role}", daemon=True)
        self._thread.start()
        return self

    def send(self, topic: str, data: bytes) -> None:
        queue = self._queues.get(topic)
        if queue is None or not self.connected.is_set():
            return
        with self._cond:
            if len(queue) == queue.maxlen:
                self.stats.dropped[topic] += 1
            queue.append(data)
            self._cond.notify()

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        hard_close(self._sock)
        hard_close(self._listener)
        for thread in (self._thread, self._serving):
            if thread is not None:
                thread.join(timeout=5.0)

    # -- connection loop -----------------------------------------------------------------------------
    def _run(self) -> None:
        """robot: connect, serve, reconnect with backoff. policy: accept and check each connection here (a
        handshake times out after handshake_timeout_s, so a silent client cannot hold the port), serve the
        authorised peer in its own thread; a new authorised connection replaces the one being served."""
        backoff = 0.5
        while not self._stop.is_set():
            try:
                sock = self._connect() if self.role == "robot" else self._accept()
            except (OSError, ssl.SSLError, LinkError) as exc:
                if self._stop.is_set():
                    return
                self._rejected(str(exc))
                if self.role == "robot":
                    self._stop.wait(backoff)
                    backoff = min(backoff * 2, 5.0)
                continue
            if sock is None:
                continue
            backoff = 0.5
            if self.role == "robot":
                self._serve(*sock)
            else:
                self._replace_serving(*sock)

    def _replace_serving(self, sock: ssl.SSLSocket, accepted: dict[int, str]) -> None:
        if self._serving is not None and self._serving.is_alive():
            self.log(f"secure link: {self.peer_name} connected again: the new connection replaces the old one")
            hard_close(self._sock)
            self._serving.join(timeout=5.0)
        self._serving = threading.Thread(
            target=self._serve, args=(sock, accepted), name="secure-link-serve", daemon=True
        )
        self._serving.start()

    def _rejected(self, reason: str) -> None:
        self.stats.rejected += 1
        self.stats.last_rejection = reason
        self.log(f"secure link: refused or failed: {reason}")

    def _connect(self) -> tuple[ssl.SSLSocket, dict[int, str]]:
        raw = socket.create_connection(self.address, timeout=self.handshake_timeout_s)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle: a joint state must not wait for an ACK
        try:
            sock = tls_context(self.files, server=False).wrap_socket(raw, server_hostname=self.peer_name)
        except BaseException:
            raw.close()
            raise
        return self._greet(sock)

    def _accept(self) -> tuple[ssl.SSLSocket, dict[int, str]] | None:
        assert self._listener is not None
        try:
            raw, peer = self._listener.accept()
        except TimeoutError:
            return None
        raw.settimeout(self.handshake_timeout_s)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock = tls_context(self.files, server=True).wrap_socket(raw, server_side=True)
        except BaseException as exc:
            raw.close()
            raise LinkError(f"TLS handshake with {peer[0]} failed: {exc}") from None
        return self._greet(sock, f"{peer[0]}")

    def _greet(self, sock: ssl.SSLSocket, where: str = "") -> tuple[ssl.SSLSocket, dict[int, str]]:
        """The peer must be `peer_name` (any other host of the CA is closed), then hellos both ways. Returns the
        socket and the peer's stream indices this side takes (same topic and type as its own contract)."""
        names = peer_names(sock)
        if self.peer_name not in names:
            sock.close()
            raise LinkError(f"peer {where or self.address[0]} is {names or 'unnamed'}, not {self.peer_name!r}")
        hello = {
            "protocol": PROTOCOL,
            "host": self.host_name,
            "sends": [[s.topic, s.msgtype] for s in self.sends.values()],
        }
        try:
            write_frame(sock, HELLO_INDEX, json.dumps(hello).encode())
            index, payload = read_frame(sock)
            theirs = json.loads(payload)
            if index != HELLO_INDEX or theirs.get("protocol") != PROTOCOL:
                raise LinkError(f"peer {self.peer_name} speaks another protocol ({theirs.get('protocol')})")
        except (ValueError, OSError) as exc:
            sock.close()
            raise LinkError(f"no hello from {self.peer_name}: {exc}") from None
        except LinkError:
            sock.close()
            raise
        accepted: dict[int, str] = {}
        for index, (topic, msgtype) in enumerate(theirs.get("sends", [])):
            want = self.receives.get(topic)
            if want is None or want.msgtype != msgtype:
                self.log(f"secure link: {self.peer_name} offers {topic} [{msgtype}], which this side does not take")
            else:
                accepted[index] = topic
        sock.settimeout(None)
        return sock, accepted

    def _serve(self, sock: ssl.SSLSocket, accepted: dict[int, str]) -> None:
        self._sock = sock
        self.stats.connections += 1
        for queue in self._queues.values():
            queue.clear()
        self.connected.set()
        self.log(f"secure link: connected to {self.peer_name} (TLS 1.3, mutual certificates)")
        reader = threading.Thread(target=self._read_loop, args=(sock, accepted), name="secure-link-reader", daemon=True)
        reader.start()
        try:
            while not self._stop.is_set() and reader.is_alive():
                batch: list[tuple[int, bytes]] = []
                with self._cond:
                    self._cond.wait_for(
                        lambda: self._stop.is_set() or any(self._queues.values()) or not reader.is_alive(), 0.2
                    )
                    for topic, queue in self._queues.items():
                        while queue:
                            batch.append((self._index[topic], queue.popleft()))
                            self.stats.sent[topic] += 1
                for index, payload in batch:
                    write_frame(sock, index, payload)
        except OSError as exc:
            self.log(f"secure link: lost {self.peer_name}: {exc}")
        finally:
            self.connected.clear()
            hard_close(sock)
            reader.join(timeout=2.0)
            self._sock = None

    def _read_loop(self, sock: ssl.SSLSocket, accepted: dict[int, str]) -> None:
        try:
            while not self._stop.is_set():
                index, payload = read_frame(sock)
                topic = accepted.get(index)
                if topic is None:
                    self.stats.ignored += 1
                    continue
                self.stats.received[topic] += 1
                self.on_message(topic, payload)
        except (OSError, LinkError) as exc:
            if not self._stop.is_set():
                self.log(f"secure link: {self.peer_name} gone: {exc}")
