"""`lerobot-ros eval --profile`: where an evaluation's wall time goes, phase by phase.

Phases are timed by the evaluator around what it waits for (starting processes, the nodes coming up:
their imports, the policy's load and DDS discovery, the episodes). Each bridge adds its own start-up
(process spawn until its runner exists) and its first reset (the simulator build). Per step, the loop
is split from the evaluator's arrival times of each status and action plus the bridge's own step
timer: sim physics, render, publish + observation transport, policy (the policy node's tick_ms), and
the action's way back. A disabled profile times nothing and costs nothing.
"""

from __future__ import annotations

import time
from contextlib import contextmanager


class Profile:
    def __init__(self, enabled: bool = False):
        self.enabled = enabled
        self.phases: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.steps: dict[str, float] = {}
        self.startup: dict[str, list[float]] = {}  # per bridge, averaged

    @contextmanager
    def phase(self, name: str):
        if not self.enabled:
            yield
            return
        t0 = time.monotonic()
        try:
            yield
        finally:
            self.add(name, time.monotonic() - t0)

    def add(self, name: str, seconds: float) -> None:
        if self.enabled:
            self.phases[name] = self.phases.get(name, 0.0) + float(seconds)
            self.counts[name] = self.counts.get(name, 0) + 1

    def add_task(self, workers, bridges: dict[str, dict]) -> None:
        """Merge one task's per-step timings: the workers' (arrival times seen by the evaluator) and the
        bridges' own (sim/profiling.py, read after they exited)."""
        if not self.enabled:
            return
        for w in workers:
            for k, v in (w.step_profile or {}).items():
                self.steps[k] = self.steps.get(k, 0) + v
        for b in bridges.values():
            for k in ("steps", "step_s", "physics_s"):
                self.steps["sim_" + k] = self.steps.get("sim_" + k, 0) + b.get(k, 0)
            self.startup.setdefault("bridge process up (interpreter, imports, node set-up)", []).append(b["startup_s"])
            if b.get("first_reset_s") is not None:
                self.startup.setdefault("simulator build (first reset)", []).append(b["first_reset_s"])

    def step_shares(self) -> dict[str, float]:
        """Mean milliseconds per step of each part of the lockstep loop."""
        st = self.steps
        n, sim_n = st.get("steps", 0), st.get("sim_steps", 0)
        if not n or not sim_n:
            return {}
        sim_ms = 1e3 * st["sim_step_s"] / sim_n
        physics_ms = 1e3 * st["sim_physics_s"] / sim_n
        bridge_ms = 1e3 * st["bridge_s"] / n
        source_ms = 1e3 * st["source_s"] / n
        policy_ms = 1e3 * st["policy_s"] / st["policy_ticks"] if st.get("policy_ticks") else 0.0
        return {
            "sim step (physics)": physics_ms,
            "render": sim_ms - physics_ms,
            "publish + observation transport": max(0.0, bridge_ms - sim_ms),
            "policy": policy_ms,
            "action return (source out, transport)": max(0.0, source_ms - policy_ms),
        }

    def summary(self) -> dict:
        return {
            "phases_s": {k: round(v, 3) for k, v in self.phases.items()},
            "startup_s": {k: round(sum(v) / len(v), 3) for k, v in self.startup.items()},
            "step_ms": {k: round(v, 3) for k, v in self.step_shares().items()},
        }

    def report(self, total_s: float) -> str:
        lines = [f"profile (wall {total_s:.2f} s):"]
        for name, s in self.phases.items():
            n = self.counts[name]
            lines.append(
                f"  {name:52s} {s:8.2f} s {100 * s / max(total_s, 1e-9):5.1f}%" + (f"  ({n}x)" if n > 1 else "")
            )
        if self.startup:
            lines.append("  per bridge (mean):")
            for name, v in self.startup.items():
                lines.append(f"    {name:50s} {sum(v) / len(v):8.2f} s")
        shares = self.step_shares()
        if shares:
            total = sum(shares.values())
            lines.append(f"  per step ({total:.2f} ms):")
            for name, ms in shares.items():
                lines.append(f"    {name:50s} {ms:8.2f} ms {100 * ms / max(total, 1e-9):5.1f}%")
        return "\n".join(lines)
