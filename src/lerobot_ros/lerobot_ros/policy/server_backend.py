"""policy_node as a client of LeRobot's async-inference policy server (`backend:=lerobot_server`).

The server speaks gRPC with pickled payloads, as LeRobot's own `RobotClient` uses it: `Ready` (the server
forgets any previous client), `SendPolicyInstructions` (a pickled `RemotePolicyConfig`: the server loads the
policy from its own disk), then per chunk `SendObservations` (a pickled `TimedObservation` in transfer chunks)
and `GetActions` (a pickled list of `TimedAction`, post-processed, in LeRobot units). One request is in flight
at a time (the inference thread calls `predict_chunk`), so the reply belongs to the observation just sent;
`must_go` is always set, because the node asks only when its queue needs a chunk (the server's similarity
filter would otherwise skip observations of a slowly moving arm and let the queue run dry).

A lost server (refused, timed out, restarted: an empty reply) makes `predict_chunk` raise `ServerUnavailable`
and `problem()` say why; the next call reconnects (waiting at most `reconnect_wait_s`) and re-sends the policy
instructions, so the node resumes by itself. Security: the server unpickles what it receives, and this client
unpickles the server's replies: both ends must trust each other (loopback, a private network, an SSH tunnel).
"""

from __future__ import annotations

import itertools
import pickle  # nosec - the policy server's own protocol; see the module docstring
import threading
import time
from collections.abc import Mapping

import numpy as np

from lerobot_ros.conventions.errors import UserError
from lerobot_ros.policy.backend import parse_server_address
from lerobot_ros.policy.inference import _to_numpy
from lerobot_ros.policy.loading import LoadedPolicy

STATE = "observation.state"
IMAGES = "observation.images."
SETUP_TIMEOUT_S = 120.0  # the server loads the policy inside SendPolicyInstructions (a VLA takes a while)


class ServerUnavailable(UserError, RuntimeError):
    """The policy server cannot give a chunk now; the message says why in one line."""


def server_features(config) -> dict[str, dict]:
    """The dataset-layout features the server rebuilds a frame from (`build_dataset_frame`): the policy's state
    as named scalars, its cameras as HWC images. ValueError for inputs the server does not pass to a policy."""
    inputs = dict(config.input_features or {})
    other = sorted(n for n in inputs if n != STATE and not n.startswith(IMAGES))
    if other or STATE not in inputs:
        what = f"also reads {other}" if other else f"has no {STATE}"
        raise ValueError(
            f"LeRobot's policy server passes only {STATE} and {IMAGES}* to a policy, and this "
            f"{config.type} policy {what}; use backend:=local"
        )
    out = {}
    for name, feature in inputs.items():
        shape = tuple(feature.shape)
        if name == STATE:
            out[name] = {"dtype": "float32", "shape": shape, "names": [f"{STATE}[{i}]" for i in range(shape[0])]}
        else:
            c, h, w = shape
            out[name] = {"dtype": "image", "shape": (h, w, c), "names": ["height", "width", "channels"]}
    return out


