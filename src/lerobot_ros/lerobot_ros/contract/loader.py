"""Read a contract YAML file (or a shipped one by short name) and validate it into typed objects.

Every error names the offending key (e.g. `features.action.alignment.policy`) and what is allowed.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import yaml

from lerobot_ros.contract import messages as M
from lerobot_ros.contract import transforms as T
from lerobot_ros.contract.errors import ContractError
from lerobot_ros.contract.model import (
    ALIGNMENT_POLICIES,
    TIMELINES,
    Alignment,
    Contract,
    EpisodeBoundary,
    Feature,
    TaskSource,
)
from lerobot_ros.conventions.qos import PROFILE_NAMES

TOP_KEYS = {"version", "robot_type", "fps", "description", "features", "task", "episode_boundary"}
FEATURE_KEYS = {
    "topic",
    "type",
    "qos",
    "timeline",
    "alignment",
    "names",
    "joints",
    "field",
    "slice",
    "indices",
    "transforms",
    "shape",
}
RESERVED = {"timestamp", "frame_index", "episode_index", "index", "task_index", "task"}
_NAME = re.compile(r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$")
_QOS = PROFILE_NAMES  # the names lerobot_ros.ros.qos.qos_by_name takes (ROS-free here)


def contract_dirs() -> list[Path]:
    """Where short names are looked up: the checkout's config/contracts, then installed share/ folders."""
    here = Path(__file__).resolve()
    dirs = [here.parents[4] / "config" / "contracts"]  # <repo>/src/lerobot_ros/lerobot_ros/contract
    prefixes = [sys.prefix, *os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)]
    dirs += [Path(p) / "share" / "lerobot_ros" / "config" / "contracts" for p in prefixes if p]
    return dirs


def shipped_contracts() -> list[str]:
    names: set[str] = set()
    for d in contract_dirs():
        if d.is_dir():
            names.update(p.stem for p in d.glob("*.yaml"))
    return sorted(names)


def resolve(path_or_name: str | os.PathLike) -> Path:
    """A contract file from a path or a short name such as `so101`."""
    path = Path(path_or_name).expanduser()
    if path.is_file():
        return path
    name = str(path_or_name)
    if os.sep not in name and not name.endswith((".yaml", ".yml")):
        for d in contract_dirs():
            candidate = d / f"{name}.yaml"
            if candidate.is_file():
                return candidate
        raise ContractError(
            f"no contract named {name!r}; shipped contracts: {', '.join(shipped_contracts()) or 'none found'}; "
            "or pass the path of a YAML file"
        )
    raise ContractError(f"contract file {name} does not exist")


def load_contract(path_or_name: str | os.PathLike) -> Contract:
    """Load and validate a contract from a YAML file or a shipped short name (so101, koch, metaworld ...)."""
    path = resolve(path_or_name)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ContractError(f"not valid YAML: {exc}".replace("\n", " "), source=str(path)) from None
    try:
        contract = parse_contract(data)
    except ContractError as exc:
        raise ContractError(exc.message, exc.key, source=str(path)) from None
    contract.source = str(path)
    return contract


def _req(mapping: dict, key: str, where: str):
    if key not in mapping:
        raise ContractError(f"missing required key {key!r}", where)
    return mapping[key]


