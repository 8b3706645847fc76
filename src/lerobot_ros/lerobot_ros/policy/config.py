"""The policy node's settings, declared once: its ROS parameters, `ros2 param describe`, the launch-file
checks and the reference tables come from here. What runs and where is fixed at start-up; the safety
envelope, rates and task are live (reconfigurable)."""

from __future__ import annotations

from dataclasses import dataclass

from lerobot_ros.configs import param
from lerobot_ros.policy.async_inference import CHUNKING_MODES, AsyncInferenceConfig
from lerobot_ros.policy.backend import BACKENDS, DEFAULT_SERVER
from lerobot_ros.policy.chunks import AGGREGATE_FUNCTIONS
from lerobot_ros.policy.controller import ON_STALE
from lerobot_ros.policy.inputs import parse_overrides
from lerobot_ros.policy.loading import DEVICES
from lerobot_ros.policy.output import OUTPUT_MODES
from lerobot_ros.policy.rtc import RtcSettings

ASYNC_DEFAULTS = AsyncInferenceConfig()  # chunk_threshold / aggregate_fn defaults: one source
RTC_DEFAULTS = RtcSettings()  # LeRobot's RTCConfig defaults
_UNITS = "the action's LeRobot units"
_PER_JOINT = "([] = off, one value = every joint)"


@dataclass(frozen=True)
class PolicyNodeConfig:
    """policy_node's settings: what runs and where is fixed at start-up; the safety envelope is not."""

    policy_path: str = param(
        "", "folder written by lerobot-train / save_pretrained (or a hub id); required", name="policy.path"
    )
    contract: str = param("so101", "contract file or shipped name (so101, so101_sim, koch, metaworld, libero)")
    policy_device: str = param(
        "auto",
        f"torch device of the policy: {' | '.join(DEVICES)} (cuda:N too; lerobot_server: the server's, auto = cuda)",
        name="policy.device",
    )
    backend: str = param(
        "local",
        "where the policy runs: in this process, or LeRobot's async-inference policy server (always async)",
        choices=BACKENDS,
    )
    server: str = param(
        DEFAULT_SERVER,
        "lerobot_server: HOST:PORT of the policy server; it unpickles what it receives, so keep it on "
        "loopback or a private network (a public address is warned about)",
    )
    server_policy_path: str = param(
        "", "lerobot_server: the policy folder as the server's machine sees it ('' = policy.path)"
    )
    server_timeout_s: float = param(
        5.0, "lerobot_server: connect at start-up, and reply deadline per chunk", unit="s", min=0.0, min_exclusive=True
    )
    output_mode: str = param(
        "", "what is published ('' = from the contract's action type)", choices=("", *OUTPUT_MODES)
    )
    action_topic: str = param("", "'' = the contract's action topic (or its sibling joint_command / joint_trajectory)")
    tick_on: str = param("timer", "'timer' (the contract's fps on the ROS clock) or a feature that triggers each tick")
    async_inference: bool = param(False, "run inference in its own thread and blend chunks (needs n_obs_steps == 1)")
    chunk_threshold: float = param(
        ASYNC_DEFAULTS.threshold,
        "async: ask for a chunk when at most this fraction of one is queued",
        min=0.0,
        max=1.0,
        reconfigurable=True,
    )
    aggregate_fn: str = param(
        ASYNC_DEFAULTS.aggregate, "async: how overlapping chunks merge", choices=tuple(AGGREGATE_FUNCTIONS)
    )
    actions_per_chunk: int = param(0, "async: actions used per chunk (0 = the policy's chunk length)", min=0)
    chunking: str = param(
        "auto",
        "chunk hand-over: switch (inline), aggregate (async, aggregate_fn), rtc (async, "
        "LeRobot's real-time chunking: smolvla, pi0, pi05); auto = aggregate if async_inference else switch",
        choices=("auto", *CHUNKING_MODES),
    )
    rtc_execution_horizon: int = param(
        RTC_DEFAULTS.execution_horizon,
        "rtc: leftover actions that guide the next chunk (keep it above the inference delay in ticks)",
        unit="ticks",
        min=1,
    )
    rtc_max_guidance_weight: float = param(
        RTC_DEFAULTS.max_guidance_weight, "rtc: cap of the guidance weight", min=0.0, min_exclusive=True
    )
    max_age_ms: float = param(
        500.0, "oldest acceptable observation (0 = no limit)", unit="ms", min=0.0, reconfigurable=True
    )
    max_age_overrides: list[str] = param(
        [], "per-stream max_age_ms as 'feature=milliseconds'", unit="ms", reconfigurable=True
    )
    on_stale: str = param(
        "hold", "gated tick: repeat the last command, or publish nothing", choices=ON_STALE, reconfigurable=True
    )
    action_lower: list[float] = param([], f"lower action limits {_PER_JOINT}", unit=_UNITS, reconfigurable=True)
    action_upper: list[float] = param([], f"upper action limits {_PER_JOINT}", unit=_UNITS, reconfigurable=True)
    max_delta: list[float] = param([], f"largest change per tick {_PER_JOINT}", unit=_UNITS, reconfigurable=True)
    task: str = param(
        "", "task string for VLAs ('' = the contract's); messages on its task topic replace it", reconfigurable=True
    )
    seed: int = param(
        -1, "torch seed at start-up and on ~/reset (-1 = none); a new one acts at the next ~/reset", reconfigurable=True
    )
    autostart: bool = param(True, "act from start-up, or wait for ~/start")
    diagnostics_period_s: float = param(
        1.0, "/diagnostics period (steady clock)", unit="s", min=0.0, min_exclusive=True, reconfigurable=True
    )

    def __post_init__(self):
        parse_overrides(self.max_age_overrides, "max_age_overrides")  # the syntax, at start-up and at run time
