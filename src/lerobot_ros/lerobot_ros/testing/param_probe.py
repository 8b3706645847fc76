"""A node's parameters seen from outside it, through rclpy's parameter services (what `ros2 param` uses).

Used by the DDS tests of every node: the probe lives in its own rclpy context (another participant), so a
test reaches the node exactly as `ros2 param describe/set` would.
"""

from __future__ import annotations

from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient

from lerobot_ros.ros.runtime import RosRuntime, call_until_answered


class ParamProbe:
    def __init__(self, runtime: RosRuntime, target: str, timeout: float = 15.0):
        self.timeout = timeout
        node = runtime.create_node(f"param_probe_{abs(hash(target)) % 10**6}")
        self.client = AsyncParameterClient(node, target)
        if not self.client.wait_for_services(timeout_sec=timeout):
            raise TimeoutError(f"parameter services of {target} not found within {timeout} s")

    def _wait(self, request):
        return call_until_answered(request, self.timeout, what="a parameter service reply")

    def names(self) -> list[str]:
        return list(self._wait(lambda: self.client.list_parameters()).result.names)

    def describe(self, names: list[str] | None = None) -> dict[str, ParameterDescriptor]:
        names = self.names() if names is None else names
        return {d.name: d for d in self._wait(lambda: self.client.describe_parameters(names)).descriptors}

    def get(self, name: str):
        value = self._wait(lambda: self.client.get_parameters([name])).values[0]
        value = Parameter.from_parameter_msg(ParameterMsg(name=name, value=value)).value
        return value.tolist() if hasattr(value, "tolist") else value  # arrays arrive as array.array

    def set(self, name: str, value, type_: Parameter.Type | None = None) -> SetParametersResult:
        param = Parameter(name, type_, value) if type_ is not None else Parameter(name, value=value)
        return self._wait(lambda: self.client.set_parameters([param])).results[0]


def assert_all_described(probe: ParamProbe) -> dict[str, ParameterDescriptor]:
    """Every parameter of the node has a non-empty description; returns the descriptors."""
    described = probe.describe()
    missing = sorted(n for n, d in described.items() if not d.description.strip())
    assert not missing, f"parameters without a description: {missing}"
    return described
