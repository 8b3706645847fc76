"""Episode recording: one rosbag2 (MCAP) per episode, episode control and live QA (library, no ROS needed)."""
