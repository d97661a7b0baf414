"""Errors shared by the configuration and the stage modules (kept apart to avoid import cycles:
pipeline/config.py composes the stages' own config sections)."""


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the offending key."""


class UsageError(Exception):
    """A user error the command line reports in one line naming what and where (exit 2): a
    missing input, a busy port.  Kept here, beside ConfigError, so that any command's module
    can raise it without importing the CLI."""


class StorageFailed(RuntimeError):
    """A run's own files (outputs, work files) could not be written or read back.  Never a
    record's drop reason: the stages let it through, the engine job fails, the wave gets no
    marker, and the run exits non-zero; the same command run again redoes that wave."""


class WriteFailed(StorageFailed):
    """An output that could not be written (disk full, a store refusing the upload)."""


class RunFailed(RuntimeError):
    """A job of a run that failed; the message says which and that a rerun resumes it."""
