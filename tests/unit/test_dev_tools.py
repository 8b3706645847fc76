"""The developer tools' parsing: a benchmark's JSON line (make bench) and a pytest JUnit report (make flake-hunt)."""

from __future__ import annotations

from lerobot_ros.testing.benches import last_json
from lerobot_ros.testing.flake_hunt import failures


def test_a_benchmarks_figure_is_its_last_json_line():
    text = 'table\n{"not": "this"}\nmore\n{"bench": "x", "figure": 0.99, "goal": 0.98, "goal_op": ">=", "meets_goal": true}\n'
    assert last_json(text) == {"bench": "x", "figure": 0.99, "goal": 0.98, "goal_op": ">=", "meets_goal": True}
    assert last_json("table only\n") is None
    assert last_json('{"bench": "x"}\n') is None  # a JSON line without a figure is no result
    assert last_json("{broken json\n") is None


def test_failures_are_read_from_a_junit_report(tmp_path):
    report = tmp_path / "r.xml"
    report.write_text(
        """<?xml version="1.0"?><testsuites><testsuite>
        <testcase classname="tests.integration.test_a" name="test_ok" file="tests/integration/test_a.py"/>
        <testcase classname="tests.integration.test_a" name="test_bad" file="tests/integration/test_a.py">
          <failure message="boom"/></testcase>
        <testcase classname="tests.integration.test_b" name="test_setup[x]"><error message="fixture"/></testcase>
        </testsuite></testsuites>"""
    )
    assert failures(report) == [
        "tests/integration/test_a.py::test_bad",
        "tests/integration/test_b.py::test_setup[x]",
    ]
    assert failures(tmp_path / "missing.xml") == ["<pytest wrote no report>"]


def test_children_of_a_background_job_get_ctrl_c_back():
    """A process started with SIGINT ignored (a script's background job) that restores it: its exec'd child
    handles SIGINT again (KeyboardInterrupt), where without the restore it ignores it as well."""
    import signal
    import subprocess
    import sys

    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    parent = (
        "import subprocess, sys\n"
        "from lerobot_ros.processes.interrupt import restore_default_sigint\n"
        "restored = {restore}\n"
        f"print(restored, subprocess.run([sys.executable, '-c', {probe!r}], capture_output=True, text=True).stdout.strip())\n"
    )

    def run(restore: bool) -> str:
        code = parent.format(restore="restore_default_sigint()" if restore else "False")
        ignore = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # noqa: E731 - what the shell does to a `&` job
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=ignore)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run(restore=True) == "True True"
    assert run(restore=False) == "False False"
