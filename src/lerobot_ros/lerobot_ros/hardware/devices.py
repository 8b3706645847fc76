"""Build LeRobot follower robots and leader-arm teleoperators from node parameters.

Calibration comes from the usual LeRobot location (`~/.cache/huggingface/lerobot/calibration/...`,
keyed by the device id) or from an explicit file; without one the node refuses to start rather than
run LeRobot's interactive calibration.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from lerobot_ros.conventions.errors import UserError

ROBOT_TYPES = (
    "so100_follower",
    "so101_follower",
    "koch_follower",
)  # built here; other single-bus arms via the registry
TELEOP_TYPES = ("so100_leader", "so101_leader", "koch_leader")
KEY_TELEOPS = ("keyboard", "gamepad", "keyboard_ee", "phone")


class DeviceConfigError(UserError, ValueError):
    """A parameter combination that cannot work; the message says what to change."""


def _calibration_location(calibration_file: str, calibration_dir: str, device_id: str) -> tuple[Path | None, str]:
    if calibration_file:
        path = Path(calibration_file).expanduser()
        if not path.is_file():  # checked before LeRobot (and torch) is imported: fails fast
            raise DeviceConfigError(
                f"no calibration file at {path}: calibrate the arm with `lerobot-calibrate`, or point "
                "calibration_file at its JSON (`lerobot-ros virtual-arm` writes one for emulated arms)"
            )
        return path.parent, path.stem
    return (Path(calibration_dir).expanduser() if calibration_dir else None), device_id


def _check_calibration(device, kind: str, type_name: str, port: str) -> None:
    if not Path(device.calibration_fpath).is_file():
        raise DeviceConfigError(
            f"no calibration file at {device.calibration_fpath}: calibrate the arm with `lerobot-calibrate "
            f"--{kind}.type={type_name} --{kind}.port={port} --{kind}.id={device.id}`, or pass robot.calibration_file:=PATH "
            "(`lerobot-ros virtual-arm` writes one for emulated arms)"
        )


def unreadable_calibration(path, exc: BaseException) -> DeviceConfigError:
    """The one line for a calibration JSON that exists but cannot be loaded (draccus and json raise their own types)."""
    why = " ".join(str(exc).split())[:200]
    return DeviceConfigError(
        f"calibration file {path} cannot be read ({type(exc).__name__}: {why}); fix it, or "
        "calibrate again with `lerobot-calibrate`"
    )


@contextmanager
def _reading_calibration(cal_dir: Path | None, dev_id: str):
    """LeRobot's robot / teleop constructors load the calibration JSON (draccus): a broken one is one line here."""
    try:
        yield
    except DeviceConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - draccus and json raise their own types
        from lerobot.utils.constants import HF_LEROBOT_CALIBRATION

        path = Path(cal_dir) / f"{dev_id}.json" if cal_dir is not None else None
        if path is None or not path.is_file():
            found = list(Path(HF_LEROBOT_CALIBRATION).glob(f"*/*/{dev_id}.json")) if cal_dir is None else []
            path = found[0] if len(found) == 1 else None
        if path is None:
            raise
        raise unreadable_calibration(path, exc) from None


