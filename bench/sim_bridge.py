"""Meta-World env steps/s through sim_bridge_node (lockstep, a trivial policy node on the other side)
against the bare env stepping with the same render settings, in the same run. Goal: >= 0.85 of bare.

The bridge runs in its own process, as deployed; the policy side answers every episode_status with a
zero action, so each step costs one round trip plus the bridge's publishing (images included; with
--images the policy side also receives them). Bare and bridged steps run in alternating blocks so
both see the same load on a shared, noisy machine.

    .venv/bin/python bench/sim_bridge.py                 # 480x480 (LeRobot's size), shadows off, 120 steps
    .venv/bin/python bench/sim_bridge.py --steps 480 --images --shadows
    .venv/bin/python bench/sim_bridge.py --env libero    # LIBERO extra: libero_spatial task 0, 256x256, 30 steps

--env so101 measures the SO-101 twin against the wall clock instead: the bare twin's steps/s with the
package's full meshes and with the simplified render meshes (alternating blocks, 640x480, front camera),
then the bridge in realtime mode (its own process, as deployed, holding its pose) for --seconds: figure =
achieved steps/s / 30, goal >= 1.0. The machine's load average is printed with it (a shared machine
makes this figure noisy).

    .venv/bin/python bench/sim_bridge.py --env so101
    .venv/bin/python bench/sim_bridge.py --env so101 --cameras front wrist   # the two-camera moonshot
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

os.environ.setdefault("MUJOCO_GL", "egl")
os.environ.setdefault("ROS_DOMAIN_ID", str(100 + os.getpid() % 100))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"

import numpy as np  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from lerobot_ros.codecs import numpy_to_float64_multi_array  # noqa: E402
from lerobot_ros.ros.qos import EPISODE_STATUS_QOS, RELIABLE_QOS, SENSOR_QOS  # noqa: E402
from lerobot_ros.ros.runtime import RosRuntime, wait_until  # noqa: E402
from lerobot_ros.sim import RenderSettings  # noqa: E402
from lerobot_ros_msgs.msg import EpisodeStatus  # noqa: E402

GOAL = 0.85


class BareEnv:
    """LeRobot's MetaworldEnv in this process, stepping zero actions (render settings applied the same way)."""

    def __init__(self, task: str, render: RenderSettings):
        from lerobot.envs.metaworld import MetaworldEnv

        from lerobot_ros.sim.metaworld_env import configure_metaworld_render

        self.env = MetaworldEnv(task=task, obs_type="pixels_agent_pos")
        self.viewer = configure_metaworld_render(self.env, render)
        self.env.reset(seed=0)
        self.action = np.zeros(4, dtype=np.float32)
        self.steps = 0

    def run(self, n: int) -> float:
        """Seconds for n steps."""
        self.viewer.make_context_current()
        t0 = time.perf_counter()
        for _ in range(n):
            self.env.step(self.action)
        self.steps += n
        return time.perf_counter() - t0

    def close(self):
        self.env.close()