class PolicyServerBackend:
    """A `ChunkBackend` over gRPC to `python -m lerobot.async_inference.policy_server`."""

    name = "lerobot_server"
    steps_inline = False  # the server answers with whole chunks
    rtc_in_process = False  # the policy runs on the server

    def __init__(
        self,
        loaded: LoadedPolicy,
        address: str,
        *,
        server_path: str = "",
        device: str = "cuda",
        actions_per_chunk: int | None = None,
        timeout_s: float = 5.0,
        reconnect_wait_s: float = 1.0,
    ):
        import grpc
        from lerobot.async_inference.constants import SUPPORTED_POLICIES
        from lerobot.async_inference.helpers import RemotePolicyConfig
        from lerobot.transport import services_pb2_grpc
        from lerobot.transport.utils import grpc_channel_options

        host, port = parse_server_address(address)
        if loaded.type not in SUPPORTED_POLICIES:
            raise ValueError(
                f"LeRobot's policy server runs {SUPPORTED_POLICIES}, not {loaded.type}; use backend:=local"
            )
        self.loaded = loaded
        self.address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self.features = server_features(loaded.config)
        self.timeout_s = float(timeout_s)
        self.reconnect_wait_s = float(reconnect_wait_s)
        self.seed: int | None = None  # the server does not seed; kept for the reconfigure path
        # the task string goes with each observation and the server's own processors tokenize it; the weights
        # and processors are not here, so the node cannot tell whether the policy reads it (nor wait for one)
        self.reads_task = False
        self.chunk_task: str | None = None
        self.last_chunk: np.ndarray | None = None
        self.reconnects = 0
        self.connected = False
        self._problem: str | None = "not connected yet"
        self._timesteps = itertools.count()
        self._lock = threading.Lock()
        self._spec = RemotePolicyConfig(
            policy_type=loaded.type,
            pretrained_name_or_path=server_path or loaded.path,
            lerobot_features=self.features,
            actions_per_chunk=int(actions_per_chunk or loaded.chunk_length),
            device=device,
        )
        options = grpc_channel_options(enable_retries=False) + [
            ("grpc.initial_reconnect_backoff_ms", 200),  # a restarted server is found within about a second
            ("grpc.min_reconnect_backoff_ms", 200),
            ("grpc.max_reconnect_backoff_ms", 1000),
        ]
        self._grpc = grpc
        self._channel = grpc.insecure_channel(self.address, options=options)
        self._stub = services_pb2_grpc.AsyncInferenceStub(self._channel)

    # ---- connection -----------------------------------------------------------------------------
    def connect(self, wait_s: float | None = None) -> None:
        """Handshake and policy instructions; ServerUnavailable (one line) when the server cannot be used."""
        from lerobot.transport import services_pb2

        grpc = self._grpc
        wait_s = self.timeout_s if wait_s is None else wait_s
        try:
            grpc.channel_ready_future(self._channel).result(timeout=wait_s)
        except grpc.FutureTimeoutError:
            raise self._lost(
                f"not reachable within {wait_s:g} s (start it with `python -m "
                f"lerobot.async_inference.policy_server --host=HOST --port=PORT`, or fix server:=HOST:PORT)"
            ) from None
        try:
            self._stub.Ready(services_pb2.Empty(), timeout=self.timeout_s)
        except grpc.RpcError as exc:
            raise self._lost(
                f"did not answer as LeRobot's policy server ({_rpc_text(exc)}); check server:=HOST:PORT"
            ) from None
        try:
            self._stub.SendPolicyInstructions(
                services_pb2.PolicySetup(data=pickle.dumps(self._spec)), timeout=SETUP_TIMEOUT_S
            )
        except grpc.RpcError as exc:
            raise self._lost(
                f"refused the policy instructions ({_rpc_text(exc)}); is {self._spec.pretrained_name_or_path} "
                "a policy folder on the server's machine (server_policy_path), and its device available "
                "there (device)?"
            ) from None
        self.connected, self._problem = True, None
        self.reconnects += 1

    def _lost(self, why: str) -> ServerUnavailable:
        self.connected = False
        self._problem = f"policy server {self.address} {why}"
        return ServerUnavailable(self._problem)

    # ---- ChunkBackend ---------------------------------------------------------------------------
    def predict_chunk(self, frame: Mapping[str, np.ndarray], task: str = "") -> np.ndarray:
        """The server's (T, D) chunk for `frame`; ServerUnavailable when it cannot be had (the next call retries)."""
        from lerobot.async_inference.helpers import TimedObservation
        from lerobot.transport import services_pb2
        from lerobot.transport.utils import send_bytes_in_chunks

        grpc = self._grpc
        with self._lock:
            if not self.connected:
                self.connect(self.reconnect_wait_s)
            step = next(self._timesteps)
            obs = TimedObservation(
                timestamp=time.time(), timestep=step, observation=self.raw_observation(frame, task), must_go=True
            )
            try:
                self._stub.SendObservations(
                    send_bytes_in_chunks(pickle.dumps(obs), services_pb2.Observation), timeout=self.timeout_s
                )
                reply = self._stub.GetActions(services_pb2.Empty(), timeout=self.timeout_s)
            except grpc.RpcError as exc:
                raise self._lost(f"failed ({_rpc_text(exc)}); reconnecting") from None
            if not reply.data:  # restarted (no policy loaded), or its inference failed: set up again
                raise self._lost("sent no actions (restarted, or its inference failed: see its log); reconnecting")
            actions = pickle.loads(reply.data)  # nosec - see the module docstring
            if not actions or actions[0].get_timestep() != step:
                raise self._lost("answered for another observation; reconnecting")
            chunk = np.stack([np.asarray(_to_numpy(a.get_action()), dtype=np.float64).reshape(-1) for a in actions])
            self.last_chunk = chunk
            return chunk

    def raw_observation(self, frame: Mapping[str, np.ndarray], task: str) -> dict:
        """The robot-style observation the server expects: state scalars by name, images by camera, the task."""
        raw: dict = {"task": task}
        for name, spec in self.features.items():
            if name not in frame:
                raise KeyError(f"frame lacks {name}")
            if name == STATE:
                raw.update(zip(spec["names"], np.asarray(frame[name], dtype=np.float32).reshape(-1).tolist()))
            else:
                raw[name.removeprefix(IMAGES)] = np.ascontiguousarray(frame[name])
        return raw

    def reset(self) -> None:
        self.last_chunk = None  # the server keeps no per-episode state for chunked policies

    def close(self) -> None:
        self._channel.close()

    def problem(self) -> str | None:
        return self._problem

    def diagnostics(self) -> dict[str, str]:
        return {
            "server": self.address,
            "server_state": self._problem or "connected",
            "server_connects": str(self.reconnects),
        }


def _rpc_text(exc) -> str:
    code = exc.code() if hasattr(exc, "code") else None
    details = exc.details() if hasattr(exc, "details") else str(exc)
    return f"{getattr(code, 'name', code)}: {details}"
