"""Soak: the deployed shape for a long run, sampled as it goes and checked at the end.

Set-up, each in its own process, in network mode loopback as the launch files run them: the SO-101 twin
(sim_bridge_node, realtime 30 Hz, front + wrist cameras, episodes marked so it runs on like a real arm), the
policy node acting on it with a small ACT (random weights, saved and loaded like a trained one; async
inference), the episode recorder writing back-to-back --episode-s episodes, and the viewer node (rerun, web)
attached to the same topics, its buffer capped as on a robot computer (--viewer-memory-limit, 32 MiB: rerun's
server drops its oldest data beyond it, so the viewer's memory levels off once the buffer is full, here within
about two minutes; a bigger cap only moves that point later).

Every --sample-s: each process's RSS (and its heap part, RssAnon: where a leak grows, apart from library pages
and DDS shared memory), CPU seconds, open file descriptors and threads (psutil), and the policy node's tick
counters from /diagnostics; all samples go to samples.jsonl in --workdir. At the end, every recorded episode:
messages lost (a header-stamped stream of the twin has one message per 1/30 s of sim time: stamps missing between the first and the last are
lost, whatever lost them) and the recorder's QA; then the converter makes one dataset of them all.

Goals (the issue's): 0 messages lost; every episode converts; RSS growth after the warm-up (5 min, or the first
half of a shorter run) <= 2 % per hour per process (the slope of a least-squares line, over the mean); no fd or
thread growth after the warm-up; 0 policy ticks dropped (gated, dry, error) after the warm-up.
figure = the largest RSS growth in %/h; meets_goal needs all of them.

    .venv/bin/python bench/soak.py                       # 10 min, 1-minute episodes
    .venv/bin/python bench/soak.py --minutes 60          # the hour the note reports

Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ROS_DOMAIN_ID", str(30 + os.getpid() % 60))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np  # noqa: E402

from lerobot_ros.testing import netns  # noqa: E402
from lerobot_ros.testing.twin import BIN, twin_command, twin_contract  # noqa: E402

GOAL_GROWTH_PCT_H = 2.0
FPS = 30.0
STAMPED = ("/sim/joint_states", "/sim/front/image_raw", "/sim/wrist/image_raw")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node(executable: str, namespace: str, **params) -> list[str]:
    cmd = [str(BIN / executable), "--ros-args", "-r", f"__ns:={namespace}"]
    for name, value in params.items():
        cmd += ["-p", f"{name}:={value}"]
    return cmd


def start(cmd: list[str], log: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)


def stop(proc: subprocess.Popen) -> int | None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


class PolicyTicks:
    """The policy node's newest tick counters from /diagnostics (a private rclpy context in a thread)."""

    def __init__(self):
        from diagnostic_msgs.msg import DiagnosticArray

        from lerobot_ros.ros.qos import RELIABLE_QOS
        from lerobot_ros.ros.runtime import RosRuntime

        self.latest: dict[str, str] = {}
        self.runtime = RosRuntime().start()
        n = self.runtime.create_node("soak_probe")
        n.create_subscription(DiagnosticArray, "/diagnostics", self._on, RELIABLE_QOS)

    def _on(self, msg) -> None:
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if "dropped_ticks" in values and "ticks" in values:
                self.latest = values

    def counts(self) -> dict[str, int]:
        keys = ("ticks", "dropped_ticks", "queue_dry_ticks")
        return {k: int(self.latest[k]) for k in keys if self.latest.get(k, "").isdigit()}

    def close(self) -> None:
        self.runtime.close()


def sample(procs: dict[str, subprocess.Popen]) -> dict[str, dict]:
    import psutil

    out = {}
    for name, proc in procs.items():
        try:
            p = psutil.Process(proc.pid)
            with p.oneshot():
                cpu = p.cpu_times()
                out[name] = {
                    "rss_mb": p.memory_info().rss / 2**20,
                    "cpu_s": cpu.user + cpu.system,
                    "fds": p.num_fds(),
                    "threads": p.num_threads(),
                    **rss_parts(proc.pid),
                }
        except psutil.NoSuchProcess:
            out[name] = {}
    return out