class BareSim:
    """A lerobot_ros.sim env in this process (LIBERO: LeRobot's LiberoEnv inside), stepping zero actions."""

    def __init__(self, env: str, task: str, task_id: int, render: RenderSettings):
        from lerobot_ros.sim import make_sim

        self.env = make_sim(env, task, render, task_id=task_id)
        self.env.reset(seed=0)
        self.action = np.zeros(self.env.action_dim)

    def run(self, n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            self.env.step(self.action)
        return time.perf_counter() - t0

    def close(self):
        self.env.close()


class BridgeDriver:
    """A trivial policy node: answers each episode_status of the lockstep bridge with a zero action."""

    def __init__(self, runtime: RosRuntime, ns: str, images: bool, action_dim: int = 4, camera: str = "corner2"):
        from sensor_msgs.msg import Image

        self.node = runtime.create_node("bench_policy")
        self.pub = self.node.create_publisher(Float64MultiArray, f"{ns}/commands", RELIABLE_QOS)
        self.zero = numpy_to_float64_multi_array(np.zeros(action_dim))
        self.images = 0
        self.step = -1
        self.remaining = 0
        self.done = threading.Event()
        # latched, as the bridge publishes it: the first status may go out before this subscription matched
        self.node.create_subscription(EpisodeStatus, f"{ns}/episode_status", self.on_status, EPISODE_STATUS_QOS)
        if images:
            # as a policy node subscribes camera streams: sensor-data QoS (best effort, keep last 5)
            self.node.create_subscription(Image, f"{ns}/{camera}/image_raw", self.on_image, SENSOR_QOS)
        wait_until(lambda: self.pub.get_subscription_count() > 0, 300, what="the bridge to start")
        wait_until(lambda: self.step == 0, 300, what="the bridge's first episode")

    def on_image(self, _msg) -> None:
        self.images += 1

    def on_status(self, msg: EpisodeStatus) -> None:
        if msg.episode_index != 0 or msg.step <= self.step:
            return
        self.step = msg.step
        self.remaining -= 1
        if self.remaining > 0:
            self.pub.publish(self.zero)
        else:
            self.done.set()

    def run(self, n: int) -> float:
        """Seconds for n lockstep steps through the bridge."""
        self.done.clear()
        self.remaining = n
        t0 = time.perf_counter()
        self.pub.publish(self.zero)
        if not self.done.wait(60 + 5 * n):
            raise TimeoutError(f"bridge stalled at step {self.step}")
        return time.perf_counter() - t0


def start_bridge(
    ns: str,
    task: str,
    render: RenderSettings,
    dds_default: bool = False,
    env_kind: str = "metaworld",
    task_id: int = 0,
    extra: tuple[str, ...] = (),
) -> subprocess.Popen:
    cmd = [
        os.path.join(os.path.dirname(sys.executable), "sim_bridge_node"),
        "--ros-args",
        "-r",
        f"__ns:={ns}",
        "-p",
        f"env.type:={env_kind}",
        "-p",
        f"env.task:={task}",
        "-p",
        f"env.task_id:={task_id}",
        "-p",
        f"env.observation_width:={render.width}",
        "-p",
        f"env.observation_height:={render.height}",
        "-p",
        f"shadows:={str(render.shadows).lower()}",
        "-p",
        "publish_clock:=false",
        "-p",
        "reset_on_start:=true",
        "-p",
        "seed:=0",
        *extra,
    ]
    env = dict(os.environ)
    if dds_default:
        env["LEROBOT_ROS_DDS_PROFILE"] = "default"  # the bridge keeps Fast DDS's built-in transports
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--env", default="metaworld", choices=("metaworld", "libero", "so101"), help="libero needs the LIBERO extra"
    )
    ap.add_argument("--task", default=None, help="Meta-World task (push-v3) or LIBERO suite (libero_spatial)")
    ap.add_argument("--task-id", type=int, default=0, help="LIBERO task id")
    ap.add_argument(
        "--steps", type=int, default=None, help="measured steps per side (Meta-World 120, <= 480; LIBERO 30)"
    )
    ap.add_argument("--width", type=int, default=None, help="480 (LeRobot's Meta-World size); LIBERO 256")
    ap.add_argument("--height", type=int, default=None)
    ap.add_argument("--shadows", action="store_true")
    ap.add_argument("--block", type=int, default=20, help="steps per alternating block")
    ap.add_argument("--images", action="store_true", help="the policy side also subscribes to the camera")
    ap.add_argument(
        "--dds-default",
        action="store_true",
        help="run the bridge with Fast DDS's default transports instead of its large-data profile",
    )
    ap.add_argument("--cameras", nargs="+", default=["front"], help="so101: cameras to render")
    ap.add_argument("--seconds", type=float, default=12.0, help="so101: realtime bridge measuring window")
    args = ap.parse_args()
    if args.env == "so101":
        return so101_main(args)
    libero = args.env == "libero"
    args.task = args.task or ("libero_spatial" if libero else "push-v3")
    size = 256 if libero else 480
    # episodes truncate: Meta-World at 500 steps, LIBERO's shortest suites at 280
    steps = min(args.steps or (30 if libero else 120), 270 if libero else 480)
    render = RenderSettings(args.width or size, args.height or size, args.shadows)
    blocks = max(1, steps // args.block)
    block = steps // blocks

    # Bare and bridged blocks alternate, so both see the same machine load (it is shared and noisy).
    bridge_proc = start_bridge("/bench", args.task, render, args.dds_default, args.env, args.task_id)
    runtime = RosRuntime().start()
    bare = BareSim("libero", args.task, args.task_id, render) if libero else BareEnv(args.task, render)
    try:
        driver = BridgeDriver(
            runtime,
            "/bench",
            images=args.images,
            action_dim=7 if libero else 4,
            camera="agentview" if libero else "corner2",
        )
        bare.run(3), driver.run(3)  # warm-up
        t_bare = t_bridge = 0.0
        for _ in range(blocks):
            t_bare += bare.run(block)
            t_bridge += driver.run(block)
        images = driver.images
    finally:
        bare.close()
        runtime.close()
        bridge_proc.terminate()
        try:
            bridge_proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            bridge_proc.kill()
    n = blocks * block
    bare_rate, bridge_rate = n / t_bare, n / t_bridge
    ratio = bridge_rate / bare_rate
    name = f"LIBERO {args.task} task {args.task_id}" if libero else f"Meta-World {args.task}"
    print(
        f"{name}, {render.width}x{render.height}, shadows {'on' if render.shadows else 'off'}, "
        f"{n} steps each in {blocks} alternating blocks"
    )
    print(f"{'run':<44}{'steps/s':>10}")
    print(f"{'bare env (LeRobot ' + ('LiberoEnv' if libero else 'MetaworldEnv') + ')':<44}{bare_rate:>10.2f}")
    print(f"{'through sim_bridge_node (lockstep)':<44}{bridge_rate:>10.2f}")
    print(f"{'bridge / bare':<44}{ratio:>10.3f}   (goal >= {GOAL})")
    if args.images:
        print(f"images received by the policy side: {images}")
    print(
        f"bridge DDS transports: {'Fast DDS defaults' if args.dds_default else 'large-data profile (lerobot_ros.ros.dds)'}"
    )
    print("eval episodes/min (lerobot-ros eval vs LeRobot's loop): not measured here; eval is a separate item")
    print(
        json.dumps(
            {
                "bench": "sim_bridge",
                "figure": round(ratio, 3),
                "goal": GOAL,
                "goal_op": ">=",
                "meets_goal": ratio >= GOAL,
                "bare_steps_per_s": round(bare_rate, 2),
                "bridge_steps_per_s": round(bridge_rate, 2),
                "steps": n,
                "policy_subscribes_images": args.images,
                "bridge_dds_profile": "default" if args.dds_default else "large_data",
                "render": f"{render.width}x{render.height}",
                "shadows": render.shadows,
                "task": args.task,
                "env": args.env,
            }
        )
    )
    return 0


def cpu_s() -> float:
    """CPU seconds of this process, its render threads included (less sensitive to other load than wall time)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class BridgeSteps:
    """Counts the steps a realtime bridge publishes (episode_status) and keeps its /diagnostics values."""

    def __init__(self, runtime: RosRuntime, ns: str):
        from lerobot_ros.ros.sim_rate import SimRateListener

        self.node = runtime.create_node("bench_watch")
        self.step = -1
        self.rates = SimRateListener(self.node)
        self.node.create_subscription(EpisodeStatus, f"{ns}/episode_status", self._on_status, EPISODE_STATUS_QOS)

    def _on_status(self, msg: EpisodeStatus) -> None:
        self.step = max(self.step, int(msg.step))

    def rate(self, seconds: float) -> tuple[float, int]:
        """Steps/s over `seconds` of wall time, and the steps counted."""
        s0, t0 = self.step, time.perf_counter()
        time.sleep(seconds)
        s1, t1 = self.step, time.perf_counter()
        return (s1 - s0) / (t1 - t0), s1 - s0


def so101_main(args) -> int:
    from lerobot_ros.sim.so101_twin import SO101Twin

    goal, fps = 1.0, 30.0
    w, h = args.width or 640, args.height or 480
    render = RenderSettings(w, h, args.shadows, True)  # antialias asked: the twin keeps it only on a GPU
    steps = args.steps or 40
    block = min(args.block, steps) if args.block else 10
    blocks = max(1, steps // block)
    load0 = os.getloadavg()
    bare = {
        m: SO101Twin(cameras=tuple(args.cameras), fps=fps, render=render, meshes=m, max_episode_steps=10**6)
        for m in ("full", "simplified")
    }
    times, cpu = dict.fromkeys(bare, 0.0), dict.fromkeys(bare, 0.0)
    action = np.zeros(6)
    try:
        for twin in bare.values():
            twin.reset(seed=0)
            for _ in range(2):  # warm-up
                twin.step(action)
        for _ in range(blocks):  # alternating blocks: both see the same machine load
            for name, twin in bare.items():
                t0, c0 = time.perf_counter(), cpu_s()
                for _ in range(block):
                    twin.step(action)
                times[name] += time.perf_counter() - t0
                cpu[name] += cpu_s() - c0
        info = bare["simplified"].render_info
    finally:
        for twin in bare.values():
            twin.close()
    n = blocks * block
    bare_rate = {k: n / v for k, v in times.items()}
    cpu_ms = {k: 1000 * v / n for k, v in cpu.items()}

    cams = "[" + ",".join(args.cameras) + "]"
    proc = start_bridge(
        "/bench",
        args.task or "pick",
        render,
        args.dds_default,
        "so101",
        extra=(
            "-p",
            "mode:=realtime",
            "-p",
            f"cameras:={cams}",
            "-p",
            "antialias:=true",
            "-p",
            "env.episode_length:=1000000",
            "-p",
            f"fps:={fps}",
        ),
    )
    runtime = RosRuntime().start()
    try:
        watch = BridgeSteps(runtime, "/bench")
        wait_until(lambda: watch.step >= 10, 300, what="the realtime bridge to start stepping")
        time.sleep(1.0)
        bridge_rate, counted = watch.rate(args.seconds)
        time.sleep(1.2)  # one more diagnostics period
        diag = watch.rates.values("/bench") or {}
    finally:
        runtime.close()
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    load1 = os.getloadavg()
    figure = bridge_rate / fps
    print(
        f"SO-101 twin, {w}x{h}, cameras {', '.join(args.cameras)}, shadows {'on' if args.shadows else 'off'}, "
        f"multisamples {info.get('multisamples')} on {info.get('gl_renderer')}"
    )
    print(f"load average {load0[0]:.1f} at start, {load1[0]:.1f} at end ({os.cpu_count()} CPUs)")
    print(f"{'run':<52}{'steps/s':>10}{'CPU ms/step':>14}")
    print(f"{'bare twin, full meshes (' + str(n) + ' steps)':<52}{bare_rate['full']:>10.2f}{cpu_ms['full']:>14.1f}")
    print(
        f"{'bare twin, simplified meshes (' + str(n) + ' steps)':<52}{bare_rate['simplified']:>10.2f}{cpu_ms['simplified']:>14.1f}"
    )
    print(f"{'simplified / full':<52}{bare_rate['simplified'] / bare_rate['full']:>10.2f}x")
    print(f"{'bridge, realtime mode (' + str(counted) + f' steps in {args.seconds:g} s)':<52}{bridge_rate:>10.2f}")
    print(f"{'bridge /diagnostics real_time_factor':<52}{diag.get('real_time_factor', 'nan'):>10}")
    print(f"{'figure: bridge steps/s / ' + f'{fps:g}':<52}{figure:>10.3f}   (goal >= {goal})")
    print(
        json.dumps(
            {
                "bench": "sim_bridge_so101_realtime",
                "figure": round(figure, 3),
                "goal": goal,
                "goal_op": ">=",
                "meets_goal": figure >= goal,
                "bridge_steps_per_s": round(bridge_rate, 2),
                "bare_full_steps_per_s": round(bare_rate["full"], 2),
                "bare_simplified_steps_per_s": round(bare_rate["simplified"], 2),
                "bare_full_cpu_ms_per_step": round(cpu_ms["full"], 1),
                "bare_simplified_cpu_ms_per_step": round(cpu_ms["simplified"], 1),
                "bridge_real_time_factor": diag.get("real_time_factor"),
                "render": f"{w}x{h}",
                "cameras": args.cameras,
                "multisamples": info.get("multisamples"),
                "gl_renderer": info.get("gl_renderer"),
                "load_avg_start": round(load0[0], 2),
                "load_avg_end": round(load1[0], 2),
                "cpus": os.cpu_count(),
                "env": "so101",
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
