"""LeRobot plugins: LeRobot's own CLIs (lerobot-record, -teleoperate, -replay, -rollout, -eval, the async
`robot_client` ...) on ROS 2 topics.

- `robot` (`--robot.type=ros_contract`): a robot whose state, images and commands are a contract's topics;
- `teleop` (`--teleop.type=ros_contract`): a leader already on ROS topics, giving a contract's action;
- `camera` (camera `type: ros_image`): a ROS image topic as a camera of any LeRobot robot;
- `env` (`--env.type=ros_bridge`): lerobot-eval through a sim bridge, one bridge per vector-env worker.

LeRobot 0.6.1 discovers a plugin by its distribution name (`lerobot_robot_*`, `lerobot_teleoperator_*`,
`lerobot_camera_*`, `lerobot_env_*`); the small distributions under `plugins/` in the repository only import
these modules, whose config classes register themselves. `topics` is the ROS side the device plugins share (a
private rclpy context, the newest message of each topic with its age); LeRobot is imported only by the plugin
modules themselves.
"""
