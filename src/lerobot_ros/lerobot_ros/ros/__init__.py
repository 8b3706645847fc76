"""Small rclpy helpers shared by nodes, tests, benchmarks and in-process tools (eval, demo)."""
