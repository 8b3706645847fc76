"""Action checks before anything reaches a simulator: wrong length or non-finite values are rejected,
counted by reason, and never stepped."""

from __future__ import annotations

from collections import Counter

import numpy as np


class ActionRejected(ValueError):
    """The action was not stepped; the message says why."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


class ActionValidator:
    """Checks actions of a fixed length and counts rejections per reason."""

    def __init__(self, names: tuple[str, ...] | list[str]):
        self.names = tuple(names)
        self.rejected: Counter[str] = Counter()
        self.accepted = 0

    @property
    def total_rejected(self) -> int:
        return sum(self.rejected.values())

    def reject(self, reason: str, message: str) -> ActionRejected:
        self.rejected[reason] += 1
        return ActionRejected(reason, message)

    def check(self, values) -> np.ndarray:
        """The action as float64 (len(names),); raises ActionRejected (already counted) otherwise."""
        try:
            action = np.asarray(values, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise self.reject("not_numeric", f"action is not numeric ({exc})") from None
        if action.size != len(self.names):
            raise self.reject(
                "wrong_length",
                f"action has {action.size} values, expected {len(self.names)} ({', '.join(self.names)})",
            )
        bad = ~np.isfinite(action)
        if bad.any():
            which = [self.names[i] for i in np.flatnonzero(bad)]
            raise self.reject("non_finite", f"action has NaN/inf in {which}")
        self.accepted += 1
        return action

    def check_named(self, names, values) -> np.ndarray:
        """Reorder a named action (e.g. a JointTrajectory point) to `names` order, then check it."""
        names = list(names)
        if not names:
            return self.check(values)
        missing = [n for n in self.names if n not in names]
        if missing:
            raise self.reject("unknown_joints", f"action lacks {missing}; it names {names}")
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if values.size != len(names):
            raise self.reject("wrong_length", f"action has {values.size} values for {len(names)} names")
        index = {n: i for i, n in enumerate(names)}
        return self.check(values[[index[n] for n in self.names]])
