"""The declared-parameter layer: specs from a dataclass, loose spellings converted, one-line errors, and
over real DDS (a probe in another rclpy context, as `ros2 param` would): descriptions and ranges described,
int-for-double overrides, read-only refused with a reason, reconfigurable ones applied through the hook."""

from __future__ import annotations

import array
from dataclasses import dataclass

import pytest
from rclpy.node import Node
from rclpy.parameter import Parameter

from lerobot_ros.configs.fields import ParameterError, build, coerce, markdown_table, names, param, spec_of, specs
from lerobot_ros.ros.entry import NodeStartupError
from lerobot_ros.ros.parameters import declare_params, descriptor, ros_type
from lerobot_ros.ros.runtime import wait_until
from lerobot_ros.testing.param_probe import ParamProbe, assert_all_described


@dataclass(frozen=True)
class DemoParams:
    fps: float = param(30.0, "frames per second", unit="Hz", min=0.0, min_exclusive=True, reconfigurable=True)
    source: str = param("0", "camera index or file")
    quality: int = param(90, "jpeg quality", min=1, max=100, reconfigurable=True)
    qos: str = param("sensor", "QoS profile", choices=("sensor", "reliable"))
    enabled: bool = param(True, "publish at all")
    lower: list[float] = param([], "lower limits", unit="rad")
    cameras: list[str] = param(["front"], "camera names")
    low: float = param(0.0, "lower bound", reconfigurable=True)
    high: float = param(1.0, "upper bound", reconfigurable=True)

    def __post_init__(self):
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) must not exceed high ({self.high})")


# ----- no ROS ------------------------------------------------------------------------------------
def test_specs_take_type_default_and_constraints_from_the_dataclass():
    by_name = {s.name: s for s in specs(DemoParams)}
    assert names(DemoParams)[:3] == ["fps", "source", "quality"]
    assert (by_name["fps"].kind, by_name["fps"].is_list, ros_type(by_name["fps"])) == (
        float,
        False,
        Parameter.Type.DOUBLE,
    )
    assert ros_type(by_name["lower"]) == Parameter.Type.DOUBLE_ARRAY and by_name["lower"].default == []
    assert ros_type(by_name["cameras"]) == Parameter.Type.STRING_ARRAY
    assert "unit: Hz" in by_name["fps"].constraints() and "> 0" in by_name["fps"].constraints()
    assert "reconfigurable" in by_name["fps"].constraints() and "read-only" in by_name["source"].constraints()
    assert "one of: sensor, reliable" in by_name["qos"].constraints()
    # list defaults are not shared between instances
    assert DemoParams().cameras is not DemoParams().cameras


def test_bad_declarations_fail_when_the_class_is_read():
    with pytest.raises(TypeError, match="description"):
        param(1, "  ")

    @dataclass(frozen=True)
    class BadDefault:
        rate: float = param(-1.0, "a rate", min=0.0)

    with pytest.raises(ParameterError, match="'rate' must be >= 0"):
        specs(BadDefault)

    @dataclass(frozen=True)
    class BadType:
        thing: bytes = param(b"", "raw bytes")

    with pytest.raises(TypeError, match="unsupported setting type"):
        specs(BadType)


def test_loose_spellings_are_converted():
    spec = lambda n: spec_of(DemoParams, n)  # noqa: E731
    assert coerce(spec("fps"), 30) == 30.0 and isinstance(coerce(spec("fps"), 30), float)
    assert coerce(spec("source"), 0) == "0"  # `source:=0` arrives as an integer
    assert coerce(spec("quality"), 80.0) == 80
    assert coerce(spec("enabled"), "false") is False
    assert coerce(spec("lower"), [1, 2.5]) == [1.0, 2.5]
    assert coerce(spec("lower"), array.array("d", [0.5])) == [0.5]
    assert coerce(spec("lower"), None) == []  # an array declared without a value


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"fps": "fast"}, "'fps' must be a number, got 'fast'"),
        ({"fps": 0}, "'fps' must be > 0, got 0.0"),
        ({"quality": 101}, "'quality' must be in [1, 100], got 101"),
        ({"quality": 2.5}, "'quality' must be an integer, got 2.5"),
        ({"qos": "best"}, "'qos' must be one of sensor, reliable, got 'best'"),
        ({"enabled": 1}, "'enabled' must be true or false, got 1"),
        ({"lower": ["a"]}, "'lower' must be a number (each item), got 'a'"),
        ({"lower": 5.0}, "'lower' must be a list of float, got 5.0"),
        ({"lower": "a"}, "'lower' must be a number (each item), got 'a'"),  # text is a list as `1,2` writes it
        ({"low": 2.0}, "low (2.0) must not exceed high (1.0)"),
    ],
)
def test_bad_values_are_one_line_errors(raw, message):
    with pytest.raises(ParameterError) as info:
        build(DemoParams, raw)
    assert str(info.value) == message


