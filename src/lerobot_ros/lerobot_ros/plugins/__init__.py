"""LeRobot plugins over the project's contracts: LeRobot's own CLIs (lerobot-record, -replay, -teleoperate,
-rollout ...) drive a ROS 2 robot whose topics a contract names.

LeRobot 0.6.1 discovers a plugin by its distribution name (`lerobot_robot_*` ...); the small distributions
under `plugins/` in the repository only import these modules, whose config classes register themselves.
`topics` is the ROS side they share (a private rclpy context, the newest message of each topic with its age);
LeRobot is imported only by the plugin modules themselves.
"""
