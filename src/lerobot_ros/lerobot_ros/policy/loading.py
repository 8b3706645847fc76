"""Load a LeRobot policy and its pre/post processors from a pretrained folder (or a hub id), on a device.

Uses LeRobot's own factory (`get_policy_class(type).from_pretrained`, `make_pre_post_processors`) so a
folder written by `lerobot-train` or `save_pretrained` behaves exactly as under `lerobot-record`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lerobot_ros.conventions.errors import UserError


class PolicyLoadError(UserError, RuntimeError):
    """A pretrained policy could not be loaded; the message says why and what to do."""


DEVICES = ("auto", "cpu", "cuda", "mps")


def resolve_device(name: str) -> str:
    """'auto' -> cuda, then mps, then cpu; an explicit device must be available."""
    import torch

    name = (name or "auto").lower()
    base = name.split(":")[0]
    if base not in DEVICES:
        raise PolicyLoadError(f"unknown device {name!r}; use one of {list(DEVICES)}")
    if base == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if base == "cuda" and not torch.cuda.is_available():
        raise PolicyLoadError(f"device {name!r} requested but CUDA is not available; use policy.device:=cpu or auto")
    if base == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise PolicyLoadError(f"device {name!r} requested but MPS is not available; use policy.device:=cpu or auto")
    return name


@dataclass
class LoadedPolicy:
    """A policy ready for inference with the processors it was trained with."""

    policy: Any
    preprocessor: Any
    postprocessor: Any
    config: Any
    device: str
    path: str

    @property
    def type(self) -> str:
        return self.config.type

    @property
    def chunk_length(self) -> int:
        """Actions one inference yields (chunk_size / horizon / n_action_steps, whichever the type has)."""
        for attr in ("chunk_size", "horizon", "n_action_steps"):
            value = getattr(self.config, attr, None)
            if isinstance(value, int) and value > 0:
                return value
        return 1

    @property
    def n_action_steps(self) -> int:
        value = getattr(self.config, "n_action_steps", None)
        return value if isinstance(value, int) and value > 0 else self.chunk_length


#: LeRobot's extra per policy type where the type's name is not the extra's (pyproject of lerobot 0.6.1)
_EXTRAS = {
    "pi0": "pi",
    "pi05": "pi",
    "pi0_fast": "pi",
    "wall_x": "wallx",
    "multi_task_dit": "multi-task-dit",
    "vla_jepa": "vla-jepa",
    "lingbot_va": "lingbot-va",
}


def missing_extra_message(policy_type: str, exc: ImportError) -> str:
    """One line for a policy whose optional dependencies are not installed, with the command that installs them
    (the extra LeRobot's own message names, else the one of the policy type), pinned to the installed LeRobot."""
    import re
    from importlib.metadata import PackageNotFoundError, version

    text = str(exc).split("\n")[0]
    named = re.search(r"lerobot\[([\w-]+)\]", text)
    extra = named.group(1) if named else _EXTRAS.get(policy_type, policy_type)
    missing = getattr(exc, "name", None) or (re.match(r"'([^']+)' is required", text) or [None, None])[1]
    try:
        pin = f"=={version('lerobot')}"
    except PackageNotFoundError:
        pin = ""
    what = f" ({missing!r} is not installed)" if missing else f" ({text})"
    return f"the {policy_type} policy needs LeRobot's {extra!r} extra{what}: pip install 'lerobot[{extra}]{pin}'"


def read_policy_config(path: str | Path) -> dict:
    """The config.json of a local pretrained folder as a dict, without LeRobot or torch: a check the CLI runs
    before it starts anything. PolicyLoadError (one line, naming the file) when missing or malformed."""
    import json

    config = Path(path).expanduser() / "config.json"
    if not config.is_file():  # also when the folder is missing
        raise PolicyLoadError(f"{config.parent} has no config.json; pass a LeRobot pretrained_model folder")
    try:
        data = json.loads(config.read_text())
    except json.JSONDecodeError as exc:
        raise PolicyLoadError(
            f"{config} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
            "re-export the policy with save_pretrained"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyLoadError(f"cannot read {config}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise PolicyLoadError(
            f'{config} is not a LeRobot policy config (no "type" key); pass a pretrained_model folder'
        )
    return data


def _pretrained_config(path: str):
    """(LeRobot's PreTrainedConfig of `path`, the path to load from): a local-looking path must be a folder
    with a readable config.json (one line naming what is wrong), anything else is a hub id."""
    import lerobot.policies  # noqa: F401 - registers the policy config types (act, diffusion, smolvla ...)
    from lerobot.configs.policies import PreTrainedConfig

    local = Path(path).expanduser()
    if local.is_absolute() or str(path).startswith((".", "~")) or local.exists():
        if not local.is_dir():
            raise PolicyLoadError(
                f"pretrained policy folder {str(local)!r} does not exist; pass policy.path:=<folder with config.json>"
            )
        read_policy_config(local)  # one line when its config.json is missing or malformed
        path = str(local)
    try:
        return PreTrainedConfig.from_pretrained(path), path
    except Exception as exc:  # noqa: BLE001 - hub errors, parse errors: one line for the user
        raise PolicyLoadError(f"cannot read the policy config at {path!r}: {type(exc).__name__}: {exc}") from None


def load_policy(path: str, device: str = "auto") -> LoadedPolicy:
    """Load policy + processors from `path` (a folder with config.json, or a hub id where a network exists)."""
    from lerobot.policies.factory import get_policy_class, make_pre_post_processors

    device = resolve_device(device)
    config, path = _pretrained_config(path)
    config.device = device
    try:
        policy = get_policy_class(config.type).from_pretrained(path, config=config)
    except ImportError as exc:  # an optional dependency of this policy type (LeRobot names the extra)
        raise PolicyLoadError(missing_extra_message(config.type, exc)) from None
    except Exception as exc:  # noqa: BLE001
        raise PolicyLoadError(
            f"cannot load the {config.type} policy at {path!r}: {type(exc).__name__}: {exc}"
        ) from None
    policy.to(device)
    policy.eval()
    try:
        try:  # run the pre-processor on the chosen device (as lerobot-record's policy.device override does)
            pre, post = make_pre_post_processors(
                config, pretrained_path=path, preprocessor_overrides={"device_processor": {"device": device}}
            )
        except KeyError:  # a pipeline without a device step: nothing to override
            pre, post = make_pre_post_processors(config, pretrained_path=path)
    except ImportError as exc:
        raise PolicyLoadError(missing_extra_message(config.type, exc)) from None
    except Exception as exc:  # noqa: BLE001
        raise PolicyLoadError(f"cannot load the pre/post processors at {path!r}: {type(exc).__name__}: {exc}") from None
    return LoadedPolicy(policy=policy, preprocessor=pre, postprocessor=post, config=config, device=device, path=path)


def load_policy_config(path: str, device: str = "cpu") -> LoadedPolicy:
    """The policy's config only, no weights and no processors: what a client of a remote policy server needs
    here (features, chunk length, type) to check the policy against a contract. `device` is recorded as given
    (it names the remote machine's device)."""
    config, path = _pretrained_config(path)
    return LoadedPolicy(policy=None, preprocessor=None, postprocessor=None, config=config, device=device, path=path)
