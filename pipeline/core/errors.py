"""Errors shared by the configuration and the stage modules (kept apart to avoid import cycles:
pipeline/config.py composes the stages' own config sections)."""


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the offending key."""


class UsageError(Exception):
    """A user error the command line reports in one line naming what and where (exit 2): a
    missing input, a busy port.  Kept here, beside ConfigError, so that any command's module
    can raise it without importing the CLI."""
