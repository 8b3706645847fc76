"""Screenshots of the served web viewer in headless Chromium, over the DevTools protocol (tests, README).

The rerun web viewer is wasm + WebGL: Chromium without a GPU draws it with SwiftShader
(`--use-angle=swiftshader --enable-unsafe-swiftshader`). `--screenshot` with a virtual time budget fires
before the wasm bundle has even compiled, so this drives a real page for real seconds instead: open the URL,
then capture until `ready(png_bytes)` says the views are drawn or the time is up. Chromium is Debian's
`chromium` (scripts/setup.sh installs it); the DevTools client is aiohttp's websocket.
"""

from __future__ import annotations

import asyncio
import base64
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lerobot_ros.conventions.errors import UserError
from lerobot_ros.processes.supervisor import ChildProcess

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
    "--hide-scrollbars",
    "--mute-audio",
)


class BrowserError(UserError, RuntimeError):
    pass


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _devtools_port(profile: str, proc: subprocess.Popen, timeout_s: float) -> int:
    path = Path(profile) / "DevToolsActivePort"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise BrowserError(f"chromium exited with status {proc.returncode} before DevTools came up")
        if path.is_file():
            lines = path.read_text().split()
            if lines:
                return int(lines[0])
        time.sleep(0.1)
    raise BrowserError(f"chromium's DevTools did not come up in {timeout_s:.0f} s")


async def _capture(
    port: int,
    url: str,
    out: Path,
    width: int,
    height: int,
    timeout_s: float,
    ready: Callable[[bytes], bool] | None,
    interval_s: float,
) -> tuple[bool, float]:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}/json/list") as r:
            pages = [t for t in await r.json() if t.get("type") == "page"]
        if not pages:
            raise BrowserError("chromium has no page target")
        async with session.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0) as ws:
            counter = 0

            async def call(method: str, **params):
                nonlocal counter
                counter += 1
                mine = counter
                await ws.send_json({"id": mine, "method": method, "params": params})
                while True:
                    msg = await ws.receive_json()
                    if msg.get("id") == mine:
                        if "error" in msg:
                            raise BrowserError(f"{method}: {msg['error'].get('message')}")
                        return msg.get("result", {})

            await call(
                "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False
            )
            await call("Page.navigate", url=url)
            started = time.monotonic()
            ok = False
            while True:
                await asyncio.sleep(interval_s)
                png = base64.b64decode((await call("Page.captureScreenshot", format="png"))["data"])
                out.write_bytes(png)
                ok = ready is None or ready(png)
                elapsed = time.monotonic() - started
                if ok or elapsed > timeout_s:
                    return ok, elapsed


def screenshot(
    url: str,
    out,
    width: int = 1600,
    height: int = 900,
    timeout_s: float = 120.0,
    ready: Callable[[bytes], bool] | None = None,
    interval_s: float = 5.0,
) -> tuple[bool, float]:
    """Open `url` in headless Chromium and write PNG screenshots to `out` every `interval_s` until
    `ready(png)` is true (returns (True, seconds)) or `timeout_s` passed (returns (False, seconds); `out`
    holds the last one)."""
    binary = chromium()
    if binary is None:
        raise BrowserError("chromium is not installed (scripts/setup.sh installs Debian's chromium when run as root)")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="lerobot_ros_chromium_")
    browser = ChildProcess(
        [
            binary,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        label="chromium",
        log=Path(profile) / "chromium.log",
        sigterm_timeout=10.0,
    ).start()
    try:
        assert browser.proc is not None  # start() spawned it (or raised)
        port = _devtools_port(profile, browser.proc, 60.0)
        return asyncio.run(_capture(port, url, out, width, height, timeout_s, ready, interval_s))
    finally:
        browser.stop()
        shutil.rmtree(profile, ignore_errors=True)
