"""`lerobot-ros launch FILE --check` and the three ways a file read differently by ros2 launch fails: every shipped
file passes with its defaults; the files as they were before the fix (git 928328f, copied below as text in
today's names) are caught: a policy node that exits at once, viewer packages whose absence ends ros2 launch,
and a share folder that is a link."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lerobot_ros.launch_runner import LaunchError, ament, evaluate_file
from lerobot_ros.launch_runner.check import CONSTRUCTS, check_file, format_report

REPO = Path(__file__).resolve().parents[2]
LAUNCH = REPO / "launch"
SHIPPED = sorted(p.name for p in LAUNCH.glob("*.launch.yaml"))


@pytest.fixture(autouse=True)
def _params_in_tmp(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def kinds(report) -> list[str]:
    return [f.kind for f in report.findings]


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_file_passes_check_with_its_defaults(name):
    """Also through the installed share folder, the way `ros2 launch lerobot_ros NAME` finds it."""
    for path in (LAUNCH / name, Path(ament.package_prefix("lerobot_ros")) / "share" / "lerobot_ros" / "launch" / name):
        report = check_file(str(path))
        assert report.findings == [], "\n".join(format_report(report))
        assert report.packages["lerobot_ros"] is not None


def test_check_cli_exit_status_and_one_line_per_finding(tmp_path):
    bad = tmp_path / "bad.launch.yaml"
    bad.write_text(
        textwrap.dedent("""\
        launch:
        - arg: {name: p, default: ''}
        - node: {pkg: lerobot_ros, exec: talker, name: t, output: log, if: "$(not-equals '$(var p)' '')"}
        - executable: {cmd: /no/such/program --flag, name: gone}
        """)
    )
    cli = [sys.executable, "-m", "lerobot_ros.cli.main", "launch"]
    ok = subprocess.run(cli + ["smoke", "--check"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.strip().endswith(
        "0 finding(s): runs the same under ros2 launch and lerobot-ros launch"
    ), ok.stdout + ok.stderr
    assert "package lerobot_ros: installed" in ok.stdout and "would start: talker, listener" in ok.stdout
    out = subprocess.run(cli + [str(bad), "--check"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    findings = [line for line in out.stdout.splitlines() if line.startswith("finding: ")]
    assert len(findings) == 3 and out.stdout.strip().endswith("3 finding(s)")
    assert any("bad.launch.yaml:3: $(not-equals) gets an empty quoted argument" in f for f in findings)
    assert any("bad.launch.yaml:3: output: log" in f for f in findings)
    assert any("bad.launch.yaml:4: gone: '/no/such/program' is not an executable file" in f for f in findings)


def test_installed_prints_a_condition_both_runners_read():
    cli = [sys.executable, "-m", "lerobot_ros.cli.main", "launch", "--installed"]
    assert subprocess.run(cli + ["lerobot_ros"], capture_output=True, text=True, timeout=60).stdout == "true\n"
    assert subprocess.run(cli + ["no_such_pkg_x"], capture_output=True, text=True, timeout=60).stdout == "false\n"


# ---- defect 1: the old policy condition ------------------------------------------------------------------
OLD_POLICY_PIECE = """\
launch:
- arg: {name: policy.path, default: ''}
- node:
    pkg: lerobot_ros
    exec: policy_node
    name: policy
    param:
    - {name: policy.path, value: $(var policy.path)}
"""
OLD_ROBOT_FILE = """\
launch:
- arg: {name: policy.path, default: ''}
- include:
    file: $(dirname)/policy.launch.yaml
    if: $(not-equals '$(var policy.path)' '')
    arg:
    - {name: policy.path, value: $(var policy.path)}
