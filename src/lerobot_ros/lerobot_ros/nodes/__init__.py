"""One module per executable. Nodes are thin: they wire ROS to the library and hold no logic a test
cannot reach without ROS."""
