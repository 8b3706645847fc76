"""The distribution as a user gets it: build the wheels, check what they carry, install them into fresh venvs.

`make dist` builds both wheels into dist/ and runs `python -m lerobot_ros.testing.wheels check dist` (every
launch file, config, contract, message definition and `lib/lerobot_ros/<executable>` in place) beside
check-wheel-contents and twine; tests/e2e/test_wheels.py installs them into fresh venvs with no clone on
the path and runs the commands a new user would.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

#: the checkout (this module lives at src/lerobot_ros/lerobot_ros/testing/)
REPO = Path(__file__).resolve().parents[4]
PACKAGE = "lerobot_ros"
MSGS = REPO / "msgs" / "lerobot_ros_msgs"
#: the LeRobot plugin distributions (their names are what LeRobot's discovery matches)
PLUGINS = sorted(p for p in (REPO / "plugins").glob("lerobot_*") if (p / "pyproject.toml").is_file())
#: environment variables of this session that must not reach a fresh venv's processes: they would point it at
#: the checkout's venv (or, `_ROS_WHEELS_BOOTSTRAP_COMPLETE`, skip the ROS wheels' loader-path set-up)
#: run with `python -c`: LeRobot's own plugin scan, then the types each registry knows, as JSON
DISCOVERY_SNIPPET = (
    "import json; from lerobot.utils.import_utils import register_third_party_plugins; "
    "register_third_party_plugins(); "
    "from lerobot.robots.config import RobotConfig; from lerobot.teleoperators.config import TeleoperatorConfig; "
    "from lerobot.cameras.configs import CameraConfig; from lerobot.envs.configs import EnvConfig; "
    "print(json.dumps({k: sorted(c.get_known_choices()) for k, c in "
    "(('robot', RobotConfig), ('teleop', TeleoperatorConfig), ('camera', CameraConfig), ('env', EnvConfig))}))"
)
#: what the plugin distributions register (`--robot.type`, `--teleop.type`, camera `type`, `--env.type`)
PLUGIN_TYPES = {"robot": "ros_contract", "teleop": "ros_contract", "camera": "ros_image", "env": "ros_bridge"}

LEAKY_ENV = (
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "AMENT_PREFIX_PATH",
    "LD_LIBRARY_PATH",
    "_ROS_WHEELS_BOOTSTRAP_COMPLETE",
    "PYTHONHOME",
    "COLCON_PREFIX_PATH",
)


def find_uv() -> str:
    """uv as scripts/setup.sh finds it: on PATH, else the copy it bootstrapped into .tools/."""
    found = shutil.which("uv") or (
        str(REPO / ".tools" / "bin" / "uv") if (REPO / ".tools" / "bin" / "uv").exists() else None
    )
    if found is None:
        raise RuntimeError("uv not found: run scripts/setup.sh (it bootstraps uv into .tools/) or install uv")
    return found


def build_wheels(out: Path, uv: str | None = None) -> dict[str, Path]:
    """Both wheels into `out`: lerobot-ros through its sdist (what a plain `uv build` does, so a file the sdist
    loses is lost here too) and lerobot-ros-msgs with this venv's build tools (they are in lock.txt)."""
    uv = uv or find_uv()
    out.mkdir(parents=True, exist_ok=True)
    py = ["-p", sys.executable]
    subprocess.run([uv, "build", "-q", *py, "--out-dir", str(out), str(REPO / "src" / PACKAGE)], check=True)
    subprocess.run(
        [uv, "build", "-q", "--wheel", "--no-build-isolation", *py, "--out-dir", str(out), str(MSGS)], check=True
    )
    for plugin in PLUGINS:
        subprocess.run([uv, "build", "-q", "--wheel", *py, "--out-dir", str(out), str(plugin)], check=True)
    return wheel_files(out)


