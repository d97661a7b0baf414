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


def exception_chain(exc: BaseException | None, limit: int = 20):
    """``exc`` and the exceptions it was raised from or while handling, nearest first, each once
    and at most ``limit``: engines and storage backends wrap the error that says what happened
    (Beam wraps a Ctrl-C in a RuntimeError, s3fs the provider's credentials error), and a chain
    can loop."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen and len(seen) < limit:
        yield exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__


def yaml_problem(exc: Exception) -> str:
    """One line for a YAML syntax error: ``line L, column C: problem (context, line L)``.
    PyYAML's own message spans four lines and repeats the file name (the caller gives it)."""
    mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
    if mark is None or not problem:
        return " ".join(str(exc).split())
    text = f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context, cmark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context:
        text += f" ({context}" + (f", line {cmark.line + 1}" if cmark is not None else "") + ")"
    return text
