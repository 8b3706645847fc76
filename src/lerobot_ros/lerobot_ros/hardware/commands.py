"""The goal a driver should send now: the latest command, or a trajectory sampled at the current time.

Sources (a Float64MultiArray, a JointState, a JointTrajectory) all land here; a watchdog turns a silent
command stream into "hold": after `watchdog_s` without a new command (counted from the end of the last
trajectory) `goal()` returns None and the driver holds its present position.
"""

from __future__ import annotations

import numpy as np

IDLE, TRACKING, TRAJECTORY, TIMEOUT = "idle", "tracking", "trajectory", "timeout"


class CommandBuffer:
    def __init__(self, size: int, watchdog_s: float = 0.5):
        self.size = size
        self.watchdog_ns = int(watchdog_s * 1e9)
        self._target: np.ndarray | None = None
        self._traj: tuple[np.ndarray, np.ndarray] | None = None  # absolute times (ns), positions (T, D)
        self._last_ns: int | None = None
        self.count = 0

    def set_positions(self, positions, now_ns: int) -> None:
        positions = np.asarray(positions, dtype=np.float64).reshape(-1)
        if positions.size != self.size:
            raise ValueError(f"command has {positions.size} values for {self.size} joints")
        self._target, self._traj, self._last_ns = positions.copy(), None, now_ns
        self.count += 1

    def set_partial(self, indices, values, now_ns: int, fallback) -> None:
        """Command some joints by index; the others keep their live goal, or `fallback` (the present position)
        when there is none: no command yet, or the watchdog expired (the arm holds where it is, and an old goal
        must not come back for the joints this command leaves out)."""
        base = self.goal(now_ns)
        base = np.array(fallback if base is None else base, dtype=np.float64)
        base[list(indices)] = values
        self.set_positions(base, now_ns)

    def set_trajectory(self, times_ns, positions, start_ns: int, now_ns: int, current=None) -> None:
        """A trajectory whose point i is due at start_ns + times_ns[i]; starts from `current` if given."""
        times = np.asarray(times_ns, dtype=np.int64) + int(start_ns)
        positions = np.asarray(positions, dtype=np.float64)
        if (
            positions.ndim != 2
            or positions.shape[1] != self.size
            or positions.shape[0] != times.size
            or times.size == 0
        ):
            raise ValueError(f"trajectory needs (T, {self.size}) positions with T times, got {positions.shape}")
        if current is not None and times[0] > max(now_ns, start_ns):
            times = np.concatenate([[max(now_ns, start_ns)], times])
            positions = np.vstack([np.asarray(current, dtype=np.float64)[None, :], positions])
        self._traj, self._target = (times, positions), None
        self._last_ns = max(now_ns, int(times[-1]))
        self.count += 1

    def current_goal(self, now_ns: int) -> np.ndarray | None:
        if self._traj is not None:
            times, positions = self._traj
            return np.array([np.interp(now_ns, times, positions[:, j]) for j in range(self.size)])
        return None if self._target is None else self._target.copy()

    def state(self, now_ns: int) -> str:
        if self._last_ns is None:
            return IDLE
        if now_ns - self._last_ns > self.watchdog_ns:
            return TIMEOUT
        return TRAJECTORY if self._traj is not None else TRACKING

    def goal(self, now_ns: int) -> np.ndarray | None:
        """The goal to send now, or None (no command yet, or the watchdog expired: hold)."""
        if self.state(now_ns) in (IDLE, TIMEOUT):
            return None
        return self.current_goal(now_ns)

    def clear(self) -> None:
        self._target = self._traj = self._last_ns = None
