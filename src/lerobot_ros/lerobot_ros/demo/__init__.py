"""The demo (`lerobot-ros demo`, README's first command): simulator + scripted expert on ROS topics ->
recorded rosbag2 episodes -> LeRobotDataset -> `lerobot-ros eval` -> a summary.

Each step reuses the project's own pieces (the sim launch file, the recorder node, `lerobot-ros convert`
and `lerobot-ros eval`) in child processes; this package only drives them and reports.
"""