def rss_parts(pid: int) -> dict[str, float]:
    """RSS split as the kernel counts it (/proc/PID/status): anon (heap: where a leak grows), file (library code
    and data paged in on first use) and shmem (DDS shared-memory segments), in MB."""
    parts = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("RssAnon", "RssFile", "RssShmem"):
                    parts[key[3:].lower() + "_mb"] = int(value.split()[0]) / 1024  # kB
    except OSError:
        pass
    return parts


def mb_per_hour(t_s: np.ndarray, mb: np.ndarray) -> float:
    """Least-squares slope of a memory curve, in MB per hour (nan for too few samples)."""
    if len(t_s) < 3 or t_s[-1] - t_s[0] <= 0:
        return float("nan")
    return float(np.polyfit(t_s - t_s[0], mb, 1)[0] * 3600.0)


def growth_pct_per_hour(t_s: np.ndarray, rss: np.ndarray) -> float:
    """Least-squares slope of RSS over time, in % of the mean RSS per hour."""
    return mb_per_hour(t_s, rss) / float(rss.mean()) * 100.0


def lost_in_bag(bag: Path) -> dict[str, dict]:
    """Per header-stamped stream of the twin: messages, and stamps missing between the first and the last."""
    from rosbags.highlevel import AnyReader

    stamps: dict[str, list[int]] = {t: [] for t in STAMPED}
    with AnyReader([bag]) as reader:
        conns = [c for c in reader.connections if c.topic in stamps]
        for conn, _t, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            stamps[conn.topic].append(msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec)
    out = {}
    period = 1e9 / FPS
    for topic, values in stamps.items():
        if not values:
            out[topic] = {"messages": 0, "lost": None}
            continue
        v = np.unique(np.asarray(values, dtype=np.int64))
        expected = int(round((v[-1] - v[0]) / period)) + 1
        out[topic] = {"messages": len(values), "lost": max(0, expected - len(v)), "duplicates": len(values) - len(v)}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long the deployment runs")
    parser.add_argument("--episode-s", type=float, default=60.0, help="length of each recorded episode")
    parser.add_argument("--sample-s", type=float, default=5.0, help="sampling period of the processes")
    parser.add_argument(
        "--viewer-memory-limit",
        default="32MiB",
        help="the viewer's rerun buffer (viewer_node memory_limit), as the docs advise on a robot computer: full "
        "within ~2 min here, then flat; its own default (25%% of RAM) keeps it growing for hours by design",
    )
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--height", type=int, default=96)
    parser.add_argument("--workdir", help="keep the logs, bags and dataset here (default: a temporary folder)")
    args = parser.parse_args(argv)
    warmup_s = min(300.0, args.minutes * 60.0 / 2.0)
    episodes = max(1, int(args.minutes * 60.0 // args.episode_s))

    from lerobot_ros.testing.policies import make_policy_folder

    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    from lerobot_ros.processes.interrupt import restore_default_sigint

    restore_default_sigint()  # an hour-long soak runs as `nohup ... &`: the nodes must still stop cleanly on SIGINT
    with tempfile.TemporaryDirectory(prefix="bench_soak_") as tmp_name:
        tmp = Path(args.workdir or tmp_name)
        tmp.mkdir(parents=True, exist_ok=True)
        contract = twin_contract(tmp / "contract.yaml", width=args.width, height=args.height)
        hw = (args.height, args.width)
        policy_dir = make_policy_folder(
            tmp / "act", "act", cameras={"front": hw, "wrist": hw}, chunk_size=20, n_action_steps=20
        )
        out = tmp / "recordings"
        env = netns.loopback_env()
        commands = {
            "twin": twin_command(args.width, args.height, ("front", "wrist"), episode_length=100_000),
            "policy": node(
                "policy_node",
                "/",
                **{
                    "policy.path": policy_dir,
                    "contract": contract,
                    "policy.device": "cpu",
                    "async_inference": "true",
                    "use_sim_time": "true",
                },
            ),
            "recorder": node(
                "episode_recorder",
                "/recorder",
                contract=contract,
                output_dir=out,
                use_sim_time="true",
                **{
                    "dataset.episode_time_s": args.episode_s,
                    "dataset.reset_time_s": 0.0,
                    "dataset.num_episodes": episodes,
                },
            ),
            "viewer": node(
                "viewer_node",
                "/",
                contract=contract,
                viewer="web",
                memory_limit=args.viewer_memory_limit,
                web_port=free_port(),
                grpc_port=free_port(),
                use_sim_time="true",
            ),
        }
        procs = {name: start(cmd, tmp / f"{name}.log", env) for name, cmd in commands.items()}
        ticks = PolicyTicks()
        samples: list[tuple[float, dict, dict]] = []
        t0 = time.monotonic()
        deadline = t0 + args.minutes * 60.0 + 120.0  # the last episode closes after its time
        try:
            while time.monotonic() < deadline and procs["recorder"].poll() is None:
                samples.append((time.monotonic() - t0, sample(procs), ticks.counts()))
                dead = [n for n, p in procs.items() if n != "recorder" and p.poll() is not None]
                if dead:
                    raise RuntimeError(f"{dead} exited early; logs in {tmp}")
                time.sleep(args.sample_s)
            recorder_status = procs["recorder"].poll()
        finally:
            ticks.close()
            codes = {name: stop(p) for name, p in procs.items()}
        with (tmp / "samples.jsonl").open("w") as f:  # every sample, for a look at the curves (--workdir keeps it)
            for t_s, procs_sample, tick_counts in samples:
                f.write(json.dumps({"t_s": round(t_s, 2), "processes": procs_sample, "policy": tick_counts}) + "\n")
        bags = sorted(p for p in out.glob("episode_*") if p.is_dir())
        per_episode = {bag.name: lost_in_bag(bag) for bag in bags}
        dataset = tmp / "dataset"
        converted = subprocess.run(
            [str(BIN / "lerobot-ros"), "convert", str(out), f"--contract={contract}", f"--dataset.root={dataset}"],
            capture_output=True,
            text=True,
            env=env,
            timeout=3600,
        )
        converted_episodes = 0
        if converted.returncode == 0:
            info = json.loads((dataset / "meta" / "info.json").read_text())
            converted_episodes = int(info["total_episodes"])

    # ---- figures -------------------------------------------------------------------------------------
    t = np.array([s[0] for s in samples])
    late = t >= warmup_s
    table = {}
    for name in commands:
        rows = [s[1].get(name, {}) for s in samples]
        ok = np.array([bool(r) for r in rows]) & late
        if ok.sum() < 3:
            table[name] = {"samples": int(ok.sum())}
            continue
        rss = np.array([r["rss_mb"] for r, k in zip(rows, ok) if k])
        fds = np.array([r["fds"] for r, k in zip(rows, ok) if k])
        threads = np.array([r["threads"] for r, k in zip(rows, ok) if k])
        cpu = np.array([r["cpu_s"] for r, k in zip(rows, ok) if k])
        anon = np.array([r.get("anon_mb", np.nan) for r, k in zip(rows, ok) if k])
        tt = t[ok]
        table[name] = {
            "rss_mb_first": round(float(rss[0]), 1),
            "rss_mb_last": round(float(rss[-1]), 1),
            "rss_growth_pct_per_h": round(growth_pct_per_hour(tt, rss), 3),
            # the heap alone, in MB/h: where a leak shows (file-backed and DDS shared-memory pages are bounded)
            "anon_mb_first": round(float(anon[0]), 1),
            "anon_mb_last": round(float(anon[-1]), 1),
            "anon_growth_mb_per_h": round(mb_per_hour(tt, anon), 2),
            "fds_first": int(fds[0]),
            "fds_max": int(fds.max()),
            "threads_first": int(threads[0]),
            "threads_max": int(threads.max()),
            "cpu_share": round(float((cpu[-1] - cpu[0]) / (tt[-1] - tt[0])), 3),
        }
    tick_rows = [s[2] for s in samples if s[2]]
    tick_late = [c for s, c in zip(samples, [s[2] for s in samples]) if c and s[0] >= warmup_s]
    dropped_after_warmup = (
        tick_late[-1].get("dropped_ticks", 0) - tick_late[0].get("dropped_ticks", 0) if len(tick_late) >= 2 else None
    )
    ticks_after_warmup = tick_late[-1]["ticks"] - tick_late[0]["ticks"] if len(tick_late) >= 2 else None
    lost = sum(v["lost"] or 0 for ep in per_episode.values() for v in ep.values())
    empty = [
        f"{ep} {topic}" for ep, streams in per_episode.items() for topic, v in streams.items() if not v["messages"]
    ]
    growth = [v["rss_growth_pct_per_h"] for v in table.values() if "rss_growth_pct_per_h" in v]
    figure = max(growth) if growth else float("nan")
    fd_growth = max((v["fds_max"] - v["fds_first"] for v in table.values() if "fds_max" in v), default=0)
    thread_growth = max(
        (v["threads_max"] - v["threads_first"] for v in table.values() if "threads_max" in v), default=0
    )

    print(
        f"soak: {args.minutes:g} min, {len(bags)} episodes of {args.episode_s:g} s, warm-up {warmup_s:.0f} s, "
        f"{len(samples)} samples; exit codes {codes} (recorder finished by itself: {recorder_status == 0})"
    )
    print(
        f"{'process':10}{'RSS MB first':>13}{'last':>8}{'growth %/h':>12}{'heap MB':>14}{'MB/h':>7}{'fds':>9}"
        f"{'threads':>10}{'CPU share':>11}"
    )
    for name, v in table.items():
        if "rss_mb_first" not in v:
            print(f"{name:10}  (too few samples after the warm-up)")
            continue
        print(
            f"{name:10}{v['rss_mb_first']:>13.1f}{v['rss_mb_last']:>8.1f}{v['rss_growth_pct_per_h']:>12.2f}"
            f"{v['anon_mb_first']:>7.1f}->{v['anon_mb_last']:<6.1f}{v['anon_growth_mb_per_h']:>7.2f}"
            f"{v['fds_first']:>5}->{v['fds_max']:<3}{v['threads_first']:>6}->{v['threads_max']:<3}{v['cpu_share']:>11.2f}"
        )
    print(
        f"episodes: {len(bags)} recorded, {converted_episodes} converted (exit {converted.returncode}); "
        f"messages lost in bags: {lost}{'; empty streams: ' + ', '.join(empty) if empty else ''}"
    )
    print(
        f"policy ticks after the warm-up: {ticks_after_warmup}, dropped {dropped_after_warmup} "
        f"(all: {tick_rows[-1] if tick_rows else 'none seen'})"
    )
    if converted.returncode != 0:
        print(converted.stderr[-2000:], file=sys.stderr)
    meets = bool(
        growth
        and figure <= GOAL_GROWTH_PCT_H
        and lost == 0
        and not empty
        and bags
        and converted_episodes == len(bags)
        and fd_growth == 0
        and thread_growth == 0
        and dropped_after_warmup == 0
    )
    print(
        json.dumps(
            {
                "bench": "soak",
                "figure": round(figure, 3),
                "goal": GOAL_GROWTH_PCT_H,
                "goal_op": "<=",
                "meets_goal": meets,
                "minutes": args.minutes,
                "episodes_recorded": len(bags),
                "episodes_converted": converted_episodes,
                "messages_lost": lost,
                "fd_growth": fd_growth,
                "thread_growth": thread_growth,
                "policy_ticks_after_warmup": ticks_after_warmup,
                "policy_dropped_ticks_after_warmup": dropped_after_warmup,
                "processes": table,
                "episodes": per_episode,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
