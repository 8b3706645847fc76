"""LeRobot's lerobot-record, unchanged, with the bench's paced video-file camera type registered first.

python bench/footprint_support/lerobot_record_paced.py --robot.type=so101_follower ... (lerobot-record's flags)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import paced_file_camera  # noqa: E402,F401 - registers the `paced_file` camera type
from lerobot.scripts.lerobot_record import main  # noqa: E402

if __name__ == "__main__":
    main()
