"""The conversion QA report: JSON document and the readable terminal table."""

from __future__ import annotations

import json
from pathlib import Path


def build_report(contract_path: str, entries: list, dataset: str | None, interrupted: bool) -> dict:
    """The JSON report of a run from its BagEntry records (lerobot_ros.dataset.convert)."""
    from lerobot_ros.dataset.convert import BagStatus

    episodes = [e for b in entries for e in b.written]
    return {
        "contract": contract_path,
        "dataset": dataset,
        "interrupted": interrupted,
        "summary": {
            "bags": len(entries),
            "bags_ok": sum(b.status is BagStatus.OK for b in entries),
            "bags_failed": sum(b.status is BagStatus.FAILED for b in entries),
            "episodes_written": len(episodes),
            "frames_written": sum(e.frames for e in episodes),
            "warnings": sum(len(e.warnings) for b in entries for e in b.episodes),
        },
        "bags": [b.to_dict() for b in entries],
    }


def merge_reports(reports: list[dict], dataset: str | None) -> dict:
    """One report for a dataset merged from parts (shards): bags in part order, dataset_episode numbers
    shifted by the episodes of the parts before, summaries added up."""
    bags, offset = [], 0
    for report in reports:
        written = 0
        for bag in report["bags"]:
            bag = json.loads(json.dumps(bag))
            for ep in bag["episodes"]:
                if ep.get("written") and ep.get("dataset_episode") is not None:
                    ep["dataset_episode"] += offset
                    written += 1
            bags.append(bag)
        offset += written
    keys = ("bags", "bags_ok", "bags_failed", "episodes_written", "frames_written", "warnings")
    return {
        "contract": reports[0]["contract"] if reports else None,
        "dataset": dataset,
        "interrupted": any(r.get("interrupted") for r in reports),
        "summary": {k: sum(r["summary"][k] for r in reports) for k in keys},
        "parts": [{"dataset": r.get("dataset"), "shard": r.get("shard"), "summary": r["summary"]} for r in reports],
        "bags": bags,
    }


def write_report(report: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str))


def format_table(report: dict) -> str:
    """One row per written/skipped episode and stream, then one line per problem."""
    head = f"{'bag':<22} {'ep':>3} {'frames':>6}  {'stream':<26} {'Hz':>6} {'gaps':>4} {'maxgap':>7} {'held':>5} {'interp':>6} {'stale':>5} {'maxstale':>8} {'dropped':>7}"
    lines = [head, "-" * len(head)]
    for bag in report["bags"]:
        name = Path(bag["bag"]).name[-22:]
        for ep in bag["episodes"]:
            label = ep.get("dataset_episode", "-") if ep.get("written") else "x"
            for sname, s in ep["streams"].items():
                lines.append(
                    f"{name:<22} {label!s:>3} {ep['frames']:>6}  {sname[-26:]:<26} {s['rate_hz']:>6.1f} {s['gaps']:>4} "
                    f"{s['max_gap_ms']:>6.0f}ms {s['held_frames']:>5} {s['interpolated_frames']:>6} {s['stale_frames']:>5} "
                    f"{s['max_staleness_ms']:>6.0f}ms {s['dropped_out_of_order']:>7}"
                )
    problems = []
    for bag in report["bags"]:
        if bag["error"]:
            problems.append(f"error: {bag['error']}")
        for note in bag.get("notes", []):
            problems.append(f"note: {Path(bag['bag']).name}: {note}")
        for ep in bag["episodes"]:
            for w in ep["warnings"]:
                problems.append(f"warning: {Path(bag['bag']).name} episode {ep['index_in_bag']}: {w}")
            if ep.get("skipped"):
                problems.append(f"skipped: {Path(bag['bag']).name} episode {ep['index_in_bag']}: {ep['skipped']}")
    s = report["summary"]
    lines.append("")
    lines.extend(problems)
    lines.append(
        f"{s['episodes_written']} episode(s), {s['frames_written']} frame(s) written from {s['bags_ok']}/{s['bags']} bag(s)"
        + (f"; {s['bags_failed']} failed" if s["bags_failed"] else "")
        + (" (interrupted)" if report["interrupted"] else "")
    )
    return "\n".join(lines)
