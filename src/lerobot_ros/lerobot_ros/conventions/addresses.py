"""'HOST:PORT' text as the flags and parameters take it (a policy server, the secure link's peer)."""

from __future__ import annotations


def parse_host_port(text: str, default_port: int | None = None) -> tuple[str, int]:
    """'HOST:PORT', IPv6 as '[::1]:PORT', or a bare HOST when `default_port` is given -> (host, port).
    ValueError (no message of its own: the caller names the parameter) for anything else."""
    text = str(text).strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise ValueError(text)
        port_text = rest[1:]
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            host, port_text = text, ""
    if not port_text and default_port is not None:
        return _checked(host, default_port, text)
    if not port_text.isdigit():
        raise ValueError(text)
    return _checked(host, int(port_text), text)


def _checked(host: str, port: int, text: str) -> tuple[str, int]:
    if not host or not 0 < port < 65536:
        raise ValueError(text)
    return host, port
