"""Run a loaded policy on one frame: the same calls, in the same order, as LeRobot's own loops.

`select_action` is `lerobot.common.control_utils.predict_action` (what lerobot-record uses): numpy frame
-> tensors with a batch dimension -> pre-processor -> `policy.select_action` -> post-processor. It also
captures the chunk the policy predicted (for trajectory output and rviz). `predict_chunk` is what LeRobot's
async policy server does: pre-processor -> `predict_action_chunk` -> post-processor.

One thing `select_action` leaves out: on a tick where the policy only pops the action queue it filled earlier and
reads no input (`pops_without_input`), the queued action is popped and post-processed directly. The frame is not
converted and pre-processed for nothing (two 640x480 images: ~8 ms of a 2-core CPU per tick, and the cache it
evicts slows the publishing after it), nor does `select_action`'s eval() walk every module again (~0.5 ms); the
actions are the same, bit for bit.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from typing import Any

import numpy as np

from lerobot_ros.policy.language import TaskWatch
from lerobot_ros.policy.loading import LoadedPolicy


class PolicyRunner:
    """Thread-safe wrapper of one LeRobot policy + processors; numpy in, numpy out (LeRobot units).

    The `local` ChunkBackend (policy.backend): in this process, so it never has a connection problem."""

    name = "local"
    steps_inline = True
    rtc_in_process = True

    def __init__(
        self,
        loaded: LoadedPolicy,
        robot_type: str = "",
        seed: int | None = None,
        use_amp: bool = False,
        on_warning: Callable[[str], None] | None = None,
    ):
        import torch

        self.loaded = loaded
        self.robot_type = robot_type
        self.seed = seed
        self.use_amp = use_amp
        self.device = torch.device(loaded.device)
        self.input_names = list((loaded.config.input_features or {}).keys())
        self._lock = threading.RLock()
        self._captured = None
        self.pops_without_input = pops_without_input(loaded)
        self.last_chunk: np.ndarray | None = None  # post-processed chunk of the last inference (T, D)
        #: a VLA's tokenizer step, watched: the text each chunk was conditioned on (None: reads no task);
        #: `on_warning` gets its one-time notes (a task the tokenizer truncates)
        self.language = TaskWatch.of(loaded.preprocessor, loaded.type, on_warning)
        self.chunk_task: str | None = None  # what the tokenizer got for the newest chunk (VLAs)
        self.chunks = 0  # chunks predicted so far
        original = loaded.policy.predict_action_chunk
        # the method select_action computes a chunk with: predict_action_chunk for most types, _get_action_chunk
        # for SmolVLA and X-VLA (whose predict_action_chunk calls it too)
        hook = (
            "_get_action_chunk"
            if callable(getattr(loaded.policy, "_get_action_chunk", None))
            else "predict_action_chunk"
        )
        computes = getattr(loaded.policy, hook)

        def capture(*args, **kwargs):  # records the chunk select_action computes internally
            chunk = computes(*args, **kwargs)
            self._captured = chunk
            self._new_chunk()
            return chunk

        setattr(loaded.policy, hook, capture)
        self._predict_chunk = original
        self.reset()

    @property
    def reads_task(self) -> bool:
        """The policy is conditioned on a task sentence (its pre-processor tokenizes one)."""
        return self.language is not None

    def _new_chunk(self) -> None:
        self.chunks += 1
        self.chunk_task = self.language.last_text if self.language is not None else None

    def _set_task(self, task: str) -> None:
        if self.language is not None:
            self.language.task = task

    @property
    def policy(self):
        return self.loaded.policy

    def reset(self) -> None:
        """Clear the policy's queues and processor state (new episode); re-seed if a seed is set."""
        import torch

        with self._lock:
            self.loaded.policy.reset()
            for pipeline in (self.loaded.preprocessor, self.loaded.postprocessor):
                reset = getattr(pipeline, "reset", None)
                if callable(reset):
                    reset()
            if self.seed is not None:
                torch.manual_seed(self.seed)
            self.last_chunk = None
            self.chunk_task = None

    def discard_queue(self) -> None:
        """Drop the actions (and observation history) the policy queued internally, keeping seed and processors:
        its next select_action predicts from the frame it is given (after a gap in the observations)."""
        with self._lock:
            self.loaded.policy.reset()

    def problem(self) -> str | None:
        return None

    def diagnostics(self) -> dict[str, str]:
        return {}

    def close(self) -> None:
        """Nothing to release (the policy lives as long as this object)."""

    def _observation(self, frame: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The policy's inputs from a frame (extra entries ignored). Arrays that torch would share memory with
        (anything but uint8 images, which become new float tensors) are copied, so the frame stays intact."""
        missing = [k for k in self.input_names if k not in frame]
        if missing:
            raise KeyError(f"frame lacks {missing}")
        return {
            k: frame[k] if getattr(frame[k], "dtype", None) == np.uint8 else np.array(frame[k], copy=True)
            for k in self.input_names
        }

    def _context(self, autograd: bool = False):
        """inference_mode, or no_grad where the policy needs autograd inside (RTC guidance takes a gradient)."""
        import torch

        amp = (
            torch.autocast(device_type=self.device.type)
            if self.device.type == "cuda" and self.use_amp
            else nullcontext()
        )
        return (torch.no_grad() if autograd else torch.inference_mode()), amp

    def select_action(self, frame: Mapping[str, np.ndarray], task: str = "") -> tuple[np.ndarray, np.ndarray | None]:
        """(action (D,), new chunk (T, D) or None): one control step, exactly as lerobot-record does it."""
        from lerobot.common.control_utils import predict_action

        with self._lock:
            self._captured = None
            self._set_task(task)
            queue = self._queue_to_pop()
            if queue is not None:  # what select_action would return, without its eval() walk over every module
                inference, amp = self._context()
                with inference, amp:
                    action = self.loaded.postprocessor(queue.popleft())
                return _to_numpy(action).reshape(-1), None
            action = predict_action(
                self._observation(frame),
                self.loaded.policy,
                self.device,
                self.loaded.preprocessor,
                self.loaded.postprocessor,
                self.use_amp,
                task=task,
                robot_type=self.robot_type,
            )
            chunk = None
            if self._captured is not None:
                chunk = self._postprocess_chunk(self._captured)
                self.last_chunk = chunk
                self._captured = None
        return _to_numpy(action).reshape(-1), chunk

    def _queue_to_pop(self):
        """The policy's action queue when this tick's select_action would only pop it (None: it would predict)."""
        if not self.pops_without_input:
            return None
        queue = getattr(self.loaded.policy, "_action_queue", None)
        return queue if isinstance(queue, deque) and len(queue) > 0 else None

    def predict_chunk(self, frame: Mapping[str, np.ndarray], task: str = "") -> np.ndarray:
        """A whole post-processed chunk (T, D) for one frame (LeRobot's async policy-server path)."""
        return self.predict_chunk_rtc(frame, task)[0]

    def predict_chunk_rtc(
        self,
        frame: Mapping[str, np.ndarray],
        task: str = "",
        inference_delay: int | None = None,
        prev_chunk_left_over: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(post-processed chunk (T, D), model-space chunk (T, D)): the RTC arguments, when given, go to
        `predict_action_chunk` as LeRobot's RTC engine passes them (the leftover in model space)."""
        import torch
        from lerobot.policies.utils import prepare_observation_for_inference

        kwargs: dict[str, Any] = {}
        if inference_delay is not None:
            kwargs["inference_delay"] = int(inference_delay)
        if prev_chunk_left_over is not None:
            kwargs["prev_chunk_left_over"] = torch.as_tensor(
                prev_chunk_left_over, dtype=torch.float32, device=self.device
            )
        inference, amp = self._context(autograd=bool(kwargs))
        with self._lock, inference, amp:
            self._set_task(task)
            self._captured = None
            batch = prepare_observation_for_inference(self._observation(frame), self.device, task, self.robot_type)
            batch = self.loaded.preprocessor(batch)
            raw = self._predict_chunk(batch, **kwargs)
            if self._captured is None:  # the hook is predict_action_chunk itself, not called here
                self._new_chunk()
            self._captured = None
            chunk = self._postprocess_chunk(raw)
            self.last_chunk = chunk
        raw = _to_numpy(raw[0] if raw.ndim == 3 else raw)
        return chunk, raw

    def _postprocess_chunk(self, chunk) -> np.ndarray:
        """Post-process each action of a (B, T, D) chunk like LeRobot's policy server, stack to (T, D)."""
        import torch

        if chunk.ndim == 2:
            chunk = chunk.unsqueeze(0)
        with torch.inference_mode():
            rows = [_to_numpy(self.loaded.postprocessor(chunk[:, i, :])).reshape(-1) for i in range(chunk.shape[1])]
        return np.stack(rows)


def pops_without_input(loaded: LoadedPolicy) -> bool:
    """True for a policy whose `select_action` pops an action queued from an earlier chunk without reading the
    observation while its queue holds one (ACT without temporal ensembling; a Diffusion policy keeps an observation
    history, a VLA its observation queue, ensembling ACT predicts every tick), and whose pre-processor keeps no state
    between calls (no step with its own `reset`): then skipping the pre-processor on those ticks changes nothing."""
    from lerobot.processor.pipeline import ProcessorStep

    if loaded.type != "act" or getattr(loaded.config, "temporal_ensemble_coeff", None) is not None:
        return False
    steps = getattr(loaded.preprocessor, "steps", None)
    if steps is None:
        return False
    return all(type(step).reset is ProcessorStep.reset for step in steps)


def _to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().to("cpu")
        if value.dtype.is_floating_point and value.dtype != __import__("torch").float32:
            value = value.float()
        return value.numpy()
    return np.asarray(value)