def wheel_files(folder: Path) -> dict[str, Path]:
    """{"lerobot_ros": wheel, "lerobot_ros_msgs": wheel, <plugin>: wheel ...} in `folder` (the newest of each)."""
    found: dict[str, Path] = {}
    for dist in ("lerobot_ros", "lerobot_ros_msgs", *(p.name for p in PLUGINS)):
        wheels = sorted(folder.glob(f"{dist}-*.whl"), key=lambda p: p.stat().st_mtime)
        if not wheels:
            raise FileNotFoundError(f"no {dist} wheel in {folder}: run `make dist`")
        found[dist] = wheels[-1]
    return found


# --------------------------------------------------------------------------------------------- contents


def _data_dir(names: list[str]) -> str:
    dist_info = next(n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info"))
    return dist_info[: -len(".dist-info")] + ".data/data/"


def expected_files(dist: str) -> dict[str, bool]:
    """Wheel paths (below `<name>.data/data/` or at the root) -> must they be executable."""
    if dist == "lerobot_ros":
        files = {f"share/ament_index/resource_index/packages/{PACKAGE}": False, f"share/{PACKAGE}/package.xml": False}
        for top in ("launch", "config"):
            for path in sorted((REPO / top).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    files[f"share/{PACKAGE}/{path.relative_to(REPO).as_posix()}"] = False
        for name in node_executables():
            files[f"lib/{PACKAGE}/{name}"] = True
        return files
    if dist == "lerobot_ros_msgs":
        files = {
            "share/ament_index/resource_index/packages/lerobot_ros_msgs": False,
            "share/lerobot_ros_msgs/package.xml": False,
            "@root/lerobot_ros_msgs/msg/__init__.py": False,
            "@root/lerobot_ros_msgs/srv/__init__.py": False,
        }
        for kind in ("msg", "srv"):
            for path in sorted((MSGS / kind).glob(f"*.{kind}")):
                files[f"share/lerobot_ros_msgs/{kind}/{path.name}"] = False
        for support in ("c", "fastrtps_c", "introspection_c"):
            files[f"@root/lerobot_ros_msgs/lerobot_ros_msgs_s__rosidl_typesupport_{support}.so"] = False
        for lib in ("generator_c", "generator_py", "typesupport_c", "typesupport_fastrtps_c", "typesupport_cpp"):
            files[f"lib/liblerobot_ros_msgs__rosidl_{lib}.so"] = False
        return files
    plugin = next((p for p in PLUGINS if p.name == dist), None)
    if plugin is not None:
        return {f"@root/{dist}/__init__.py": False}
    raise ValueError(f"unknown distribution {dist!r}")


def node_executables() -> list[str]:
    """The node executables setup.py declares (console scripts other than `lerobot-ros`), read from its source."""
    import ast

    tree = ast.parse((REPO / "src" / PACKAGE / "setup.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "NODES" for t in node.targets):
            return sorted(ast.literal_eval(node.value))
    raise RuntimeError("setup.py declares no NODES")


def check_contents(wheel: Path) -> list[str]:
    """What a wheel lacks or gets wrong: missing data files, executables without their x bit, console scripts
    without a lib/lerobot_ros wrapper. Empty when it is complete."""
    dist = wheel.name.split("-")[0]
    problems = []
    with zipfile.ZipFile(wheel) as whl:
        infos = {i.filename: i for i in whl.infolist()}
        data = _data_dir(list(infos))
        for rel, executable in expected_files(dist).items():
            arcname = rel[len("@root/") :] if rel.startswith("@root/") else data + rel
            info = infos.get(arcname)
            if info is None:
                problems.append(f"{wheel.name}: missing {arcname}")
            elif executable and not (info.external_attr >> 16) & 0o111:
                problems.append(f"{wheel.name}: {arcname} is not executable")
        if any(p.name == dist for p in PLUGINS):
            meta = next((n for n in infos if n.endswith(".dist-info/METADATA")), None)
            found = re.search(r"^Name: (.+)$", whl.read(meta).decode(), re.M) if meta else None
            if found is None or found.group(1).strip() != dist:
                # LeRobot imports the metadata Name as a module: `lerobot-robot-x` would never be found
                problems.append(f"{wheel.name}: metadata Name must be {dist!r} (underscores) for LeRobot to find it")
        if dist == "lerobot_ros":
            entry_points = next((n for n in infos if n.endswith(".dist-info/entry_points.txt")), None)
            if entry_points is None:
                problems.append(f"{wheel.name}: no entry_points.txt")
            else:
                parser = configparser.ConfigParser()
                parser.read_string(whl.read(entry_points).decode())
                scripts = set(parser["console_scripts"]) if parser.has_section("console_scripts") else set()
                for name in sorted(scripts - {"lerobot-ros"}):
                    if data + f"lib/{PACKAGE}/{name}" not in infos:
                        problems.append(f"{wheel.name}: console script {name} has no lib/{PACKAGE}/{name}")
                if "lerobot-ros" not in scripts:
                    problems.append(f"{wheel.name}: no lerobot-ros console script")
    return problems


# --------------------------------------------------------------------------------------------- fresh venvs


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what ties a child to the checkout's venv."""
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPO)))
    env.setdefault("MUJOCO_GL", "egl")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@dataclass
class FreshVenv:
    """A venv made by uv with only the built wheels (and what they depend on, pinned by lock.txt) in it."""

    path: Path
    install_s: float = 0.0

    @classmethod
    def create(cls, path: Path, wheels: Path, *requirements: str, uv: str | None = None) -> FreshVenv:
        uv = uv or find_uv()
        shutil.rmtree(path, ignore_errors=True)
        base_python = getattr(sys, "_base_executable", sys.executable)
        env = clean_env()
        subprocess.run([uv, "venv", "-q", "-p", base_python, str(path)], check=True, env=env)
        start = time.monotonic()
        subprocess.run(
            [
                uv,
                "pip",
                "install",
                "-q",
                "-p",
                str(path / "bin" / "python"),
                "--find-links",
                str(wheels),
                "-c",
                str(REPO / "requirements" / "lock.txt"),
                *requirements,
            ],
            check=True,
            env=env,
        )
        return cls(path, time.monotonic() - start)

    def bin(self, name: str) -> str:
        return str(self.path / "bin" / name)

    def run(self, args: list[str], cwd: Path, timeout: float = 120.0, **env: str) -> subprocess.CompletedProcess:
        """A command of this venv (`lerobot-ros ...`, `python ...`) run from `cwd`, outside the checkout."""
        exe = self.bin(args[0]) if (self.path / "bin" / args[0]).exists() else args[0]
        return subprocess.run(
            [exe, *args[1:]], cwd=cwd, env=clean_env(**env), capture_output=True, text=True, timeout=timeout
        )

    def popen(self, args: list[str], cwd: Path, **env: str) -> subprocess.Popen:
        return subprocess.Popen(
            [self.bin(args[0]), *args[1:]],
            cwd=cwd,
            env=clean_env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )


def main(argv: list[str] | None = None) -> int:
    """`python -m lerobot_ros.testing.wheels build|check DIR` (`make dist`): build both wheels into DIR (a fresh
    one), then check what each carries; exit 1 with one line per problem."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in ("build", "check"):
        sys.stderr.write("usage: python -m lerobot_ros.testing.wheels build|check DIST_DIR\n")
        return 2
    if args[0] == "build":
        shutil.rmtree(args[1], ignore_errors=True)
        build_wheels(Path(args[1]))
    problems = []
    for wheel in wheel_files(Path(args[1])).values():
        found = check_contents(wheel)
        problems += found
        size = wheel.stat().st_size / 1e6
        sys.stdout.write(f"{wheel.name}: {size:.2f} MB, {'OK' if not found else f'{len(found)} problem(s)'}\n")
    for problem in problems:
        sys.stdout.write(f"  {problem}\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
