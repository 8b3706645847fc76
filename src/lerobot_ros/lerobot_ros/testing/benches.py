"""Run every `bench/*.py` with its default arguments, one after the other, and print one table of their figures.

Each benchmark prints, as its last line, one JSON object with `bench`, `figure`, `goal`, `goal_op` and
`meets_goal`; a benchmark that crashes, times out or prints no such line counts as failed. Exit status 0 only
when every benchmark ran and met its goal. The JSON lines of all of them go to `--out` (default
`outputs/bench/results.jsonl`) so two runs can be compared.

    .venv/bin/python -m lerobot_ros.testing.benches                  # what `make bench` runs
    .venv/bin/python -m lerobot_ros.testing.benches codecs plugin     # some of them
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from lerobot_ros.processes.interrupt import restore_default_sigint

REPO = Path(__file__).resolve().parents[4]
BENCH = REPO / "bench"


def last_json(text: str) -> dict | None:
    """The last line of `text` that is a JSON object with a `figure`, else None."""
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                return None
            return data if isinstance(data, dict) and "figure" in data else None
    return None


def run_one(path: Path, timeout_s: float) -> dict:
    t0 = time.monotonic()
    try:
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout_s, cwd=REPO)
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired:
        output, code = f"timed out after {timeout_s:.0f} s", None
    result = last_json(output) if code == 0 else None
    row = {"bench": path.stem, "seconds": round(time.monotonic() - t0, 1), "exit": code}
    if result is None:
        tail = [ln for ln in output.strip().splitlines() if ln.strip()][-1:] or ["no output"]
        return {**row, "ok": False, "why": tail[0][:200]}
    return {**row, **result, "bench": path.stem, "ok": bool(result.get("meets_goal"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (file names without .py; default all)")
    parser.add_argument("--timeout_s", type=float, default=1800.0, help="per benchmark")
    parser.add_argument("--out", default=str(REPO / "outputs" / "bench" / "results.jsonl"))
    args = parser.parse_args(argv)
    # Started in a script's background (`make bench &`), this process inherits SIGINT ignored, and so would every
    # benchmark and node it starts: their Ctrl-C stops would then be ignored and end in timeouts or SIGKILL.
    restore_default_sigint()
    paths = sorted(BENCH.glob("*.py"))
    if args.names:
        unknown = set(args.names) - {p.stem for p in paths}
        if unknown:
            parser.error(f"no benchmark {', '.join(sorted(unknown))}; there are {', '.join(p.stem for p in paths)}")
        paths = [p for p in paths if p.stem in args.names]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with out.open("a") as log:
        for path in paths:
            print(f"== {path.name}", flush=True)
            row = run_one(path, args.timeout_s)
            rows.append(row)
            log.write(json.dumps({"time": time.time(), **row}) + "\n")
            status = "ok" if row["ok"] else "FAILED"
            print(
                f"   {status} in {row['seconds']:.0f} s: "
                + (f"figure {row['figure']}" if "figure" in row else row["why"])
            )
    print(f"\n{'bench':16s} {'figure':>10s} {'goal':>10s} {'result':>8s} {'seconds':>8s}")
    for row in rows:
        goal = f"{row['goal_op']} {row['goal']}" if "goal" in row else "-"
        figure = f"{row['figure']:.4g}" if isinstance(row.get("figure"), (int, float)) else "-"
        print(
            f"{row['bench']:16s} {figure:>10s} {goal:>10s} {'ok' if row['ok'] else 'FAILED':>8s} {row['seconds']:8.0f}"
        )
    failed = [r["bench"] for r in rows if not r["ok"]]
    print(json.dumps({"benches": len(rows), "failed": failed, "results": str(out)}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
