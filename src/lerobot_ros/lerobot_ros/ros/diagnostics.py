"""diagnostic_msgs/DiagnosticStatus from a hardware `Health` record (what every hardware node puts on /diagnostics).

A ROS adapter over the ROS-free bookkeeping in `lerobot_ros.hardware.health`, hence in ros/, not hardware/.
"""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from lerobot_ros.codecs import ns_to_time
from lerobot_ros.hardware.commands import TIMEOUT
from lerobot_ros.hardware.health import Health
from lerobot_ros.ros import network


def health_status(name: str, hardware_id: str, health: Health, extra: dict | None = None) -> DiagnosticStatus:
    """OK when connected without recent errors, WARN while errors repeat, ERROR when disconnected; with the
    network mode in force (who else can command this hardware), when one was asked for."""
    status = DiagnosticStatus(name=name, hardware_id=hardware_id)
    if not health.connected:
        status.level, status.message = (
            DiagnosticStatus.ERROR,
            "disconnected: " + (health.last_error or "not connected yet"),
        )
    elif health.consecutive_errors:
        status.level, status.message = DiagnosticStatus.WARN, "errors: " + health.last_error
    else:
        status.level, status.message = DiagnosticStatus.OK, "ok"
    values = {
        "connected": str(health.connected).lower(),
        "rate_hz": f"{health.rate_hz():.1f}",
        "loops": str(health.loops),
        "errors": str(health.errors),
        "consecutive_errors": str(health.consecutive_errors),
        "reconnects": str(health.reconnects),
        "last_error": health.last_error,
        **health.values,
        **(setting.diagnostic_values() if (setting := network.current()) else {}),
        **(extra or {}),
    }
    status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
    return status


def values_status(name: str, hardware_id: str, message: str, values: dict, warn: bool = False) -> DiagnosticStatus:
    """A status from plain values (e.g. a library's report): OK, or WARN when `warn`."""
    return DiagnosticStatus(
        name=name,
        hardware_id=hardware_id,
        message=message,
        level=DiagnosticStatus.WARN if warn else DiagnosticStatus.OK,
        values=[KeyValue(key=k, value=str(v)) for k, v in values.items()],
    )


def watchdog_warning(status: DiagnosticStatus, command_state: str, watchdog_s: float) -> DiagnosticStatus:
    """An arm that is otherwise fine but holds because its commands stopped (policy host gone, link down)
    says so: WARN with the reason, until commands come back."""
    if command_state == TIMEOUT and status.level == DiagnosticStatus.OK:
        status.level = DiagnosticStatus.WARN
        status.message = f"holding the present position: no command for over {watchdog_s:g} s (watchdog_s)"
    return status


def diagnostic_array(stamp_ns: int, *statuses: DiagnosticStatus) -> DiagnosticArray:
    msg = DiagnosticArray()
    msg.header.stamp = ns_to_time(stamp_ns)
    msg.status = list(statuses)
    return msg
