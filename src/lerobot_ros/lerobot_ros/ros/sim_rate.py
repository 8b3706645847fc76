"""The real-time factor that sim bridges publish on /diagnostics, for tools that drive them (demo, eval)."""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray

from lerobot_ros.ros.qos import RELIABLE_QOS


class SimRateListener:
    """Keeps the newest simulator status of each bridge (by the bridge node's full name)."""

    def __init__(self, node):
        self.latest: dict[str, dict[str, str]] = {}
        node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, RELIABLE_QOS)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.endswith(": simulator"):
                self.latest[status.hardware_id] = {kv.key: kv.value for kv in status.values}

    def values(self, ns: str | None = None) -> dict[str, str] | None:
        """The newest values of the bridge in namespace `ns` (any bridge when None)."""
        for node_name, values in sorted(self.latest.items()):
            if ns is None or node_name.rsplit("/", 1)[0] == ns.rstrip("/"):
                return values
        return None

    def summary(self, ns: str | None = None) -> str:
        """E.g. "real-time factor 0.62 (mean 0.60; 18.6 of 30 steps/s)", or "" before any report."""
        v = self.values(ns)
        if not v or v.get("real_time_factor", "nan") == "nan":
            return ""
        return (
            f"real-time factor {float(v['real_time_factor']):.2f} (mean {float(v['real_time_factor_mean']):.2f}; "
            f"{float(v['steps_per_s']):.1f} of {v['target_steps_per_s']} steps/s)"
        )