def _str(value, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ContractError(f"expected a non-empty string, got {value!r}", key)
    return value


def _unknown(mapping: dict, allowed: set[str], key: str) -> None:
    extra = sorted(set(mapping) - allowed)
    if extra:
        raise ContractError(f"unknown key(s) {extra}; allowed: {sorted(allowed)}", key)


def parse_contract(data) -> Contract:
    """Validate a contract mapping (as read from YAML) into a Contract."""
    if not isinstance(data, dict):
        raise ContractError(f"a contract is a mapping with keys robot_type, fps, features; got {type(data).__name__}")
    _unknown(data, TOP_KEYS, "(top level)")
    version = data.get("version", 1)
    if version != 1:
        raise ContractError(f"unsupported contract version {version!r}; this lerobot_ros reads version 1", "version")
    robot_type = _str(_req(data, "robot_type", "(top level)"), "robot_type")
    fps = _req(data, "fps", "(top level)")
    if isinstance(fps, bool) or not isinstance(fps, int) or fps <= 0:
        raise ContractError(f"expected a positive integer (LeRobot datasets need integer fps), got {fps!r}", "fps")
    features_in = _req(data, "features", "(top level)")
    if not isinstance(features_in, dict) or not features_in:
        raise ContractError("expected a mapping of LeRobot feature name -> topic settings", "features")
    features: dict[str, Feature] = {}
    for name, spec in features_in.items():
        features[name] = parse_feature(name, spec, fps)
    if "action" not in features:
        raise ContractError("a contract needs an 'action' feature", "features")
    ordered = {"action": features.pop("action"), **features}  # lerobot-record order: action, then observations
    task = parse_task(data.get("task"))
    boundary = data.get("episode_boundary")
    if boundary is not None:
        if not isinstance(boundary, dict):
            raise ContractError("expected {topic: ..., type: ...}", "episode_boundary")
        _unknown(boundary, {"topic", "type"}, "episode_boundary")
        btype = M.normalize_type(_str(boundary.get("type", M.EPISODE_STATUS), "episode_boundary.type"))
        if btype != M.EPISODE_STATUS:
            raise ContractError(
                f"only {M.EPISODE_STATUS} marks episode boundaries, got {btype!r}", "episode_boundary.type"
            )
        boundary = EpisodeBoundary(_topic(_req(boundary, "topic", "episode_boundary"), "episode_boundary.topic"), btype)
    return Contract(
        robot_type=robot_type,
        fps=fps,
        features=ordered,
        task=task,
        episode_boundary=boundary,
        description=str(data.get("description", "")),
        raw=data,
    )


def _topic(value, key: str) -> str:
    topic = _str(value, key)
    if not topic.startswith("/") or " " in topic:
        raise ContractError(f"expected an absolute topic name such as /follower/joint_states, got {topic!r}", key)
    return topic


def parse_task(spec) -> TaskSource:
    if spec is None:
        return TaskSource()
    if isinstance(spec, str):
        return TaskSource(default=spec)
    if not isinstance(spec, dict):
        raise ContractError("expected a task string or {topic, default, metadata_key}", "task")
    _unknown(spec, {"topic", "type", "default", "metadata_key"}, "task")
    topic = _topic(spec["topic"], "task.topic") if spec.get("topic") is not None else None
    mtype = M.normalize_type(_str(spec.get("type", M.STRING), "task.type"))
    if mtype not in (M.STRING, M.EPISODE_STATUS):
        raise ContractError(f"a task topic carries {M.STRING} or {M.EPISODE_STATUS}, got {mtype!r}", "task.type")
    default = spec.get("default")
    if default is not None:
        default = _str(default, "task.default")
    return TaskSource(topic, mtype, _str(spec.get("metadata_key", "task"), "task.metadata_key"), default)


def _alignment(spec, default: str, is_image: bool, key: str) -> Alignment:
    if spec is None:
        spec = {"policy": default}
    if isinstance(spec, str):
        spec = {"policy": spec}
    if not isinstance(spec, dict):
        raise ContractError("expected a policy name or {policy, tolerance_ms}", key)
    _unknown(spec, {"policy", "tolerance_ms"}, key)
    policy = spec.get("policy", default)
    if policy not in ALIGNMENT_POLICIES:
        raise ContractError(
            f"unknown alignment policy {policy!r}; use one of {list(ALIGNMENT_POLICIES)}", f"{key}.policy"
        )
    if policy == "interpolate" and is_image:
        raise ContractError("images are never interpolated; use nearest, asof or hold", f"{key}.policy")
    tol = spec.get("tolerance_ms")
    if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or tol <= 0):
        raise ContractError(f"expected a positive number of milliseconds, got {tol!r}", f"{key}.tolerance_ms")
    if policy == "asof" and tol is None:
        raise ContractError("asof needs tolerance_ms (the oldest a value may be)", f"{key}.tolerance_ms")
    return Alignment(policy, None if tol is None else int(round(tol * 1e6)))


def _int_list(value, key: str) -> list[int]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        raise ContractError(f"expected a non-empty list of non-negative integers, got {value!r}", key)
    return value


