"""PEP 517 backend: an ament_cmake interface package built with CMake and packed as a wheel laid out like the
ROS interface wheels on PyPI (`ros-std-msgs` ...), so `pip install` / `uv pip install` of this folder or of
the built wheel gives a venv the same shape as the ROS wheels do:

- the generated Python package (with its typesupport extensions) at the wheel's root (site-packages);
- `lib*.so`, `share/` (ament index, .msg/.srv, CMake config) and `include/` as `<name>.data/data/`, i.e.
  into the venv's prefix, where the ROS wheels' `.pth` puts `$prefix/lib` on the loader path.

The ROS wheels' CMake exports name the include folders of the machine they were built on
(`/opt/python/cp312-cp312/...`) on their `<pkg>__rosidl_generator_py` imported targets; the package's own
`cmake/pip_ros_wheels.cmake` (included by CMakeLists.txt, so colcon builds get it too) points them at this
interpreter's headers at the end of the configure step, without editing those packages' files.

The wheel's platform tag is the lowest manylinux tag the built libraries allow (their highest GLIBC symbol
version, never below 2_28), read from the symbol versions the libraries name.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent
MANYLINUX_FLOOR = (2, 28)  # the ROS wheels' tag; a wheel never claims an older glibc than they do
#: the newest libstdc++ symbol versions manylinux_2_28 (GCC 8) provides; a library needing more is tagged with
#: this machine's glibc instead (it then installs here, not on older systems)
MANYLINUX_2_28_CXX = {"GLIBCXX": (3, 4, 25), "CXXABI": (1, 3, 11)}


# --------------------------------------------------------------------------------------------- metadata


def _package_xml() -> str:
    return (SOURCE / "package.xml").read_text(encoding="utf-8")


def _tag(xml: str, name: str) -> list[str]:
    return [m.strip() for m in re.findall(rf"<{name}(?:\s[^>]*)?>([^<]+)</{name}>", xml)]


def _name() -> str:
    return _tag(_package_xml(), "name")[0]


def _version() -> str:
    return _tag(_package_xml(), "version")[0]


def _dist() -> str:
    """The distribution name as wheel file names spell it (`lerobot_ros_msgs`)."""
    return re.sub(r"[-.]+", "_", _name())


def _requires() -> list[str]:
    """Run-time dependencies from package.xml (`<depend>`, `<exec_depend>`), as the PyPI ROS wheels name them."""
    xml = _package_xml()
    deps = _tag(xml, "depend") + _tag(xml, "exec_depend")
    return sorted({"ros-" + d.replace("_", "-") for d in deps})


def _metadata() -> str:
    xml = _package_xml()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {_name().replace('_', '-')}",
        f"Version: {_version()}",
        f"Summary: {_tag(xml, 'description')[0]}",
        f"License: {_tag(xml, 'license')[0]}",
        f"Requires-Python: =={sys.version_info.major}.{sys.version_info.minor}.*",
    ]
    lines += [f"Requires-Dist: {r}" for r in _requires()]
    readme = SOURCE / "README.md"
    if readme.is_file():
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + readme.read_text(encoding="utf-8")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------- PEP 517 hooks


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    """The interfaces this package builds on (package.xml's `<depend>` / `<build_depend>`), on top of the build
    tools in pyproject.toml's build-system.requires."""
    xml = _package_xml()
    return sorted({"ros-" + d.replace("_", "-") for d in _tag(xml, "depend") + _tag(xml, "build_depend")})


def get_requires_for_build_sdist(config_settings=None) -> list[str]:
    return []


def build_sdist(sdist_directory: str, config_settings=None) -> str:
    """The package folder as it is (sources, package.xml, this backend); build artefacts left out."""
    base = f"{_dist()}-{_version()}"
    target = Path(sdist_directory) / f"{base}.tar.gz"
    with tarfile.open(target, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(SOURCE.rglob("*")):
            rel = path.relative_to(SOURCE)
            if path.is_dir() or "__pycache__" in rel.parts or rel.parts[0] in {"build", "dist"}:
                continue
            tar.add(path, arcname=f"{base}/{rel}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return target.name


def build_wheel(wheel_directory: str, config_settings=None, metadata_directory=None) -> str:
    with tempfile.TemporaryDirectory(prefix=f"{_dist()}-wheel-") as tmp:
        stage = Path(tmp) / "stage"
        _cmake_install(Path(tmp) / "build", stage)
        return _pack(stage, Path(wheel_directory))


# --------------------------------------------------------------------------------------------- CMake


def _cmake_install(build: Path, stage: Path) -> None:
    prefix = Path(sys.prefix)
    bindir = Path(sysconfig.get_path("scripts"))
    cmake = shutil.which("cmake", path=str(bindir)) or shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("cmake not found: install it into the build environment (pip install cmake)")
    build.mkdir(parents=True)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(bindir), env.get("PATH", "")])
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(p for p in [str(prefix), env.get("AMENT_PREFIX_PATH", "")] if p)
    env["PYTHONNOUSERSITE"] = "1"
    log = build / "cmake.log"
    configure = [
        cmake,
        "-S",
        str(SOURCE),
        "-B",
        str(build),
        "-G",
        "Ninja",
        f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DCMAKE_INSTALL_PREFIX={stage}",
        f"-DPython3_EXECUTABLE={sys.executable}",
        "-DBUILD_TESTING=OFF",
        "-DCMAKE_BUILD_TYPE=Release",
    ]
    for step in (configure, [cmake, "--build", str(build), "--target", "install"]):
        with log.open("a") as out:
            done = subprocess.run(step, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
            raise RuntimeError(f"{' '.join(step[:3])} failed (exit {done.returncode}); last lines:\n{tail}")


# --------------------------------------------------------------------------------------------- packing


def _site_packages(stage: Path) -> Path:
    found = sorted(stage.glob("lib/python3*/site-packages"))
    if not found:
        raise RuntimeError(f"the CMake install has no lib/python3*/site-packages under {stage}")
    return found[0]


def _symbol_versions(path: Path) -> dict[str, tuple[int, ...]]:
    """The highest GLIBC_ / GLIBCXX_ / CXXABI_ symbol version an ELF file names (none when not ELF)."""
    data = path.read_bytes()
    best: dict[str, tuple[int, ...]] = {}
    if data[:4] == b"\x7fELF":
        for name, ver in re.findall(rb"\b(GLIBC|GLIBCXX|CXXABI)_(\d+(?:\.\d+)+)\b", data):
            key, value = name.decode(), tuple(int(x) for x in ver.split(b"."))
            best[key] = max(best.get(key, ()), value)
    return best


def _platform_tag(files: list[Path]) -> str:
    """manylinux_2_28 unless a library needs a newer glibc (then that one) or a newer libstdc++ than 2_28 has
    (then this machine's glibc): the tag never promises more than the libraries keep."""
    needed = MANYLINUX_FLOOR
    for f in files:
        if not (f.suffix == ".so" or ".so." in f.name):
            continue
        found = _symbol_versions(f)
        glibc = found.get("GLIBC", ())
        if len(glibc) >= 2:
            needed = max(needed, (glibc[0], glibc[1]))
        if any(found.get(k, ()) > limit for k, limit in MANYLINUX_2_28_CXX.items()):
            libc = platform.libc_ver()[1].split(".")
            needed = max(needed, (int(libc[0]), int(libc[1])))
    return f"manylinux_{needed[0]}_{needed[1]}_{platform.machine()}"


def _record_line(arcname: str, data: bytes) -> list[str]:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [arcname, f"sha256={digest}", str(len(data))]


def _pack(stage: Path, wheel_directory: Path) -> str:
    site = _site_packages(stage)
    dist, version = _dist(), _version()
    data_dir = f"{dist}-{version}.data/data"
    info_dir = f"{dist}-{version}.dist-info"
    entries: list[tuple[str, Path]] = []
    for path in sorted(site.rglob("*")):
        rel = path.relative_to(site)
        # rosidl's setup.py egg-info would be a second record of this distribution; the .c files are build inputs
        skip = "__pycache__" in rel.parts or rel.parts[0].endswith(".egg-info") or path.suffix == ".c"
        if path.is_file() and not skip:
            entries.append((rel.as_posix(), path))
    for top in ("lib", "share", "include"):
        for path in sorted((stage / top).rglob("*")):
            if path.is_file() and not path.is_relative_to(site) and "__pycache__" not in path.parts:
                entries.append((f"{data_dir}/{path.relative_to(stage).as_posix()}", path))
    if not any(a.startswith(f"{_name()}/") for a, _ in entries):
        raise RuntimeError(f"the CMake install has no Python package {_name()} in {site}")
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    tag = f"{py}-{py}-{_platform_tag([p for _, p in entries])}"
    wheel_meta = f"Wheel-Version: 1.0\nGenerator: ament_cmake_wheel\nRoot-Is-Purelib: false\nTag: {tag}\n"
    wheel_directory.mkdir(parents=True, exist_ok=True)
    target = wheel_directory / f"{dist}-{version}-{tag}.whl"
    record: list[list[str]] = []
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as whl:
        for arcname, path in entries:
            data = path.read_bytes()
            info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = ((path.stat().st_mode & 0o777) | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info, data)
            record.append(_record_line(arcname, data))
        for name, text in (("METADATA", _metadata()), ("WHEEL", wheel_meta)):
            data = text.encode()
            whl.writestr(f"{info_dir}/{name}", data)
            record.append(_record_line(f"{info_dir}/{name}", data))
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([*record, [f"{info_dir}/RECORD", "", ""]])
        whl.writestr(f"{info_dir}/RECORD", out.getvalue())
    return target.name
