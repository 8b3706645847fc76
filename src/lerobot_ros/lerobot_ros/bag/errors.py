"""The exception bag reading/converting raises for bad input: one line naming the bag and the problem."""

from lerobot_ros.conventions.errors import UserError


class BagError(UserError, ValueError):
    """A bag cannot be read or converted; str() is a one-line message naming the bag."""

    def __init__(self, bag, message: str):
        self.bag = str(bag)
        self.problem = message
        super().__init__(f"{bag}: {message}")
