"""One version: package.xml of lerobot_ros is the source; the interfaces package, the installed distribution,
`lerobot_ros.__version__` and `lerobot-ros --version` all say the same."""

import re
import subprocess
import sys
from importlib.metadata import requires, version
from pathlib import Path

import lerobot_ros

REPO = Path(__file__).resolve().parents[2]


def _xml_version(path: Path) -> str:
    match = re.search(r"<version>\s*([^<\s]+)\s*</version>", path.read_text())
    assert match, f"{path} has no <version>"
    return match.group(1)


def test_every_place_that_states_the_version_agrees():
    source = _xml_version(REPO / "src" / "lerobot_ros" / "package.xml")
    assert re.fullmatch(r"\d+\.\d+\.\d+", source), source
    assert _xml_version(REPO / "msgs" / "lerobot_ros_msgs" / "package.xml") == source
    assert version("lerobot_ros") == source
    assert version("lerobot_ros_msgs") == source  # the interfaces' wheel, built by their own backend
    assert f"lerobot-ros-msgs=={source}" in (requires("lerobot_ros") or [])
    assert lerobot_ros.__version__ == source
    exe = Path(sys.executable).with_name("lerobot-ros")
    shown = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert source in shown.stdout


def test_no_second_literal_version_in_the_python_sources():
    source = _xml_version(REPO / "src" / "lerobot_ros" / "package.xml")
    literal = re.compile(r"""(?:__version__|version)\s*=\s*["']""" + re.escape(source) + r"""["']""")
    offenders = [
        str(p.relative_to(REPO))
        for p in (REPO / "src").rglob("*.py")
        if literal.search(p.read_text(encoding="utf-8", errors="replace"))
    ]
    assert offenders == [], f"a second copy of the version: {offenders}"


def test_the_plugins_carry_the_version_and_pin_lerobot_ros_to_it():
    import tomllib

    source = _xml_version(REPO / "src" / "lerobot_ros" / "package.xml")
    plugins = sorted((REPO / "plugins").glob("lerobot_*/pyproject.toml"))
    assert plugins, "no plugin distributions under plugins/"
    for path in plugins:
        project = tomllib.loads(path.read_text())["project"]
        assert project["version"] == source, path
        pins = [
            d for d in project["dependencies"] if re.fullmatch(r"lerobot-ros(\[[a-z,]+\])?==" + re.escape(source), d)
        ]
        assert pins, (path, project["dependencies"])
        assert project["name"] == path.parent.name and project["name"].startswith("lerobot_"), path
