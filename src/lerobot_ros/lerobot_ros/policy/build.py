"""policy_node's start-up without ROS: does the policy fit the contract, and the tick loop it runs in.

Everything here raises ValueError with one line naming the setting at fault (the node reports it as a
start-up error); `p` is the node's config (`PolicyNodeConfig`). `p.backend` chooses where
the policy runs: `local` (this process) or `lerobot_server` (LeRobot's policy server at `p.server`: only the
policy's config is read here, the server loads the weights; it always runs as async inference).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from lerobot_ros.contract import ContractError, load_contract
from lerobot_ros.policy.async_inference import AsyncInferenceConfig, resolve_chunking
from lerobot_ros.policy.backend import ChunkBackend, parse_server_address, public_address_warning
from lerobot_ros.policy.config import PolicyNodeConfig
from lerobot_ros.policy.controller import PolicyController
from lerobot_ros.policy.features import feature_mismatches
from lerobot_ros.policy.inference import PolicyRunner
from lerobot_ros.policy.inputs import check_tick_on, max_ages_ns, parse_overrides, policy_streams, streaming_resampler
from lerobot_ros.policy.language import missing_task_message, tokenizer_step
from lerobot_ros.policy.loading import LoadedPolicy, PolicyLoadError, load_policy, load_policy_config
from lerobot_ros.policy.rtc import RtcSettings
from lerobot_ros.policy.safety import SafetyFilter
from lerobot_ros.policy.tick_loop import PolicyTickLoop


def load_checked(p: PolicyNodeConfig):
    """(contract, loaded policy) for settings `p`, the policy checked against the contract."""
    try:
        contract = load_contract(p.contract)
    except ContractError as exc:
        raise ValueError(f"contract: {exc}") from None
    if not p.policy_path:
        raise ValueError("policy.path is required (a LeRobot pretrained_model folder)")
    try:
        if _remote(p):
            loaded = load_policy_config(p.policy_path, server_device(p.policy_device))
        else:
            loaded = load_policy(p.policy_path, p.policy_device)
    except PolicyLoadError as exc:
        raise ValueError(str(exc)) from None
    check_fit(loaded, contract, p.policy_path, p.contract)
    check_task(loaded, contract, p.task)
    return contract, loaded


def _remote(p) -> bool:
    return getattr(p, "backend", "local") == "lerobot_server"


def server_device(device: str) -> str:
    """The device named to a policy server: as given, 'auto' meaning cuda (the reason to use a server)."""
    return "cuda" if (device or "auto") == "auto" else device


def make_backend(
    loaded: LoadedPolicy,
    contract,
    p,
    log: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> ChunkBackend:
    """The in-process runner, or a client of the policy server, connected (ValueError when it cannot be)."""
    if not _remote(p):
        return PolicyRunner(
            loaded, robot_type=contract.robot_type, seed=None if p.seed < 0 else p.seed, on_warning=on_warning
        )
    from lerobot_ros.policy.server_backend import PolicyServerBackend, ServerUnavailable

    host, _ = parse_server_address(p.server)
    warning = public_address_warning(host)
    if warning:
        (log or logging.getLogger(__name__).warning)(warning)
    backend = PolicyServerBackend(
        loaded,
        p.server,
        server_path=p.server_policy_path,
        device=loaded.device,
        actions_per_chunk=p.actions_per_chunk or None,
        timeout_s=p.server_timeout_s,
    )
    try:
        backend.connect()
    except ServerUnavailable as exc:
        backend.close()
        raise ValueError(str(exc)) from None
    return backend


def check_task(loaded: LoadedPolicy, contract, task: str) -> None:
    """A policy conditioned on a task sentence gets one from somewhere: the parameter, the contract's default,
    or the contract's task topic (a bridge's, or any latched publisher's; ticks wait for its first message)."""
    if tokenizer_step(loaded.preprocessor) is not None and not (task or contract.task.default or contract.task.topic):
        raise ValueError(missing_task_message(loaded.type))


def check_fit(loaded: LoadedPolicy, contract, path: str, contract_name: str) -> None:
    """Every feature the policy was trained on, in the shape it expects, is in the contract."""
    problems = feature_mismatches(loaded.config, contract.lerobot_features())
    if problems:
        raise ValueError(
            f"policy {path} does not match contract {contract.source or contract_name}: " + "; ".join(problems)
        )


def build_tick_loop(
    loaded: LoadedPolicy,
    contract,
    p,
    mode: str,
    on_time_jump: Callable[[str], None] | None = None,
    log: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> PolicyTickLoop:
    """The controller (backend, safety, staleness gates, async worker with its chunking) inside its tick loop.
    `log` gets start-up warnings (a public server address); `on_warning` the one-time notes (a task LeRobot's
    tokenizer truncates)."""
    streams = policy_streams(contract.observation_features, loaded.config.input_features or {})
    max_age_ns = max_ages_ns(streams, p.max_age_ms, parse_overrides(p.max_age_overrides, "max_age_overrides"))
    tick_on = check_tick_on(p.tick_on, streams)
    dim = int(loaded.config.output_features["action"].shape[0])
    safety = SafetyFilter.from_lists(dim, p.action_lower, p.action_upper, p.max_delta)
    chunking = resolve_chunking(p.chunking, p.async_inference or _remote(p))  # the policy server is always async
    async_config = None
    if chunking != "switch":
        rtc = RtcSettings(p.rtc_execution_horizon, p.rtc_max_guidance_weight) if chunking == "rtc" else None
        async_config = AsyncInferenceConfig(p.chunk_threshold, p.aggregate_fn, p.actions_per_chunk or None, rtc=rtc)
    runner = make_backend(loaded, contract, p, log, on_warning)
    try:
        controller = PolicyController(
            runner, safety, max_age_ns, p.on_stale, async_inference=async_config, trajectory_mode=mode == "trajectory"
        )
    except ValueError:
        runner.close()
        raise
    return PolicyTickLoop(
        controller,
        streaming_resampler(streams),
        streams,
        task=p.task,
        default_task=contract.task.default or "",
        running=p.autostart,
        mode=mode,
        target_rate=str(contract.fps) if tick_on == "timer" else f"on {tick_on}",
        on_time_jump=on_time_jump,
        task_topic=contract.task.topic,
    )
