"""Reading port numbers from configuration text."""


class ConfigError(Exception):
    """A configuration value that cannot be used."""


def parse_port(text):
    """The port number in `text`; ConfigError when it is not a port (1-65535)."""
    port = int(text)
    if not 1 <= port <= 65535:
        raise ValueError(f"port out of range: {port}")
    return port
