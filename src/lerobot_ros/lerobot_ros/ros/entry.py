"""The `main()` of every node executable: init, spin, clean shutdown, and no traceback for expected errors."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.task import Future

from lerobot_ros.conventions.errors import UserError
from lerobot_ros.conventions.extras import missing_extra_message
from lerobot_ros.processes.memory import HeapTrimmer, HeapTrimSetupError, limit_malloc_arenas, trim_period_s
from lerobot_ros.ros.network import NetworkSetupError, apply_network_mode
from lerobot_ros.ros.shutdown_watch import ShutdownWatch
from lerobot_ros.ros.torchless import keep_torch_out


class NodeStartupError(UserError, RuntimeError):
    """Raised by a node's constructor for an expected failure (bad parameter, missing device...).

    The message is printed as-is, without a traceback, and the process exits with status 1.
    """


def run_node(
    factory: Callable[..., Node | Sequence[Node]], args=None, multi_threaded: bool = False, torch: bool = True
) -> None:
    """Create the node with `factory()`, spin it until Ctrl-C / SIGTERM / shutdown, then clean up. A factory may
    make several nodes (one process sharing a serial port between them: lekiwi_node): all spin in one executor
    and are closed in reverse order.

    A node that ends by itself (the recorder after its last episode) has an `exit_future` (rclpy Future):
    its result is the exit status (sys.exit when non-zero), so no callback needs to raise SystemExit.
    The network mode (lerobot_ros.ros.network) is checked and put in force first: a node that would be
    open to the network against its launch file's wish does not start. `torch=False` (robot-side drivers, cameras,
    the recorder): LeRobot's import of torch is kept out (lerobot_ros.ros.torchless). Every node process hands
    its freed heap back to the OS periodically (processes.memory.HeapTrimmer, LEROBOT_ROS_HEAP_TRIM_S) and keeps
    glibc to 2 malloc arenas unless MALLOC_ARENA_MAX is set (processes.memory.limit_malloc_arenas).
    """
    if not torch:
        keep_torch_out()
    label = getattr(factory, "__name__", "node")
    try:
        network = apply_network_mode()
        trimmer = HeapTrimmer(trim_period_s())
    except (NetworkSetupError, HeapTrimSetupError) as exc:
        print(f"[{label}] error: {exc}", file=sys.stderr)
        sys.exit(1)
    if network is not None:
        print(f"[{label}] {'warning: ' if network.is_open else ''}{network.describe()}", file=sys.stderr, flush=True)
    limit_malloc_arenas()  # before rclpy.init starts the DDS threads (processes.memory)
    rclpy.init(args=args)
    trimmer.start()  # freed heap back to the OS every LEROBOT_ROS_HEAP_TRIM_S (processes.memory)
    nodes: list[Node] = []
    code = 0
    try:
        made = factory()
        nodes = [made] if isinstance(made, Node) else list(made)
        executor = MultiThreadedExecutor() if multi_threaded else SingleThreadedExecutor()
        for node in nodes:
            executor.add_node(node)
        exit_future = getattr(nodes[0], "exit_future", None)
        watch = ShutdownWatch(executor).start()  # a signal between two waits still ends the spin (ros.shutdown_watch)
        try:
            if not isinstance(exit_future, Future):
                executor.spin()
            else:
                executor.spin_until_future_complete(exit_future)
                code = int(exit_future.result() or 0) if exit_future.done() else 0
        finally:
            watch.stop()
            executor.shutdown(timeout_sec=2.0)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except NodeStartupError as exc:
        print(f"[{label}] error: {exc}", file=sys.stderr)
        code = 1
    except ModuleNotFoundError as exc:  # a package of an extra that is not installed (policy_node without LeRobot)
        message = missing_extra_message(exc, os.path.basename(sys.argv[0]) if sys.argv else None)
        if message is None:
            raise
        print(f"[{label}] error: {message}", file=sys.stderr)
        code = 1
    except Exception:
        if rclpy.ok():
            raise
        # SIGINT/SIGTERM shut the context down while the constructor or a callback was still using it
        # ("context is invalid"): that is a normal stop, not an error to show with a traceback.
    finally:
        for node in reversed(nodes):
            close = getattr(node, "close", None)
            if callable(close):
                close()
            node.destroy_node()
        rclpy.try_shutdown()
        trimmer.stop()
    if code:
        sys.exit(code)
