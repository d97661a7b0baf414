"""Errors shared by the configuration and the stage modules (kept apart to avoid import cycles:
pipeline/config.py composes the stages' own config sections)."""


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the offending key."""
