"""pi0 / pi0.5 offline up to their processors: LeRobot's own pre-processor factory builds with PaliGemma's tokenizer id
served from a local hub cache (lerobot_ros.testing.pi), and the task reaches its tokenizer step as the node sees it
(pi0: the task plus newline; pi0.5: its prompt with the discretized state), truncated as LeRobot truncates.
The models themselves (PaliGemma gemma_2b + expert gemma_300m in bfloat16, the smallest LeRobot's model runs: ~3.5 B
random parameters, ~14 GB while built) are measured by bench/vla_footprint.py, too heavy for the suite. Each check runs in a child process: the hub
cache path is read when huggingface_hub is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("transformers")

SCRIPT = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from pathlib import Path
from lerobot_ros.testing.pi import cache_paligemma_tokenizer, pi_config_kwargs, pi_stats
import os
cache_paligemma_tokenizer(Path(os.environ["HF_HUB_CACHE"]))
import torch
from lerobot.policies.factory import make_policy_config, make_pre_post_processors
from lerobot_ros.testing.policies import _features
from lerobot_ros.policy.language import TaskWatch
inputs, outputs = _features(6, 6, {{"front": (48, 64)}})
cfg = make_policy_config({kind!r}, input_features=inputs, output_features=outputs, device="cpu", **pi_config_kwargs(tokenizer_max_length={max_length}))
pre, post = make_pre_post_processors(cfg, dataset_stats=pi_stats(6, 6, {{"front": (48, 64)}}))
warnings_seen = []
watch = TaskWatch.of(pre, cfg.type, warnings_seen.append)
out = {{}}
for task in ({short!r}, {long!r}):
    watch.task = task
    batch = {{"observation.state": torch.zeros(1, 6), "observation.images.front": torch.zeros(1, 3, 48, 64), "task": task}}
    tokens = pre(batch)["observation.language.tokens"][0].tolist()
    out[task] = {{"prompt": watch.last_text, "tokens": len(tokens)}}
out["warnings"] = warnings_seen
out["max_length"] = watch.max_length
print(json.dumps(out))
"""


SHORT = "push the puck to the goal"
LONG = " then ".join(["pick up the cube and place it in the bowl", "open the top drawer of the cabinet"] * 3)


@pytest.mark.parametrize("kind", ["pi0", "pi05"])
def test_pi_processors_build_offline_and_tokenize_the_task(tmp_path, kind):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub"), "PYTHONWARNINGS": "ignore"}
    max_length = 16 if kind == "pi0" else 64  # pi0.5's prompt carries the state too
    script = SCRIPT.format(kind=kind, max_length=max_length, short=SHORT, long=LONG)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    short, long = SHORT, LONG
    assert out["max_length"] == max_length
    assert out[short]["tokens"] == out[long]["tokens"] == max_length  # padded / truncated to the limit
    if kind == "pi0":
        assert out[short]["prompt"] == short + "\n"  # Pi0NewLineProcessor, then PaliGemma's tokenizer
    else:  # pi0.5 builds a prompt with the discretized state (lower-cased task, underscores as spaces)
        assert out[short]["prompt"].startswith(f"Task: {short}, State: ") and out[short]["prompt"].endswith("Action: ")
    assert len(out["warnings"]) == 1 and out["warnings"][0].startswith(f"task {long!r} is ")
