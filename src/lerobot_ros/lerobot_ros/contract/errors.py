"""The one exception a contract raises when a file or a message does not fit it."""

from lerobot_ros.conventions.errors import UserError


class ContractError(UserError, ValueError):
    """A contract is invalid, or a message does not match it.

    `key` is the dotted path of the offending YAML key (e.g. ``features.action.transforms[0]``),
    so the message always names where to look.
    """

    def __init__(self, message: str, key: str | None = None, source: str | None = None):
        self.key = key
        self.source = source
        self.message = message  # without the source and key prefixes (re-raise with these, not str(exc))
        where = f"{source}: " if source else ""
        at = f"{key}: " if key else ""
        super().__init__(f"{where}{at}{message}")
