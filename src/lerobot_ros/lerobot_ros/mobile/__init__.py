"""Mobile bases without ROS and without a bus: LeKiwi's omniwheel kinematics (LeRobot's own numbers and units), the
cmd_vel gate and velocity shaper, and planar odometry. The real base (hardware.wheel_base) and the MuJoCo twin
(sim.lekiwi_twin) both drive through these, so the twin obeys the same limits as the robot.
"""