def make_follower(
    robot_type: str,
    port: str,
    robot_id: str = "follower",
    calibration_file: str = "",
    calibration_dir: str = "",
    max_relative_target: float | None = None,
    use_degrees: bool = True,
    disable_torque_on_disconnect: bool = True,
):
    """A LeRobot follower robot (not connected yet) whose calibration file exists."""
    if not port:
        raise DeviceConfigError("parameter 'port' is empty: set it to the arm's serial port (e.g. /dev/ttyACM0)")
    cal_dir, dev_id = _calibration_location(calibration_file, calibration_dir, robot_id)
    common = dict(
        port=port,
        id=dev_id,
        calibration_dir=cal_dir,
        max_relative_target=max_relative_target,
        use_degrees=use_degrees,
        disable_torque_on_disconnect=disable_torque_on_disconnect,
    )
    with _reading_calibration(cal_dir, dev_id):
        if robot_type == "koch_follower":
            from lerobot.robots.koch_follower import KochFollower, KochFollowerConfig

            robot = KochFollower(KochFollowerConfig(**common))
        elif robot_type in ROBOT_TYPES:  # SO-100 and SO-101 share one LeRobot class
            from lerobot.robots.so_follower import SOFollower, SOFollowerRobotConfig

            robot = SOFollower(SOFollowerRobotConfig(**common))
        else:
            robot = _registered_device("robots", robot_type, common, ROBOT_TYPES)
    _check_calibration(robot, "robot", robot_type, port)
    return robot


def make_leader(
    teleop_type: str, port: str, teleop_id: str = "leader", calibration_file: str = "", calibration_dir: str = ""
):
    """A LeRobot leader-arm teleoperator (not connected yet) whose calibration file exists."""
    if teleop_type in KEY_TELEOPS:
        raise DeviceConfigError(
            f"teleop_type {teleop_type!r} is not supported (keyboard/gamepad teleoperators emit key or stick "
            f"events, not joint positions); use a leader arm: {', '.join(TELEOP_TYPES)}"
        )
    if not port:
        raise DeviceConfigError("parameter 'port' is empty: set it to the leader arm's serial port")
    cal_dir, dev_id = _calibration_location(calibration_file, calibration_dir, teleop_id)
    with _reading_calibration(cal_dir, dev_id):
        if teleop_type == "koch_leader":
            from lerobot.teleoperators.koch_leader import KochLeader, KochLeaderConfig

            teleop = KochLeader(KochLeaderConfig(port=port, id=dev_id, calibration_dir=cal_dir))
        elif teleop_type in TELEOP_TYPES:
            from lerobot.teleoperators.so_leader import SOLeader, SOLeaderTeleopConfig

            teleop = SOLeader(SOLeaderTeleopConfig(port=port, id=dev_id, calibration_dir=cal_dir))
        else:
            teleop = _registered_device(
                "teleoperators", teleop_type, dict(port=port, id=dev_id, calibration_dir=cal_dir), TELEOP_TYPES
            )
    _check_calibration(teleop, "teleop", teleop_type, port)
    return teleop


def _registered_device(kind: str, type_name: str, kwargs: dict, known: tuple[str, ...]):
    """Any other LeRobot robot/teleoperator registered under `type_name`, if it drives one motor bus."""
    import dataclasses
    import importlib

    try:
        importlib.import_module(f"lerobot.{kind}.{type_name}")
    except ImportError:
        raise DeviceConfigError(
            f"{'robot' if kind == 'robots' else 'teleop'}_type {type_name!r} is not supported: no LeRobot module "
            f"lerobot.{kind}.{type_name}; use one of {', '.join(known)} or another single-bus LeRobot arm"
        ) from None
    if kind == "robots":
        from lerobot.robots import RobotConfig as Base
        from lerobot.robots import make_robot_from_config as make
    else:
        from lerobot.teleoperators import TeleoperatorConfig as Base
        from lerobot.teleoperators import make_teleoperator_from_config as make
    try:
        config_cls = Base.get_choice_class(type_name)
    except Exception:  # noqa: BLE001 - draccus raises its own error types
        raise DeviceConfigError(
            f"LeRobot has no {kind[:-1]} type {type_name!r}; use one of {', '.join(known)}"
        ) from None
    fields = {f.name for f in dataclasses.fields(config_cls)}
    device = make(config_cls(**{k: v for k, v in kwargs.items() if k in fields}))
    if not hasattr(getattr(device, "bus", None), "motors"):
        raise DeviceConfigError(
            f"{type_name!r} has no single motor bus; the hardware nodes drive arms read as joint positions on one bus"
        )
    return device