"""


def test_defect1_old_condition_starts_a_policy_node_that_exits_at_once(tmp_path):
    (tmp_path / "policy.launch.yaml").write_text(OLD_POLICY_PIECE)
    robot = tmp_path / "robot.launch.yaml"
    robot.write_text(OLD_ROBOT_FILE)
    # ros2 launch's grammar: '' is '[]' in not-equals, so the include runs with an empty policy.path
    assert [p.label for p in evaluate_file(str(robot)).processes] == ["policy"]
    report = check_file(str(robot))
    assert kinds(report) == ["empty-quoted-equals", "required-parameter"], format_report(report)
    assert "policy would exit at once: parameter policy.path is empty" in str(report.findings[1])
    # the shipped condition: no policy without a path, a policy with one
    robot.write_text(
        OLD_ROBOT_FILE.replace("$(not-equals '$(var policy.path)' '')", "$(not-equals 'x$(var policy.path)' x)")
    )
    assert evaluate_file(str(robot)).processes == []
    assert check_file(str(robot)).findings == []
    assert [p.label for p in evaluate_file(str(robot), {"policy.path": str(tmp_path)}).processes] == ["policy"]
    assert kinds(check_file(str(robot), {"policy.path": "/no/such/model"})) == ["required-parameter"]
    for name in ("sim_metaworld", "sim_libero", "sim_so101", "so101_real", "koch_real", "so101_virtual"):
        assert "'$(var policy.path)' ''" not in (LAUNCH / f"{name}.launch.yaml").read_text()


# ---- defect 2: viewers whose absence ends ros2 launch --------------------------------------------------
OLD_RVIZ_PIECE = """\
launch:
- arg: {name: robot_model, default: 'true'}
- node: {pkg: robot_state_publisher, exec: robot_state_publisher, name: robot_state_publisher, if: $(var robot_model)}
- node: {pkg: rviz2, exec: rviz2, name: rviz2}
"""
OLD_SIM_FILE = """\
launch:
- arg: {name: rviz, default: 'true'}
- node: {pkg: lerobot_ros, exec: talker, name: sim_bridge}
- include: {file: $(dirname)/rviz.launch.yaml, if: $(var rviz)}
"""


def test_defect2_old_rviz_default_needs_packages_that_are_missing(tmp_path):
    missing = [p for p in ("robot_state_publisher", "rviz2") if ament.package_prefix(p) is None]
    if not missing:
        pytest.skip("robot_state_publisher and rviz2 are both installed here")
    (tmp_path / "rviz.launch.yaml").write_text(OLD_RVIZ_PIECE)
    sim = tmp_path / "sim.launch.yaml"
    sim.write_text(OLD_SIM_FILE)
    with pytest.raises(LaunchError, match=f"package '{missing[0]}' not found"):  # as ros2 launch: all stops
        evaluate_file(str(sim))
    report = check_file(str(sim))
    assert kinds(report) == ["missing-package"] * len(missing), format_report(report)
    assert "ros2 launch ends the whole launch here" in str(report.findings[0])
    assert all(report.packages[p] is None for p in missing)
    assert check_file(str(sim), {"rviz": "false"}).findings == []


@pytest.mark.parametrize("name", ["sim_so101", "so101_real", "so101_virtual", "sim_metaworld", "koch_real"])
def test_defect2_shipped_viewers_never_end_the_launch(name):
    """rviz defaults to false, and with rviz:=true a missing viewer is skipped by its own `if`."""
    for args in ({}, {"rviz": "true"}):
        report = check_file(str(LAUNCH / f"{name}.launch.yaml"), args)
        assert report.findings == [], "\n".join(format_report(report))
        for pkg in ("rviz2", "robot_state_publisher"):
            if ament.package_prefix(pkg) is None:
                assert pkg not in report.processes


def test_docker_default_command_has_no_viewer_it_lacks():
    docker = (REPO / "docker" / "Dockerfile").read_text()
    assert 'CMD ["ros2", "launch", "lerobot_ros", "sim_so101.launch.yaml"]' in docker
    assert "rviz2" not in docker.split("apt-get install", 1)[1].split("&&")[0]  # not installed there ...
    assert "robot-state-publisher" in docker
    report = check_file(str(LAUNCH / "sim_so101.launch.yaml"))  # ... and not needed by the default command
    assert report.processes == ["sim_bridge"] and report.findings == []


# ---- defect 3: a share folder that is a link -------------------------------------------------------------
def _prefix(tmp_path: Path, link_folder: bool) -> Path:
    prefix = tmp_path / ("linked" if link_folder else "files")
    (prefix / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True)
    (prefix / "share" / "ament_index" / "resource_index" / "packages" / "demo_pkg").touch()
    share = prefix / "share" / "demo_pkg"
    share.mkdir()
    if link_folder:  # what scripts/setup.sh did before: share/PKG/launch -> the checkout's launch/
        (share / "launch").symlink_to(LAUNCH, target_is_directory=True)
    else:  # what it does now: a real folder, one link per file
        (share / "launch").mkdir()
        (share / "launch" / "smoke.launch.yaml").symlink_to(LAUNCH / "smoke.launch.yaml")
    return prefix


def test_defect3_a_linked_share_folder_hides_the_files_from_ros2_launch(tmp_path, monkeypatch):
    for link_folder in (True, False):
        prefix = _prefix(tmp_path, link_folder)
        monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
        path = prefix / "share" / "demo_pkg" / "launch" / "smoke.launch.yaml"
        # ros2launch's get_share_file_path_from_package walks the share folder like this
        found = [r for r, _, files in os.walk(prefix / "share" / "demo_pkg") if "smoke.launch.yaml" in files]
        assert bool(found) is not link_folder
        report = check_file(str(path))
        assert kinds(report) == (["share-link"] if link_folder else []), format_report(report)


def test_defect3_setup_links_files_not_folders():
    share = Path(ament.package_prefix("lerobot_ros")) / "share" / "lerobot_ros"
    for folder in ("launch", "config"):
        assert not (share / folder).is_symlink(), f"{share / folder} is a folder link: re-run scripts/setup.sh"
    walked = {f for _, _, files in os.walk(share / "launch") for f in files}
    assert set(SHIPPED) <= walked
    assert (share / "config" / "rviz" / "so101.rviz").resolve() == REPO / "config" / "rviz" / "so101.rviz"


# ---- the other constructs ---------------------------------------------------------------------------------
def test_other_constructs_are_reported_with_file_and_line(tmp_path):
    f = tmp_path / "c.launch.yaml"
    f.write_text(
        textwrap.dedent("""\
        launch:
        - let: {name: a, value: "$(equals '$(equals \\"x\\" x)' false)"}
        - node: {pkg: lerobot_ros, exec: talker, name: t, emulate_tty: true}
        - node: {pkg: lerobot_ros, exec: no_such_node, name: n}
        - include: {file: $(dirname)/other.launch.py, if: 'false'}
        """)
    )
    report = check_file(str(f))
    got = sorted((x.kind, x.where) for x in report.findings)
    assert got == [
        ("emulate_tty", "c.launch.yaml:3"),
        ("include-non-yaml", "c.launch.yaml:5"),
        ("missing-executable", "c.launch.yaml:4"),
        ("nested-quote", "c.launch.yaml:2"),
    ], format_report(report)
    assert set(CONSTRUCTS) >= {x.kind for x in report.findings}
    f.write_text("launch:\n- let: {name: a, value: $(optenv X)}\n")
    (finding,) = check_file(str(f)).findings
    assert finding.kind == "parse" and "write $(env NAME '')" in finding.message and finding.where == "c.launch.yaml:2"
