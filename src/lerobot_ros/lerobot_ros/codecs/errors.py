"""The one exception type codecs raise for malformed or unsupported messages."""

from lerobot_ros.conventions.errors import UserError


class CodecError(UserError, ValueError):
    """A message cannot be converted; the text says what is wrong and, where it helps, what to do."""
