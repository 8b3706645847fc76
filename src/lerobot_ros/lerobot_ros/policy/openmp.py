"""Keep idle OpenMP workers from holding a core after each inference.

PyTorch's CPU kernels run on libgomp, whose idle workers spin for GOMP_SPINCOUNT iterations (300 000 by
default, several milliseconds) after every parallel region before they sleep. A policy node publishes its
action right after the model ran: on a small robot computer the spinning worker then takes the core that
DDS and the consumer of the action need (bench/policy_node.py: action publish -> received 1.3-1.6 ms
p50 and 5.5-5.7 ms p99 with the default, 0.8-1.0 ms and 2-2.6 ms with 10 000; inference within noise).
1 000 (tens of microseconds) keeps the workers spinning between the operators of one forward pass but not
through the Python between a processor's steps, where they took the second core of a 2-core machine from
everything else: a tick that pops the action queue (LeRobot's pre/post-processors, select_action) went from
7.0-7.2 ms to 3.0-3.2 ms p50, observation -> action from 8.6-8.9 to 4.6-5.0 ms; ticks that run the model unchanged.
"""

from __future__ import annotations

import os
import sys

SPIN_COUNT = "1000"


def limit_openmp_spin(env=None) -> bool:
    """Set GOMP_SPINCOUNT unless the user did; True when it takes effect (libgomp reads it once, when
    torch loads, so it must run before the first `import torch` in this process)."""
    env = os.environ if env is None else env
    if "GOMP_SPINCOUNT" in env or "OMP_WAIT_POLICY" in env:
        return False
    env["GOMP_SPINCOUNT"] = SPIN_COUNT
    return "torch" not in sys.modules
