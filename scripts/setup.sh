#!/usr/bin/env bash
# One-command set-up of lerobot_ros on a fresh machine (idempotent; quick when nothing changed).
#
#   scripts/setup.sh            # .venv with ROS 2 wheels, LeRobot, rosbags, simulators, lerobot_ros_msgs
#   LEROBOT_ROS_EXTRAS=libero scripts/setup.sh   # also LIBERO and its offline scene assets
#
# An extra, once installed, stays installed and is kept in sync by later runs with or without
# LEROBOT_ROS_EXTRAS (so `make demo` after `make test` does not reinstall anything); each extra has its
# own stamp, so asking for one only installs that one.
#
# What it does, in order:
#   1. Debian packages for offscreen GL (MuJoCo, MUJOCO_GL=egl) and FFmpeg libraries (installed when
#      run as root, printed otherwise);
#   2. a Python 3.12 virtual environment in .venv (VENV=... to change) with the pinned requirements
#      (requirements/lock.txt) installed by uv;
#   3. the lerobot_ros package itself and its LeRobot plugins (editable, so the checkout is what runs);
#   4. the lerobot_ros_msgs interface package, built by its own PEP 517 backend (rosidl + CMake) as a wheel.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
EXTRAS="${LEROBOT_ROS_EXTRAS:-}"
STAMP="$VENV/.lerobot_ros_setup"
KNOWN_EXTRAS=(libero docs lint dist)   # each one is requirements/NAME.txt, installed with --no-deps over lock.txt
UV_VERSION="0.13.9"
# uv ships its own CA roots; behind a TLS-inspecting proxy it needs the system bundle.
if [ -z "${SSL_CERT_FILE:-}" ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  export SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
fi
APT_PACKAGES=(libegl1 libegl-mesa0 libgl1-mesa-dri libgbm1 libopengl0 libglib2.0-0 libosmesa6
              libavcodec59 libavformat59 libavutil57 libswscale6 libswresample4 libavdevice59 libavfilter8)
# headless browser: tests/e2e/test_viewer_browser.py screenshots the rerun web viewer (lerobot-ros view)
APT_PACKAGES+=(chromium)

# One set-up at a time (parallel shells or test sessions may call it).
mkdir -p "$(dirname "$VENV")"
exec 9>"$(dirname "$VENV")/.lerobot_ros_setup.lock"
flock 9

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

fingerprint() {
  # Everything that, when changed, requires a new install or a rebuild of the interfaces.
  (cd "$ROOT" && cat requirements/lock.txt scripts/setup.sh src/lerobot_ros/setup.py src/lerobot_ros/setup.cfg \
     src/lerobot_ros/pyproject.toml src/lerobot_ros/package.xml plugins/*/pyproject.toml \
     && find msgs -type f ! -path '*/__pycache__/*' | sort | xargs cat && find launch config -type f | sort) \
    | sha256sum | cut -d' ' -f1
}
extra_stamp() { echo "$VENV/.lerobot_ros_extra_$1"; }
extra_fingerprint() { (cd "$ROOT" && cat requirements/lock.txt "requirements/$1.txt") | sha256sum | cut -d' ' -f1; }

# Extras to keep in sync: the ones asked for now plus the ones installed before.
WANT_EXTRAS=()
for e in ${EXTRAS//,/ }; do
  [[ " ${KNOWN_EXTRAS[*]} " == *" $e "* ]] || die "unknown extra '$e' in LEROBOT_ROS_EXTRAS (known: ${KNOWN_EXTRAS[*]})"
  [[ " ${WANT_EXTRAS[*]} " == *" $e "* ]] || WANT_EXTRAS+=("$e")
done
for e in "${KNOWN_EXTRAS[@]}"; do
  [ -f "$(extra_stamp "$e")" ] && [[ " ${WANT_EXTRAS[*]} " != *" $e "* ]] && WANT_EXTRAS+=("$e")
done
STALE_EXTRAS=()
for e in "${WANT_EXTRAS[@]}"; do
  [ -f "$(extra_stamp "$e")" ] && [ "$(cat "$(extra_stamp "$e")")" = "$(extra_fingerprint "$e")" ] || STALE_EXTRAS+=("$e")
done

# ---------------------------------------------------------------------------------------------
# 1. System packages
missing_apt=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_apt+=("$p")
done
if [ ${#missing_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing Debian packages: ${missing_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing_apt[@]}" >/dev/null
  else
    log "warning: missing system packages (offscreen rendering / video decoding may fail). Install with:"
    log "  sudo apt-get install -y --no-install-recommends ${missing_apt[*]}"
  fi
fi

# Quick exit when nothing changed since the last successful set-up.
# The fingerprint of the files as they are now: written to the stamp at the end, so an edit made while
# this run installs (setup.py, a requirement) is not marked done by it.
BASE_OK=false
FINGERPRINT="$(fingerprint)"
[ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$FINGERPRINT" ] && [ -x "$VENV/bin/python" ] && BASE_OK=true
if $BASE_OK && [ ${#STALE_EXTRAS[@]} -eq 0 ]; then
  log "up to date ($VENV${WANT_EXTRAS[*]:+; extras: ${WANT_EXTRAS[*]}})"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# 2. Python 3.12 and uv
find_python312() {
  local c
  for c in "${PYTHON312:-}" "$(command -v python3.12 || true)" "$HOME"/.pyenv/versions/3.12*/bin/python3.12 \
           /usr/bin/python3.12 /usr/local/bin/python3.12; do
    [ -n "$c" ] && [ -x "$c" ] && "$c" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null && { echo "$c"; return; }
  done
  return 1
}
PY312="$(find_python312)" || die "Python 3.12 not found: install it (e.g. apt-get install python3.12 or pyenv install 3.12) or set PYTHON312=/path/to/python3.12"

UV="$(command -v uv || true)"
if [ -z "$UV" ]; then
  if [ ! -x "$ROOT/.tools/bin/uv" ]; then
    log "bootstrapping uv $UV_VERSION into .tools/"
    "$PY312" -m venv "$ROOT/.tools"
    "$ROOT/.tools/bin/python" -m pip install -q --disable-pip-version-check "uv==$UV_VERSION" 2>&1 | grep -v "^WARNING: Location" || true
    [ -x "$ROOT/.tools/bin/uv" ] || die "could not install uv with pip"
  fi
  UV="$ROOT/.tools/bin/uv"
fi

if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV with $PY312"
  "$UV" venv -q -p "$PY312" "$VENV"
fi
if ! $BASE_OK; then
  log "installing pinned requirements (requirements/lock.txt)"
  # --compile-bytecode: this environment sets PYTHONDONTWRITEBYTECODE, so without it every process (each
  # node of a test or a launch) compiles torch and LeRobot from source again (~13 s more per LeRobot import)
  "$UV" pip install -q -p "$VENV/bin/python" --compile-bytecode -r "$ROOT/requirements/lock.txt"
  rm -f "$STAMP"
fi
for e in "${STALE_EXTRAS[@]}"; do
  # requirements/$e.txt is a lock compiled over lock.txt (see its header). Install only its own packages,
  # exactly (--no-deps: nothing it excludes); lock.txt's pins win for the shared ones.
  log "installing the $e extra (requirements/$e.txt)"
  EXTRA_FINGERPRINT="$(extra_fingerprint "$e")"
  ONLY="$ROOT/build/extra-$e.txt"
  mkdir -p "$ROOT/build"
  "$VENV/bin/python" - "$ROOT/requirements/lock.txt" "$ROOT/requirements/$e.txt" > "$ONLY" <<'PY'
import re, sys
def pins(path):
    out = {}
    for line in open(path):
        m = re.match(r"([A-Za-z0-9._-]+)==", line)
        if m:
            out[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = line.split("#")[0].strip()
    return out
base, extra = pins(sys.argv[1]), pins(sys.argv[2])
stale = [f"{extra[n]} (lock.txt: {base[n]})" for n in extra if n in base and extra[n] != base[n]]
if stale:
    print(f"[setup] warning: {sys.argv[2]} is out of date with lock.txt ({', '.join(stale[:3])}"
          f"{' ...' if len(stale) > 3 else ''}); recompile it with the command in its header", file=sys.stderr)
print("\n".join(v for n, v in extra.items() if n not in base))
PY
  "$UV" pip install -q -p "$VENV/bin/python" --no-deps --compile-bytecode -r "$ONLY"
  echo "$EXTRA_FINGERPRINT" > "$(extra_stamp "$e")"
done
if $BASE_OK; then
  log "done: $VENV"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# 3. lerobot_ros itself
log "installing lerobot_ros (editable)"
"$UV" pip install -q -p "$VENV/bin/python" --no-deps -e "$ROOT/src/lerobot_ros"
# the LeRobot plugins (plugins/*: distributions LeRobot's CLIs discover by name), editable too
for plugin in "$ROOT"/plugins/lerobot_*/; do
  "$UV" pip install -q -p "$VENV/bin/python" --no-deps -e "$plugin"
done
# An editable install skips data_files: lay out the ament index, share/ and lib/ entries that a colcon
# install would have, pointing at the checkout, so `find-pkg-share lerobot_ros` and
# lib/lerobot_ros/<executable> resolve the same way as on a robot. share/ holds real folders with one
# link per file: `ros2 launch lerobot_ros FILE` finds FILE by os.walk, which does not enter folder links.
link_files() {  # link_files SRC DST: DST mirrors SRC's folders, one link per file; stale links go
  local src="$1" dst="$2" rel
  if [ -L "$dst" ]; then rm -f "$dst"; fi  # the folder link of older set-ups
  mkdir -p "$dst"
  find "$dst" -type l ! -exec test -e {} \; -delete
  while IFS= read -r -d '' rel; do mkdir -p "$dst/$rel"; done < <(cd "$src" && find . -mindepth 1 -type d -print0)
  while IFS= read -r -d '' rel; do ln -sfn "$src/${rel#./}" "$dst/${rel#./}"; done < <(cd "$src" && find . -type f -print0)
}
mkdir -p "$VENV/share/ament_index/resource_index/packages" "$VENV/share/lerobot_ros" "$VENV/lib/lerobot_ros"
touch "$VENV/share/ament_index/resource_index/packages/lerobot_ros"
ln -sfn "$ROOT/src/lerobot_ros/package.xml" "$VENV/share/lerobot_ros/package.xml"
link_files "$ROOT/launch" "$VENV/share/lerobot_ros/launch"
link_files "$ROOT/config" "$VENV/share/lerobot_ros/config"
"$VENV/bin/python" - "$VENV" <<'PY'
import os, sys
from importlib.metadata import distribution
venv = sys.argv[1]
lib = os.path.join(venv, "lib", "lerobot_ros")
for ep in distribution("lerobot_ros").entry_points.select(group="console_scripts"):
    link = os.path.join(lib, ep.name)
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join(venv, "bin", ep.name), link)
PY

# ---------------------------------------------------------------------------------------------
# 4. lerobot_ros_msgs: its own PEP 517 backend (msgs/lerobot_ros_msgs/build_backend) generates the interfaces
#    with rosidl and CMake and installs them as a wheel laid out like the ROS wheels. No build isolation: the
#    build tools are in lock.txt, so the build uses the very versions the venv runs.
log "building lerobot_ros_msgs (rosidl + CMake, as a wheel)"
mkdir -p "$ROOT/build"
"$UV" pip install -p "$VENV/bin/python" --no-deps --no-build-isolation --reinstall-package lerobot-ros-msgs \
  "$ROOT/msgs/lerobot_ros_msgs" > "$ROOT/build/msgs.log" 2>&1 \
  || { tail -40 "$ROOT/build/msgs.log"; die "building lerobot_ros_msgs failed (log: build/msgs.log)"; }

"$VENV/bin/python" -c "import rclpy, lerobot_ros, lerobot_ros_msgs.msg, lerobot_ros_msgs.srv" \
  || die "the venv does not import rclpy, lerobot_ros and lerobot_ros_msgs"
echo "$FINGERPRINT" > "$STAMP"
log "done: $VENV"
