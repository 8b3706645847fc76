#!/usr/bin/env bash
# Source ROS 2 and the workspace, then run the given command.
set -e
source "/opt/ros/${ROS_DISTRO}/setup.bash"
source /ws/install/setup.bash
exec "$@"
