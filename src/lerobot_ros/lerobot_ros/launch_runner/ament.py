"""Find packages and their executables through the ament index, as ros2 launch does.

A package is installed under a prefix when `<prefix>/share/ament_index/resource_index/packages/<pkg>`
exists; its share folder is `<prefix>/share/<pkg>` and its executables live in `<prefix>/lib/<pkg>/`.
Prefixes come from AMENT_PREFIX_PATH, then the running Python's environment (a pip-only install lays
out the same index inside the virtual environment).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def prefixes(environ: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    out: list[str] = []
    for p in [*env.get("AMENT_PREFIX_PATH", "").split(os.pathsep), sys.prefix]:
        if p and os.path.normpath(p) not in out:
            out.append(os.path.normpath(p))
    return out


def package_prefix(package: str, environ: Mapping[str, str] | None = None) -> str | None:
    for prefix in prefixes(environ):
        if os.path.isfile(os.path.join(prefix, "share", "ament_index", "resource_index", "packages", package)):
            return prefix
    return None


def find_executable(package: str, executable: str, environ: Mapping[str, str] | None = None) -> str:
    """Path of `lib/<package>/<executable>`; raises LookupError with a message saying what to do."""
    prefix = package_prefix(package, environ)
    if prefix is None:
        raise LookupError(
            f"package '{package}' not found in the ament index "
            f"(searched {', '.join(prefixes(environ))}); build/install it or set AMENT_PREFIX_PATH"
        )
    path = os.path.join(prefix, "lib", package, executable)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        lib = os.path.join(prefix, "lib", package)
        found = sorted(os.listdir(lib)) if os.path.isdir(lib) else []
        raise LookupError(
            f"executable '{executable}' not found in {lib}" + (f" (available: {', '.join(found)})" if found else "")
        )
    return path
