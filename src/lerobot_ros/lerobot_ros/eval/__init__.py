"""ROS-level evaluation (`lerobot-ros eval`): seeded episodes through sim bridges, scored like lerobot-eval.

Layering: uses nodes only as processes it starts; the scoring (`results`) needs neither ROS nor a simulator.
"""

from lerobot_ros.eval.results import EpisodeResult, build_eval_info, reduce_rewards, write_json_atomic

__all__ = ["EpisodeResult", "build_eval_info", "reduce_rewards", "write_json_atomic"]