def test_build_uses_defaults_for_missing_values():
    values = build(DemoParams, {"fps": 15})
    assert values == DemoParams(fps=15.0)


def test_descriptor_carries_description_range_and_read_only():
    fps = descriptor(spec_of(DemoParams, "fps"))
    assert fps.description == "frames per second" and not fps.read_only
    assert fps.type == Parameter.Type.DOUBLE.value
    assert fps.floating_point_range[0].from_value == 0.0 and fps.floating_point_range[0].to_value == float("inf")
    quality = descriptor(spec_of(DemoParams, "quality"))
    assert (quality.integer_range[0].from_value, quality.integer_range[0].to_value) == (1, 100)
    source = descriptor(spec_of(DemoParams, "source"))
    assert source.read_only and not source.floating_point_range and not source.integer_range
    assert "read-only" in source.additional_constraints


def test_markdown_table_lists_every_parameter():
    table = markdown_table(DemoParams)
    for name in names(DemoParams):
        assert f"| `{name}` |" in table


# ----- over DDS ----------------------------------------------------------------------------------
class DemoNode(Node):
    def __init__(self, **kwargs):
        super().__init__("param_demo", **kwargs)
        self.changes: list[dict] = []
        self.params = declare_params(self, DemoParams, on_change=self._on_change)
        self.timer = self.create_timer(1.0 / self.params.values.fps, lambda: None)

    def _on_change(self, new: DemoParams, changed: dict) -> None:
        if changed.get("quality") == 13:
            raise ValueError("quality 13 is unlucky")
        if "fps" in changed:
            self.timer.timer_period_ns = int(1e9 / new.fps)
        self.changes.append(changed)


def test_declared_values_overrides_and_builtins(ros):
    node = ros.add_node(
        DemoNode(
            context=ros.context,
            parameter_overrides=[
                Parameter("fps", value=20),
                Parameter("source", value=2),
                Parameter("lower", value=[1, 2]),
                Parameter("cameras", Parameter.Type.STRING_ARRAY, []),
            ],
        )
    )
    values = node.params.values
    assert values.fps == 20.0 and values.source == "2" and values.lower == [1.0, 2.0] and values.cameras == []
    assert node.get_parameter("fps").type_ == Parameter.Type.DOUBLE and node.get_parameter("fps").value == 20.0
    assert node.get_parameter("source").value == "2"
    assert node.describe_parameter("use_sim_time").description


def test_bad_override_is_a_startup_error(ros):
    with pytest.raises(NodeStartupError, match="^parameter 'quality' must be in \\[1, 100\\], got 0$"):
        DemoNode(context=ros.context, parameter_overrides=[Parameter("quality", value=0)])


def test_from_another_context_describe_refuse_and_apply(ros, probe_runtime):
    node = ros.add_node(DemoNode(context=ros.context))
    probe = ParamProbe(probe_runtime, "/param_demo")
    described = assert_all_described(probe)
    assert set(names(DemoParams)) <= set(described)
    assert described["fps"].floating_point_range[0].from_value == 0.0 and not described["fps"].read_only
    assert described["source"].read_only and "read-only" in described["source"].additional_constraints

    refused = probe.set("source", "/dev/video2")
    assert not refused.successful and "read-only" in refused.reason
    assert node.params.values.source == "0" and probe.get("source") == "0"

    applied = probe.set("fps", 10)  # an integer for a double, as `ros2 param set /param_demo fps 10` sends
    assert applied.successful, applied.reason
    assert node.params.values.fps == 10.0 and probe.get("fps") == 10.0
    assert node.timer.timer_period_ns == 100_000_000 and node.changes[-1] == {"fps": 10.0}

    for name, value, reason in (
        ("quality", 13, "quality 13 is unlucky"),
        ("quality", 500, "out of range"),
        ("fps", "fast", "Wrong parameter type"),
        ("low", 5.0, "must not exceed"),
    ):
        result = probe.set(name, value)
        assert not result.successful and reason in result.reason, (name, value, result.reason)
    assert node.params.values.quality == 90 and node.params.values.low == 0.0

    # several at once are validated together: raising both bounds is fine in one call
    both = probe._wait(
        lambda: probe.client.set_parameters_atomically([Parameter("low", value=5.0), Parameter("high", value=9.0)])
    )
    assert both.result.successful, both.result.reason
    wait_until(lambda: node.params.values.low == 5.0, 5.0, what="the new bounds")
    assert node.params.values.high == 9.0
