"""One interface for every simulator the bridge wraps, so the bridge, the experts and the tests stay env-agnostic.

An adapter is created cheaply (no simulator, no GL context) and builds its simulator on the first
`reset()`, so processes can fork before any GL context exists. `preflight()` checks, without building
the simulator, what would make the first reset fail (unknown task, missing package or assets).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from lerobot_ros.conventions.errors import UserError


class SimStartupError(UserError, RuntimeError):
    """An expected start-up failure (unknown task, missing package, assets or GL); the message says how to fix it."""


class RenderSize(NamedTuple):
    """An image size as the command lines write it (`--render HxW`, height first, like numpy's shape)."""

    height: int
    width: int

    @classmethod
    def parse(cls, text: str, minimum: int = 1) -> RenderSize:
        """`"96x128"` -> RenderSize(height=96, width=128); ValueError with the expected form otherwise."""
        try:
            h, w = (int(v) for v in str(text).lower().split("x"))
        except ValueError:
            h = w = 0
        if h < minimum or w < minimum:
            raise ValueError(f"expected HEIGHTxWIDTH of at least {minimum}x{minimum}, such as 96x96, got {text!r}")
        return cls(h, w)

    def __str__(self) -> str:
        return f"{self.height}x{self.width}"


@dataclass(frozen=True)
class RenderSettings:
    """Offscreen render size, shadows and multisample anti-aliasing; on a CPU (llvmpipe) shadow maps
    dominate render time, and MSAA doubles what is left for mesh-heavy models like the SO-101.

    The defaults are the bridge's parameter defaults (`sim_bridge_node` declares them from here) and
    eval's: no shadows (`shadows:=true` / `--shadows` for images like LeRobot's LIBERO renders).
    """

    width: int = 480
    height: int = 480
    shadows: bool = False
    antialias: bool = True

    def __post_init__(self):
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"render size must be positive, got {self.width}x{self.height}")

    @classmethod
    def of_size(cls, size: tuple[int, int], shadows: bool = False, antialias: bool = True) -> RenderSettings:
        """From a (height, width) size such as `RenderSize.parse("96x128")` (no hand-swapped fields)."""
        size = RenderSize(*size)
        return cls(width=size.width, height=size.height, shadows=shadows, antialias=antialias)

    @property
    def size(self) -> RenderSize:
        return RenderSize(self.height, self.width)


@dataclass(frozen=True)
class BaseOdometry:
    """A mobile base's pose in `odom` (x, y in m, yaw in rad) and its body-frame twist (REP 103: m/s, rad/s)."""

    x: float
    y: float
    yaw: float
    vx: float
    vy: float
    wz: float


@dataclass
class Observation:
    """What the bridge publishes after a reset or a step.

    state: the values published on `joint_states`, in `state_names` order (radians for revolute joints).
    images: camera name -> (H, W, 3) uint8 RGB.
    env_state: the env's full state vector (Meta-World's 39-D obs, block position ...) or None.
    base: a mobile base's odometry (published on `odom`), None for a robot without one.
    """

    state: np.ndarray
    images: dict[str, np.ndarray]
    env_state: np.ndarray | None = None
    base: BaseOdometry | None = None


@dataclass
class StepResult:
    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: dict = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return bool(self.info.get("is_success", False))


class SimEnv(ABC):
    """A simulator seen the way the bridge needs it. Subclasses set the class attributes in __init__."""

    #: short kind, e.g. "metaworld"
    kind: str = ""
    #: control rate: one env step per 1/fps seconds of sim time
    fps: float = 30.0
    #: names of the values on `joint_states`
    state_names: tuple[str, ...] = ()
    #: names of the action components (joint names for `joint_trajectory`, order for `commands`)
    action_names: tuple[str, ...] = ()
    #: may step on past `max_episode_steps` (the limit is the runner's, not the simulator's): needed for
    #: episode_limit:=marked; Meta-World refuses steps past its path length, so it is False there
    steps_past_limit: bool = False
    #: names of the env_state components (empty when the env has none)
    env_state_names: tuple[str, ...] = ()
    #: steps after which an episode is truncated
    max_episode_steps: int = 500
    #: robots within the robot, each on its own topics as its own driver would publish them: part -> the state
    #: names it covers (prefixed `<part>_`; published without the prefix on `<part>/joint_states`, commanded on
    #: `<part>/commands`). The bimanual twin's `left` and `right` arms look like two robot_nodes.
    parts: dict[str, tuple[str, ...]] = {}
    #: a mobile base driven by `drive()` (cmd_vel) whose odometry comes in Observation.base
    has_base: bool = False

    def __init__(self, render: RenderSettings | None = None):
        self.render_settings = render or RenderSettings()

    @property
    def action_dim(self) -> int:
        return len(self.action_names)

    @property
    @abstractmethod
    def task(self) -> str:
        """Natural-language description of the current task."""

    @property
    @abstractmethod
    def cameras(self) -> dict[str, tuple[int, int]]:
        """Camera name -> (height, width) of the published images."""

    def camera_topic(self, camera: str) -> str:
        """The topic prefix of `camera`'s images: its name (a part's camera: `<part>/<name>`, e.g. left/wrist)."""
        for part in self.parts:
            if camera.startswith(f"{part}_"):
                return f"{part}/{camera[len(part) + 1 :]}"
        return camera

    def drive(self, vx: float, vy: float, wz: float) -> str | None:
        """Command the mobile base (body frame, m/s and rad/s); returns why a command was refused, else None."""
        raise NotImplementedError(f"{self.kind} has no mobile base")

    def preflight(self) -> None:  # noqa: B027 - an optional hook
        """Raise SimStartupError when the first reset could not work. Must not create a GL context."""

    def prefetch(self) -> None:  # noqa: B027 - an optional hook
        """Start importing what the first reset will need, in the background, so that the build on the
        first reset does not wait for it (a bridge calls this at start-up). Must not create a GL context."""

    @abstractmethod
    def reset(self, seed: int | None = None, options: dict | None = None) -> Observation:
        """Start a new episode (deterministic for a given seed)."""

    @abstractmethod
    def step(self, action: np.ndarray) -> StepResult:
        """Advance by one control period with `action` (validated and of length action_dim)."""

    def close(self) -> None:  # noqa: B027 - an optional hook
        """Free the simulator and its GL context."""
