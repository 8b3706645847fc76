"""`lerobot-ros <verb>`: the command-line entry point."""
