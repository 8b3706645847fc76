"""Hardware layer: LeRobot robots, teleoperators, motor buses and cameras wrapped for the ROS nodes.

Library code here is reachable without ROS (units, command buffering, watchdog, reconnect policy,
diagnostics bookkeeping); `virtual/` holds servo emulators that speak the real wire protocols on a pty.
"""
