"""`--set key=value` overrides, shared by `lait build` (pipeline/config.py) and the trainer's
commands (model/config.py), so that both spell, parse and nest overrides the same way.

A value is a YAML scalar (or flow collection): ``text.min_words=1`` sets the integer 1,
``image.keep_svg=true`` a boolean, ``input.warc=[a.warc.gz, b.warc.gz]`` a list.  Validation
of the key and the value's type is left to the config loader, exactly as for the YAML file.
"""
from __future__ import annotations

from typing import Any

import yaml

from pipeline.core.errors import ConfigError


def parse(items: list[str] | None, error: type[Exception] = ConfigError) -> dict[str, Any]:
    """``["a.b=1", ...]`` -> ``{"a.b": 1, ...}`` (later items win).  ``error`` is the
    exception class the caller's config module raises."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise error(f"--set {item!r}: expected KEY=VALUE with a dotted key, e.g. text.min_words=1")
        try:
            out[key] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as exc:
            raise error(f"--set {key}: value {raw!r} is not a YAML scalar: {exc}") from None
    return out


def apply(data: dict, overrides: dict[str, Any] | None,
          error: type[Exception] = ConfigError) -> dict:
    """Sets each dotted key of ``overrides`` in the nested mapping ``data`` (in place, returned).
    A purely numeric part becomes an int key (the trainer's ``stages.1.steps``)."""
    for dotted, value in (overrides or {}).items():
        node = data
        *parents, last = dotted.split(".")
        for i, part in enumerate(parents):
            key = int(part) if part.isdigit() else part
            child = node.setdefault(key, {})
            if child is None:
                child = node[key] = {}
            if not isinstance(child, dict):
                where = ".".join(parents[:i + 1])
                raise error(f"--set {dotted}: {where} is a {type(child).__name__}, not a section")
            node = child
        node[int(last) if last.isdigit() else last] = value
    return data
