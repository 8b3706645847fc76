"""Policy inference library behind `policy_node` (no ROS here): load a LeRobot policy with its processors,
check it against a contract, run it synchronously or in an inference thread with chunk blending or real-time
chunking, and make its actions safe (warm-up/staleness gates, NaN drop, joint-limit clamp, max change per tick).
"""

from lerobot_ros.policy.async_inference import AsyncInference, AsyncInferenceConfig, AsyncTick
from lerobot_ros.policy.chunks import AGGREGATE_FUNCTIONS, ActionQueue, aggregate_function
from lerobot_ros.policy.controller import ON_STALE, PolicyController, TickResult
from lerobot_ros.policy.features import feature_mismatches, policy_io
from lerobot_ros.policy.inference import PolicyRunner
from lerobot_ros.policy.loading import (
    DEVICES,
    LoadedPolicy,
    PolicyLoadError,
    load_policy,
    load_policy_config,
    read_policy_config,
    resolve_device,
)
from lerobot_ros.policy.rtc import RTC_SCHEDULES, RtcGuide, RtcSettings, enable_rtc, supports_rtc
from lerobot_ros.policy.safety import SafetyFilter, staleness_reason
from lerobot_ros.policy.stats import RollingStats

__all__ = [
    "AGGREGATE_FUNCTIONS",
    "ActionQueue",
    "AsyncInference",
    "AsyncInferenceConfig",
    "AsyncTick",
    "DEVICES",
    "load_policy_config",
    "ON_STALE",
    "PolicyController",
    "TickResult",
    "LoadedPolicy",
    "PolicyLoadError",
    "PolicyRunner",
    "RTC_SCHEDULES",
    "RollingStats",
    "RtcGuide",
    "RtcSettings",
    "SafetyFilter",
    "aggregate_function",
    "enable_rtc",
    "feature_mismatches",
    "load_policy",
    "policy_io",
    "read_policy_config",
    "resolve_device",
    "staleness_reason",
    "supports_rtc",
]
