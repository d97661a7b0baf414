"""Nested YAML mappings -> typed dataclasses, shared by the run configuration
(pipeline/config.py) and the trainer's (model/config.py), so that both reject unknown keys and
wrong types with the same messages, naming the dotted key.

Type hints drive the checks: ``bool`` / ``int`` / ``float`` / ``str`` (no silent conversion:
``"6"`` is not an integer, ``true`` is not a number; the one exception is an exponent
without a dot, ``5e-4``, which PyYAML alone reads as a string), ``X | None``, ``list[X]`` (a scalar
becomes a one-element list, so ``input.warc: a.warc.gz`` works), ``tuple``, ``dict`` and
``dict[int, SomeDataclass]`` (the trainer's ``stages: {1: {...}, 2: {...}}``), nested
dataclasses.  Range checks stay with each config's own ``check()`` / ``validate()``.
"""
from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from typing import Any

from pipeline.core.errors import ConfigError


def build(cls, data: Any, path: str = "", error: type[Exception] = ConfigError):
    """``data`` (a mapping from YAML) -> ``cls(...)``; ``error`` is the exception class the
    caller's config module raises (a subclass of ``ConfigError``)."""
    if not isinstance(data, dict):
        raise error(f"{path or 'config'}: expected a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        dotted = f" ({', '.join(f'{path}.{k}' for k in unknown)})" if path else ""
        raise error(f"{path or 'config'}: unknown key(s) {unknown}{dotted}; known: {sorted(names)}")
    kwargs = {}
    for key, value in data.items():
        where = f"{path}.{key}" if path else key
        kwargs[key] = _coerce(hints[key], value, where, error)
    return cls(**kwargs)


# PyYAML resolves floats by YAML 1.1's pattern, which wants a dot: ``lr: 5e-4`` (and
# ``--set stages.2.lr=5e-4``) load as the string "5e-4", while YAML 1.2, JSON and every reader
# of the config take it for a number.  Only that exponent form is read as a float; other
# strings stay errors ("6" is not a number).
_EXP_FLOAT_RE = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


def _coerce(hint, value, where: str, error: type[Exception]):
    if dataclasses.is_dataclass(hint):
        return build(hint, value or {}, where, error)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            if type(None) in typing.get_args(hint):
                return None
            raise error(f"{where}: null is not allowed")
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return _coerce(args[0], value, where, error)
    if origin is list:
        (inner,) = typing.get_args(hint)
        if isinstance(value, (str, int, float)):
            value = [value]
        if not isinstance(value, list):
            raise error(f"{where}: expected a list")
        return [_coerce(inner, v, where, error) for v in value]
    if hint is tuple or origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise error(f"{where}: expected a list, got {value!r}")
        return tuple(value)
    if hint is dict or origin is dict:
        if not isinstance(value, dict):
            raise error(f"{where}: expected a mapping, got {value!r}")
        args = typing.get_args(hint)
        if not args:
            return dict(value)
        return {_coerce_key(args[0], k, where, error): _coerce(args[1], v, f"{where}.{k}", error)
                for k, v in value.items()}
    if hint is bool:
        if not isinstance(value, bool):
            raise error(f"{where}: expected true or false, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, str) and _EXP_FLOAT_RE.match(value):
            value = float(value)  # "5e-4": a number in YAML 1.2, a string to PyYAML (below)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise error(f"{where}: expected a number, got {value!r}")
        if not math.isfinite(value):  # .inf / .nan pass every range check, then break a run
            raise error(f"{where}: expected a finite number, got {value!r}")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise error(f"{where}: expected an integer, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise error(f"{where}: expected a string, got {value!r}")
        return value
    return value


def _coerce_key(hint, key, where: str, error: type[Exception]):
    # YAML reads `stages: {1: ...}` with int keys, `--set stages.1.steps=...` nests int keys
    # too (overrides.apply); a quoted "1" is accepted, "one" is not.
    if hint is int:
        try:
            return int(key)
        except (TypeError, ValueError):
            raise error(f"{where}: expected integer keys, got {key!r}") from None
    return key
