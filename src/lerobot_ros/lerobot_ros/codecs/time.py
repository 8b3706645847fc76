"""ROS time (builtin_interfaces Time/Duration) <-> integer nanoseconds.

Integers avoid the float rounding that makes stamps drift when they are compared for equality.
"""

from builtin_interfaces.msg import Duration, Time

NS_PER_S = 1_000_000_000


def time_to_ns(stamp) -> int:
    """Nanoseconds since the epoch of a Time (rclpy or rosbags object)."""
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def duration_to_ns(duration) -> int:
    """Nanoseconds of a Duration; sec may be negative, nanosec is always in [0, 1e9)."""
    return int(duration.sec) * NS_PER_S + int(duration.nanosec)


def split_ns(ns: int) -> tuple[int, int]:
    """(sec, nanosec) of a nanosecond count, nanosec in [0, 1e9) (ROS's Time/Duration/QosTime split)."""
    return divmod(int(ns), NS_PER_S)


def ns_to_time(ns: int) -> Time:
    """Time message for a non-negative nanosecond stamp."""
    ns = int(ns)
    if ns < 0:
        raise ValueError(f"a ROS Time cannot be negative, got {ns} ns")
    sec, nanosec = split_ns(ns)
    return Time(sec=sec, nanosec=nanosec)


def set_stamp(stamp, ns: int) -> None:
    """Write a nanosecond stamp into an existing Time in place (for messages reused every loop)."""
    stamp.sec, stamp.nanosec = split_ns(ns)


def ns_to_duration(ns: int) -> Duration:
    """Duration message for a nanosecond count (negative values keep nanosec in [0, 1e9))."""
    sec, nanosec = split_ns(ns)
    return Duration(sec=sec, nanosec=nanosec)


def seconds_to_ns(seconds: float) -> int:
    """Round a float number of seconds to integer nanoseconds."""
    return int(round(float(seconds) * NS_PER_S))
