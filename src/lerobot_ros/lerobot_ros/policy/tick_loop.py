"""policy_node's tick loop without ROS: which ticks run, on which frame, and what is reported about them.

The node calls `run(t_ns, emit)` on every timer tick (ROS time, so sim time works) or triggering
observation; the loop skips a tick whose time did not advance (a paused simulation), clears the
observation buffers when time jumps back (a simulator restarted), takes the resampler's frame at `t_ns`,
steps the controller and hands the result to `emit` (the node's publishing), all under one lock that
`reset()` shares. It also keeps the latency and rate bookkeeping and the /diagnostics contents; reading
them has no side effect: the diagnostics timer starts each rate window explicitly (`next_window`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from lerobot_ros.configs import live_names
from lerobot_ros.policy.config import PolicyNodeConfig
from lerobot_ros.policy.controller import ON_STALE, PolicyController, TickResult
from lerobot_ros.policy.inputs import max_ages_ns, parse_overrides
from lerobot_ros.policy.safety import SafetyFilter
from lerobot_ros.policy.stats import RollingStats
from lerobot_ros.resample import StreamingResampler

OK, WARN, ERROR = 0, 1, 2  # diagnostic_msgs/DiagnosticStatus levels
#: settings `reconfigure` applies between two ticks: the config's live ones but the node's own
RECONFIGURABLE = tuple(n for n in live_names(PolicyNodeConfig) if n != "diagnostics_period_s")
_SAFETY = {"action_lower", "action_upper", "max_delta"}

#: emit(t_ns, result, frame ages (None while stopped), tick start (perf_counter s), received wall ns)
Emit = Callable[[int, TickResult, "dict[str, int | None] | None", float, "int | None"], None]


class RateWindow:
    """Ticks per second since the window began. Reading it changes nothing; `restart` begins a new window."""

    def __init__(self):
        self._mark: tuple[float, int] | None = None  # (monotonic s, ticks) when the window began

    def rate(self, now_s: float, count: int) -> float | None:
        if self._mark is None or now_s <= self._mark[0]:
            return None
        return (count - self._mark[1]) / (now_s - self._mark[0])

    def restart(self, now_s: float, count: int) -> None:
        self._mark = (now_s, count)


class PolicyTickLoop:
    """Tick de-duplication, time jumps, start/stop, latency and diagnostics around a PolicyController."""

    def __init__(
        self,
        controller: PolicyController,
        resampler: StreamingResampler,
        streams: Mapping[str, object],
        *,
        task: str = "",
        default_task: str = "",
        running: bool = True,
        mode: str = "commands",
        target_rate: str = "",
        on_time_jump: Callable[[str], None] | None = None,
        task_topic: str | None = None,
    ):
        self.controller = controller
        self.resampler = resampler
        self.features = dict(streams)  # observation features by name (the node decodes with them)
        self.streams = tuple(streams)
        self.default_task = default_task  # the contract's, used while `task` is ""
        self.task_topic = task_topic  # where new tasks arrive (for diagnostics and the wait reason)
        self.task, self.task_source = "", "none"
        self.set_task(task, "parameter")
        #: a VLA without a task yet waits (gated ticks) instead of acting on an empty sentence
        self.needs_task = controller.runner.reads_task
        self.running = running
        self.mode = mode  # for diagnostics: what the node publishes
        self.target_rate = target_rate  # for diagnostics: "<fps>" or "on <feature>"
        self.on_time_jump = on_time_jump
        self.tick_index = 0
        self.last_tick_ns: int | None = None
        self.rejected = dict.fromkeys(self.streams, 0)
        self.last_reject: str | None = None
        self.latency_ms = RollingStats()
        self.decode_ms = {n: RollingStats() for n, f in self.features.items() if getattr(f, "is_image", False)}
        self.window = RateWindow()
        self.lock = threading.Lock()

    # ---- inputs ---------------------------------------------------------------------------------
    def observe(self, name: str, stamp_ns: int, value, decode_ms: float | None = None) -> None:
        """A decoded observation; `decode_ms`: what decoding its message took (image streams, for /diagnostics)."""
        if decode_ms is not None and name in self.decode_ms:
            self.decode_ms[name].add(decode_ms)
        self.resampler.push(name, stamp_ns, value)

    def reject(self, name: str, reason: str) -> None:
        """A message of stream `name` that could not be decoded (counted for /diagnostics)."""
        self.rejected[name] += 1
        self.last_reject = reason

    def set_task(self, task: str, source: str) -> None:
        """A new task sentence (from the parameter or the task topic); "" falls back to the contract's default.
        It conditions the next chunk the policy predicts (the executing one runs out as predicted)."""
        if task:
            self.task, self.task_source = task, source
        elif self.default_task:
            self.task, self.task_source = self.default_task, "contract default"
        else:
            self.task, self.task_source = "", "none"

    def _waiting_for_task(self) -> str | None:
        if not self.needs_task or self.task:
            return None
        where = f" on {self.task_topic}" if self.task_topic else ""
        return f"waiting for a task{where} (this policy is conditioned on one)"

    # ---- the tick -------------------------------------------------------------------------------
    def run(self, t_ns: int, emit: Emit, received_wall_ns: int | None = None) -> bool:
        """One control tick at ROS time `t_ns`; False when the time did not advance (nothing done).

        `received_wall_ns`: when the observation that triggered it arrived (passed on to `emit`).
        """
        start = time.perf_counter()
        with self.lock:
            last = self.last_tick_ns
            if last is not None and t_ns <= last:
                if t_ns == last:
                    return False  # the clock did not advance (paused simulation): nothing new to do
                if self.on_time_jump is not None:
                    self.on_time_jump("ROS time jumped back; observation buffers cleared")
                self.resampler.clear()  # a simulator restarted its clock
            self.last_tick_ns = t_ns
            if not self.running:
                result, ages = self.controller.stopped(self.tick_index), None
            else:
                frame = self.resampler.frame_at(t_ns)
                values = frame.values
                ages = {n: (None if values.get(n) is None else frame.staleness_ns[n]) for n in self.streams}
                waiting = self._waiting_for_task()
                reasons = frame.reasons if waiting is None else [*(frame.reasons or []), waiting]
                result = self.controller.step(self.tick_index, values, ages, self.task, reasons)
            emit(t_ns, result, ages, start, received_wall_ns)
            self.tick_index += 1
            return True

    def reset(self) -> None:
        """New episode: policy state, action queue and observation buffers cleared; time may restart."""
        with self.lock:
            self.controller.reset()
            self.resampler.clear()
            self.last_tick_ns = None

    def reconfigure(self, new, changed: Mapping) -> None:
        """Apply run-time changes between two ticks. `new` has every setting as an attribute (the node's
        parameters), `changed` the names that changed. Everything is checked first: a ValueError (with the
        reason) refuses the whole change and leaves the loop as it was."""
        c = self.controller
        unknown = sorted(set(changed) - set(RECONFIGURABLE))
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: not settable at run time")
        safety = ages = None
        if _SAFETY & set(changed):
            dim = int(c.runner.loaded.config.output_features["action"].shape[0])
            safety = SafetyFilter.from_lists(dim, new.action_lower, new.action_upper, new.max_delta)
        if {"max_age_ms", "max_age_overrides"} & set(changed):
            overrides = parse_overrides(new.max_age_overrides, "max_age_overrides")
            ages = max_ages_ns(self.streams, new.max_age_ms, overrides)
        if "on_stale" in changed and new.on_stale not in ON_STALE:
            raise ValueError(f"on_stale must be one of {ON_STALE}, got {new.on_stale!r}")
        if "chunk_threshold" in changed and c.worker is None:
            raise ValueError(
                "chunk_threshold acts in async mode only, and this node runs inference inline "
                "(async_inference is read-only: restart with async_inference:=true)"
            )
        with self.lock:
            if safety is not None:
                safety.last = c.safety.last  # the change limit goes on from the last published action
                c.safety = safety
            if ages is not None:
                c.max_age_ns = ages
            if "on_stale" in changed:
                c.on_stale = new.on_stale
            if "chunk_threshold" in changed:
                assert c.worker is not None  # without a worker, chunk_threshold raised above
                c.worker.threshold = float(new.chunk_threshold)
            if "task" in changed:
                self.set_task(new.task, "parameter")
            if "seed" in changed:
                c.runner.seed = None if new.seed < 0 else int(new.seed)  # applied at the next ~/reset

    # ---- per-tick bookkeeping (called by `emit`) --------------------------------------------------
    @staticmethod
    def observation_stamp(t_ns: int, ages: Mapping[str, int | None] | None) -> int | None:
        """Stamp of the freshest observation in the tick's frame (None: none known, or stopped)."""
        if not ages:
            return None
        known = [a for a in ages.values() if a is not None]
        return t_ns - min(known) if known else None

    def add_latency(self, latency_ns: int) -> float:
        """Observation stamp -> action publish, in ms (recorded for the p50/p99 in /diagnostics)."""
        ms = latency_ns / 1e6
        self.latency_ms.add(ms)
        return ms

    def tick_info(
        self, t_ns: int, result: TickResult, start: float, received_wall_ns: int | None, published_wall_ns: int | None
    ) -> dict:
        """What ~/tick_info says about this tick. The wall-clock stamps (time.time_ns) of the triggering
        observation's arrival and of the action's publish split latency into DDS in / node / DDS out."""
        chunk_task = self.controller.runner.chunk_task if result.plan is not None else None
        return {
            "tick": self.tick_index,
            "t_ns": t_ns,
            "status": result.status,
            "dry": result.dry,
            "depth": result.depth,
            "reason": result.reason,
            "published": published_wall_ns is not None,
            "new_chunk": result.plan is not None,  # this tick's action is the first from a new chunk
            "inference_ms": None if result.inference_ms is None else round(result.inference_ms, 3),
            "tick_ms": round((time.perf_counter() - start) * 1e3, 3),
            "received_wall_ns": received_wall_ns,
            "published_wall_ns": published_wall_ns,
            "chunk_task": chunk_task,
        }

    # ---- diagnostics (side-effect free; `next_window` starts a new rate window) -------------------
    def next_window(self, now_s: float) -> None:
        self.window.restart(now_s, self.controller.counts["ticks"])

    def status(self) -> tuple[int, str]:
        """(level, message) of the node's DiagnosticStatus."""
        c = self.controller
        if not self.running:
            return WARN, "stopped"
        problem = c.backend_problem()
        if problem:  # a remote policy server down: the node holds (or stays silent) until it is back
            return ERROR, problem
        if c.worker is not None and c.worker.failing:  # in the inference thread: until a chunk comes again
            return ERROR, f"policy raised: {c.worker.last_error}"
        if c.counts["error"]:  # inline (kept: the tick it failed published nothing)
            return ERROR, f"policy raised: {c.last_error}"
        if c.counts["ticks"] and c.last_reason and c.counts["ok"] == 0:
            return WARN, c.last_reason
        if c.last_status in ("gated", "held"):  # acting again once the observations are fresh
            return WARN, f"{'holding the last action' if c.last_status == 'held' else 'not acting'}: {c.last_reason}"
        return OK, "ok"

    def diagnostic_values(self, now_ns: int, now_s: float) -> dict[str, str]:
        """/diagnostics key/values at ROS time `now_ns` and monotonic `now_s` (rate over the current window)."""
        c = self.controller
        counts = c.counts
        inf = c.inference_stats.summary()
        lat = self.latency_ms.summary()
        values = {
            "running": str(self.running),
            "rate_hz": _fmt(self.window.rate(now_s, counts["ticks"])),
            "target_rate_hz": self.target_rate,
            "mode": f"{self.mode} ({'async' if c.is_async else 'sync'})",
            "ticks": str(counts["ticks"]),
            "published": str(counts["ok"] + counts["held"]),
            "dropped_ticks": str(sum(counts[k] for k in ("gated", "dry", "error", "dropped"))),
            "queue_dry_ticks": str(counts["dry"]),
            "policy_errors": str(counts["error"] + (c.worker.errors if c.worker else 0)),
            "last_error": c.last_error or "",
            "last_reason": c.last_reason or "",
            "inference_ms_p50": _fmt(inf["p50"]),
            "inference_ms_p99": _fmt(inf["p99"]),
            "latency_ms_p50": _fmt(lat["p50"]),
            "latency_ms_p99": _fmt(lat["p99"]),
            "queue_depth": str(c.worker.queue.depth() if c.worker else ""),
            "queue_discards": str(c.discards),
            "chunking": c.chunking,
            "stale_chunks": str(c.worker.stale_chunks if c.worker else ""),
            "expired_chunks": str(c.worker.expired_chunks if c.worker else ""),
            "backend": c.backend_name,
            "task": self.task,
            "task_source": self.task_source,
        }
        rtc = c.worker.rtc if c.worker is not None else None
        values["rtc_delay_ticks"] = "" if rtc is None else str(rtc.estimate())  # expected delay of the next inference
        values["rtc_last_delay_ticks"] = "" if rtc is None or rtc.last_delay is None else str(rtc.last_delay)
        values.update(c.runner.diagnostics())
        if c.runner.reads_task:  # the prompt the executing chunk was predicted from, as its tokenizer got it
            values["chunk_task"] = c.runner.chunk_task or ""
        for name in self.streams:
            latest = self.resampler.latest_time(name)
            values[f"staleness_ms.{name}"] = "never" if latest is None else _fmt((now_ns - latest) / 1e6)
            values[f"rejected.{name}"] = str(self.rejected[name])
            if name in self.decode_ms:  # image decode (jpeg or raw) next to inference_ms: what a frame costs here
                values[f"decode_ms_p50.{name}"] = _fmt(self.decode_ms[name].summary()["p50"])
        return values


def _fmt(value) -> str:
    return "" if value is None else f"{value:.2f}"
