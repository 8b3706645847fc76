"""Robot-side processes without torch: LeRobot's robot, motor and camera modules import torch (for type aliases and
device helpers they never call on the robot path), which costs a robot_node about 450 MB and a second of start-up
on a small board. `keep_torch_out()` puts a stand-in in `sys.modules["torch"]` first: it carries the few names
LeRobot's modules read at import (`torch.Tensor`, `torch.device`, `torch.dtype` as empty classes, for type aliases
and annotations) and fails with a clear message on anything else, so a code path that really needs torch says so
instead of misbehaving. `LEROBOT_ROS_TORCH=1` in the environment loads the real torch (a robot class of your own
that computes with it); a process that already imported torch keeps it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types

ENV = "LEROBOT_ROS_TORCH"


def _message(what: str) -> str:
    return (
        f"{what}: this robot-side process runs without torch (LeRobot imports it, the robot path does not use it; "
        f"about 450 MB saved); set {ENV}=1 to load the real torch"
    )


class TorchStandIn(types.ModuleType):
    """`torch` in a robot-side process: names for LeRobot's import-time annotations, ImportError for the rest."""

    Tensor = type("Tensor", (), {"__module__": "torch"})
    device = type("device", (), {"__module__": "torch"})
    dtype = type("dtype", (), {"__module__": "torch"})

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)  # protocol probes (__path__, __file__ ...): absent, as on a plain module
        raise ImportError(_message(f"torch.{name}"))


class _NoTorchSubmodules(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith("torch."):
            raise ImportError(_message(f"import {fullname}"))
        return None


def keep_torch_out() -> bool:
    """Install the stand-in (True), unless torch is already imported or LEROBOT_ROS_TORCH=1 asks for it (False)."""
    if "torch" in sys.modules or os.environ.get(ENV, "") == "1":
        return False
    stand_in = TorchStandIn("torch")
    stand_in.__path__ = []  # a package: `import torch.nn` reaches _NoTorchSubmodules and its message
    # importlib.util.find_spec("torch") (LeRobot's is_package_available) needs a spec, not None
    stand_in.__spec__ = importlib.machinery.ModuleSpec("torch", None, is_package=True)
    sys.modules["torch"] = stand_in
    sys.meta_path.insert(0, _NoTorchSubmodules())
    return True


def torch_is_real() -> bool:
    return "torch" in sys.modules and not isinstance(sys.modules["torch"], TorchStandIn)


__all__ = ["ENV", "TorchStandIn", "keep_torch_out", "torch_is_real"]
