"""Run a test tier again and again under CPU load and list every test that failed even once.

DDS discovery, executor threads and child processes make timing the usual cause of a test that fails now and
then; a loaded 2-core machine (like CI's) shows it far more often than an idle one. This runs pytest on the
given paths `--passes` times, each pass with one busy-loop process per core beside it (`--load 0` for none),
reads each pass's JUnit XML, and prints which tests failed in how many passes (a table, then one JSON line).
Exit status 0 only when no test failed in any pass.

    .venv/bin/python -m lerobot_ros.testing.flake_hunt                       # tests/integration, 5 passes
    .venv/bin/python -m lerobot_ros.testing.flake_hunt --passes 3 tests/e2e/test_lerobot_plugins.py
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path


def _spin(parent: int) -> None:
    """Burn one core until the hunt that started it is gone (a hunt killed from outside leaves no busy loop)."""
    while os.getppid() == parent:
        for _ in range(1_000_000):
            pass


def failures(junit: Path) -> list[str]:
    """Test ids (file::name) that failed or errored in one JUnit XML report."""
    if not junit.is_file():
        return ["<pytest wrote no report>"]
    out = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            path = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
            out.append(f"{path}::{case.get('name')}")
    return out


def hunt(paths: list[str], passes: int, load: int, extra: list[str]) -> dict:
    """Run the passes; {"passes", "load", "failed": {test: passes it failed in}, "seconds": [per pass]}."""
    failed: Counter[str] = Counter()
    seconds: list[float] = []
    with tempfile.TemporaryDirectory(prefix="flake_hunt_") as folder:
        for n in range(passes):
            spinners = [
                mp.get_context("spawn").Process(target=_spin, args=(os.getpid(),), daemon=True) for _ in range(load)
            ]
            for spinner in spinners:
                spinner.start()
            junit = Path(folder) / f"pass{n}.xml"
            t0 = time.monotonic()
            try:
                subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
                    + extra
                    + paths,
                    check=False,
                )
            finally:
                for spinner in spinners:
                    spinner.terminate()
                    spinner.join(timeout=5)
            seconds.append(round(time.monotonic() - t0, 1))
            this_pass = sorted(set(failures(junit)))
            for test in this_pass:
                failed[test] += 1
            print(
                f"[flake_hunt] pass {n + 1}/{passes}: {seconds[-1]:.0f} s, failed in this pass: "
                f"{', '.join(this_pass) or 'none'}; failed so far: {len(failed)}",
                flush=True,
            )
    return {"passes": passes, "load": load, "failed": dict(failed), "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "paths", nargs="*", default=["tests/integration"], help="test paths (default tests/integration)"
    )
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument(
        "--load", type=int, default=os.cpu_count() or 1, help="busy-loop processes (default: one per core)"
    )
    parser.add_argument("--pytest-args", default="", help="more pytest arguments, space separated")
    args = parser.parse_args(argv)
    result = hunt(args.paths, args.passes, args.load, args.pytest_args.split())
    print(f"\n{'test':90s} failed in")
    for test, count in sorted(result["failed"].items(), key=lambda kv: -kv[1]):
        print(f"{test:90s} {count}/{result['passes']}")
    if not result["failed"]:
        print(f"no test failed in {result['passes']} passes with {result['load']} busy-loop process(es)")
    print(json.dumps(result))
    return 0 if not result["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
