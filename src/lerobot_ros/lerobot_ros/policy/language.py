"""The task sentence of a language-conditioned policy (SmolVLA, pi0, pi0.5), seen through its own tokenizer step.

LeRobot tokenizes the task inside the policy's pre-processor (`TokenizerProcessorStep`, after the newline step
SmolVLA and pi0 add; pi0.5 first builds a prompt with the discretized state), padding and truncating at
`max_length` tokens. So a policy reads a task exactly when its pre-processor has that step, and the text the
step receives is what the policy was conditioned on. `TaskWatch` observes the step without changing what it
does: it records the text of each tokenization and warns once per task when LeRobot's truncation will cut it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

#: the ways a task reaches policy_node, named in its start-up error (one source for the message and the README)
TASK_SOURCES = (
    "the parameter (-p task:='pick up the cube')",
    "the contract's `task: {default: ...}`",
    "the contract's `task: {topic: ...}`, where the sim bridges publish their task (latched std_msgs/String on "
    "<namespace>/task)",
)


def tokenizer_step(preprocessor):
    """The pipeline's TokenizerProcessorStep, or None (the policy reads no task)."""
    from lerobot.processor import TokenizerProcessorStep

    for step in getattr(preprocessor, "steps", None) or ():
        if isinstance(step, TokenizerProcessorStep):
            return step
    return None


def missing_task_message(policy_type: str) -> str:
    """The start-up error of a VLA given no task at all."""
    return (
        f"this {policy_type} policy is conditioned on a task sentence and none is given; give it with "
        + "; or ".join(TASK_SOURCES)
    )


class TaskWatch:
    """Observes a policy's tokenizer step: the last text it tokenized, and a warning once per task that
    LeRobot's truncation (at `max_length` tokens) will shorten."""

    def __init__(self, step, policy_type: str = "", warn: Callable[[str], None] | None = None):
        self.step = step
        self.policy_type = policy_type
        self.warn = warn or log.warning
        self.max_length = int(step.max_length)
        self.task = ""  # the node's task for the inference under way (the key of the warn-once)
        self.last_text: str | None = None  # what the step tokenized last (the policy's prompt)
        self.tokenizations = 0
        self.warned: set[str] = set()
        self._checked: str | None = None
        original = step._tokenize_text

        def watched(text):
            first = text[0] if isinstance(text, (list, tuple)) and text else text
            if isinstance(first, str):
                self.last_text = first
                self.tokenizations += 1
                if first != self._checked:
                    self._checked = first
                    self._check_length(first)
            return original(text)

        step._tokenize_text = watched

    @classmethod
    def of(cls, preprocessor, policy_type: str = "", warn: Callable[[str], None] | None = None) -> TaskWatch | None:
        step = tokenizer_step(preprocessor)
        return None if step is None else cls(step, policy_type, warn)

    def token_count(self, text: str) -> int:
        """Tokens of `text` before LeRobot's truncation (special tokens included, as the step adds them)."""
        return len(self.step.input_tokenizer(text, truncation=False, padding=False)["input_ids"])

    def _check_length(self, text: str) -> None:
        if not getattr(self.step, "truncation", True) or self.task in self.warned:
            return
        n = self.token_count(text)
        if n <= self.max_length:
            return
        self.warned.add(self.task)
        ids = self.step.input_tokenizer(text, truncation=True, max_length=self.max_length, padding=False)["input_ids"]
        kept = self.step.input_tokenizer.decode(ids, skip_special_tokens=True)
        self.warn(
            f"task {self.task!r} is {n} tokens for this {self.policy_type or 'policy'}'s tokenizer, more than "
            f"its tokenizer_max_length {self.max_length}: LeRobot truncates it, the policy reads {kept!r} "
            "(shorten the task, or train with a larger tokenizer_max_length)"
        )
