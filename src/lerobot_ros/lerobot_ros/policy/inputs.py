"""Which contract streams policy_node reads, how old each may be, and what triggers a tick.

Only the features the policy takes as inputs are subscribed (a contract may carry more); every stream
gets the node's `max_age_ms` unless `max_age_overrides` names it ("feature=milliseconds"). Errors are
ValueErrors worded for the parameter at fault (the node reports them as start-up errors).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lerobot_ros.resample import StreamingResampler, StreamSpec


def parse_overrides(items: Iterable[str] | None, what: str) -> dict[str, float]:
    """["name=value", ...] -> {name: value}; a malformed entry is an error naming it."""
    out = {}
    for item in items or []:
        name, sep, value = str(item).partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"{what}: expected 'feature=milliseconds', got {item!r}") from None
    return out


def policy_streams(observation_features: Mapping, policy_inputs: Iterable[str]) -> dict:
    """The contract's observation features the policy reads, in contract order."""
    inputs = set(policy_inputs)
    return {n: f for n, f in observation_features.items() if n in inputs}


def max_ages_ns(streams: Iterable[str], max_age_ms: float, overrides: Mapping[str, float]) -> dict[str, int]:
    """Per stream: the oldest acceptable observation in ns (0 = no limit)."""
    streams = list(streams)
    unknown = sorted(set(overrides) - set(streams))
    if unknown:
        raise ValueError(f"max_age_overrides names unknown stream(s) {unknown}; streams: {sorted(streams)}")
    return {n: int(overrides.get(n, max_age_ms) * 1e6) for n in streams}


def check_tick_on(tick_on: str, streams: Iterable[str]) -> str:
    streams = sorted(streams)
    if tick_on != "timer" and tick_on not in streams:
        raise ValueError(f"tick_on must be 'timer' or one of {streams}, got {tick_on!r}")
    return tick_on


def streaming_resampler(streams: Mapping) -> StreamingResampler:
    """The live resampler over contract features, with each feature's alignment (images are not interpolated)."""
    return StreamingResampler(
        {n: StreamSpec(f.alignment.policy, f.alignment.tolerance_ns, not f.is_image) for n, f in streams.items()}
    )