def _str_list(value, key: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ContractError(f"expected a non-empty list of strings, got {value!r}", key)
    if len(set(value)) != len(value):
        raise ContractError(f"names must be unique, got {value!r}", key)
    return value


def parse_feature(name, spec, fps: int) -> Feature:
    key = f"features.{name}"
    if not isinstance(name, str) or not _NAME.match(name) or name in RESERVED:
        raise ContractError(
            f"invalid feature name {name!r}: use LeRobot names such as action, observation.state, "
            "observation.images.<camera> (letters, digits, _ and dots; not a reserved column)",
            key,
        )
    if not isinstance(spec, dict):
        raise ContractError("expected a mapping with at least topic and type", key)
    _unknown(spec, FEATURE_KEYS, key)
    topic = _topic(_req(spec, "topic", key), f"{key}.topic")
    msg_type = M.normalize_type(_str(_req(spec, "type", key), f"{key}.type"))
    if msg_type not in M.FEATURE_TYPES:
        raise ContractError(
            f"unsupported message type {msg_type!r}; use one of {sorted(M.FEATURE_TYPES)}", f"{key}.type"
        )
    kind, has_header = M.FEATURE_TYPES[msg_type]
    is_image = kind == "image"
    if is_image and not (name == "observation.image" or name.startswith("observation.images.")):
        raise ContractError("image features are named observation.image or observation.images.<camera>", key)
    if not is_image and (name == "observation.image" or name.startswith("observation.images.")):
        raise ContractError(f"{name} is an image feature name but {msg_type} is not an image type", f"{key}.type")
    qos = spec.get("qos", "reliable" if name == "action" else "sensor")
    if qos not in _QOS:
        raise ContractError(f"unknown QoS profile {qos!r}; use one of {list(_QOS)}", f"{key}.qos")
    timeline = spec.get("timeline", "header" if has_header else "receive")
    if timeline not in TIMELINES:
        raise ContractError(f"expected one of {list(TIMELINES)}, got {timeline!r}", f"{key}.timeline")
    if timeline == "header" and not has_header:
        raise ContractError(f"{msg_type} has no header stamp; use timeline: receive", f"{key}.timeline")
    default_policy = "nearest" if is_image else ("hold" if name == "action" or kind == "flag" else "interpolate")
    alignment = _alignment(spec.get("alignment"), default_policy, is_image, f"{key}.alignment")
    feature = Feature(
        name=name, topic=topic, msg_type=msg_type, kind=kind, qos=qos, timeline=timeline, alignment=alignment, fps=fps
    )
    if is_image:
        for bad in ("names", "joints", "field", "slice", "indices"):
            if bad in spec:
                raise ContractError(f"{bad!r} applies to vector features, not images", f"{key}.{bad}")
        shape = spec.get("shape")
        if (
            not isinstance(shape, list)
            or len(shape) != 3
            or shape[2] != 3
            or not all(isinstance(v, int) and v > 0 for v in shape)
        ):
            raise ContractError(f"expected the dataset image shape [height, width, 3], got {shape!r}", f"{key}.shape")
        feature.shape = tuple(shape)
        feature.transforms = [
            T.parse_image(t, f"{key}.transforms[{i}]")
            for i, t in enumerate(_list(spec.get("transforms"), f"{key}.transforms"))
        ]
        return feature
    if kind == "flag":
        return _flag(feature, spec, key)
    if "shape" in spec:
        raise ContractError("vector features take their shape from `names`", f"{key}.shape")
    _vector_selector(feature, spec, key)
    feature.transforms = [
        T.parse_numeric(t, feature.names, f"{key}.transforms[{i}]")
        for i, t in enumerate(_list(spec.get("transforms"), f"{key}.transforms"))
    ]
    return feature


def _list(value, key: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ContractError(f"expected a list, got {value!r}", key)
    return value


def _flag(feature: Feature, spec: dict, key: str) -> Feature:
    """A std_msgs/Bool feature: one bool per frame (dataset dtype bool, shape (1,)), held between messages."""
    for bad in ("names", "joints", "field", "slice", "indices", "shape", "transforms"):
        if bad in spec:
            raise ContractError(
                f"{bad!r} does not apply to a std_msgs/Bool feature (one bool per frame)", f"{key}.{bad}"
            )
    if feature.alignment.policy == "interpolate":
        raise ContractError("a bool cannot be interpolated; use hold, asof or nearest", f"{key}.alignment")
    feature.names = [feature.name]
    return feature


def _vector_selector(feature: Feature, spec: dict, key: str) -> None:
    """joints / field / slice / indices / names of a vector feature, cross-checked."""
    joints = _str_list(spec["joints"], f"{key}.joints") if "joints" in spec else None
    if joints is not None and feature.msg_type == M.FLOAT64_ARRAY:
        raise ContractError(
            "Float64MultiArray has no joint names; select values with slice or indices", f"{key}.joints"
        )
    if "field" in spec:
        if feature.msg_type != M.JOINT_STATE:
            raise ContractError("field applies to JointState only", f"{key}.field")
        if spec["field"] not in ("position", "velocity", "effort"):
            raise ContractError(f"expected position, velocity or effort, got {spec['field']!r}", f"{key}.field")
        feature.field = spec["field"]
    if "slice" in spec and "indices" in spec:
        raise ContractError("give slice or indices, not both", key)
    indices = None
    if "slice" in spec:
        sl = _int_list(spec["slice"], f"{key}.slice")
        if len(sl) != 2 or sl[0] >= sl[1]:
            raise ContractError(f"expected [start, stop] with start < stop, got {sl!r}", f"{key}.slice")
        indices = list(range(sl[0], sl[1]))
    elif "indices" in spec:
        indices = _int_list(spec["indices"], f"{key}.indices")
    if indices is not None and joints is not None:
        raise ContractError("select by joints or by slice/indices, not both", key)
    if "names" in spec:
        names = _str_list(spec["names"], f"{key}.names")
    elif joints is not None:
        names = [f"{j}.pos" for j in joints]  # LeRobot's motor feature names
    else:
        raise ContractError("a vector feature needs `names` (LeRobot value names) or `joints`", key)
    width = len(joints) if joints is not None else (len(indices) if indices is not None else len(names))
    if len(names) != width:
        raise ContractError(f"{len(names)} names for {width} selected values", f"{key}.names")
    feature.joints, feature.indices, feature.names = joints, indices, names
