"""Actions indexed by control tick, and how an incoming chunk is merged into the ones still queued.

Semantics of LeRobot's async robot client (`RobotClient._aggregate_action_queues`): actions for ticks
already executed are dropped; an incoming action for a tick still queued is blended with the queued one
by an aggregate function; the queue is replaced by the incoming chunk (merged). The functions below
carry the names and weights of LeRobot's registry (`lerobot.async_inference.configs.AGGREGATE_FUNCTIONS`,
not importable here without grpc).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

AGGREGATE_FUNCTIONS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "weighted_average": lambda old, new: 0.3 * old + 0.7 * new,
    "latest_only": lambda old, new: new,
    "average": lambda old, new: 0.5 * old + 0.5 * new,
    "conservative": lambda old, new: 0.7 * old + 0.3 * new,
}


#: LeRobot's async client default (`RobotClientConfig.aggregate_fn_name`)
DEFAULT_AGGREGATE = "weighted_average"


def aggregate_function(name: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    try:
        return AGGREGATE_FUNCTIONS[name]
    except KeyError:
        raise ValueError(f"unknown aggregate function {name!r}; use one of {list(AGGREGATE_FUNCTIONS)}") from None


class ActionQueue:
    """tick -> action; thread-safe (the inference thread merges, the control tick pops)."""

    def __init__(self, aggregate: str | Callable = DEFAULT_AGGREGATE):
        self.aggregate = aggregate_function(aggregate) if isinstance(aggregate, str) else aggregate
        self._items: dict[int, np.ndarray] = {}
        self._last_tick = -1
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._last_tick = -1

    @property
    def last_tick(self) -> int:
        """The last tick popped (executed or run dry); -1 before any."""
        with self._lock:
            return self._last_tick

    def depth(self, from_tick: int | None = None) -> int:
        """Actions queued for `from_tick` or later (default: after the last executed tick)."""
        with self._lock:
            start = self._last_tick + 1 if from_tick is None else from_tick
            return sum(1 for t in self._items if t >= start)

    def merge(self, start_tick: int, chunk) -> int:
        """Merge a (T, D) chunk whose row i is meant for tick start_tick + i; returns how many were kept."""
        chunk = np.asarray(chunk, dtype=np.float64)
        with self._lock:
            merged: dict[int, np.ndarray] = {}
            for i, action in enumerate(chunk):
                tick = start_tick + i
                if tick <= self._last_tick:
                    continue
                old = self._items.get(tick)
                merged[tick] = action if old is None else np.asarray(self.aggregate(old, action), dtype=np.float64)
            self._items = merged
            return len(merged)

    def pop(self, tick: int) -> np.ndarray | None:
        """The action for `tick` (None: the queue ran dry); ticks up to `tick` count as executed."""
        with self._lock:
            action = self._items.pop(tick, None)
            for t in [t for t in self._items if t < tick]:
                del self._items[t]
            self._last_tick = max(self._last_tick, tick)
            return action

    def pending(self) -> tuple[list[int], np.ndarray | None]:
        """(ticks, (N, D) actions) still queued, in tick order (for showing the plan)."""
        with self._lock:
            ticks = sorted(self._items)
            if not ticks:
                return [], None
            return ticks, np.stack([self._items[t] for t in ticks])
