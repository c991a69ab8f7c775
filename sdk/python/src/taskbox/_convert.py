"""JSON to a task's input type and a task's output to JSON, by the type hints alone.

The server has already checked the input against the schema derived from the same type, so
this is a reshaping (dicts into dataclasses, lists of them, optional ones), not a validator;
what still does not fit raises `Fail("bad_input")`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from typing import Any

from ._outcome import Fail


def from_json(value: Any, hint: Any, where: str = "input") -> Any:
    """`value` (parsed JSON) as `hint` says."""
    if hint is Any or hint is None or hint is object:
        return value
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        others = [a for a in args if a is not type(None)]
        if len(others) == 1:
            return from_json(value, others[0], where)
        return value
    if origin in (list, tuple) and isinstance(value, list):
        item = args[0] if args else Any
        return [from_json(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict and isinstance(value, dict):
        item = args[1] if len(args) == 2 else Any
        return {k: from_json(v, item, f"{where}.{k}") for k, v in value.items()}
    if origin is typing.Literal or origin is not None:
        return value
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if not isinstance(value, dict):
            raise Fail("bad_input", f"{where}: expected an object for {hint.__name__}, got {type(value).__name__}")
        hints = typing.get_type_hints(hint)
        known = {f.name for f in dataclasses.fields(hint) if f.init}
        unknown = sorted(set(value) - known)
        if unknown:
            raise Fail("bad_input", f"{where}: {hint.__name__} has no field {', '.join(unknown)}")
        kwargs = {k: from_json(v, hints.get(k, Any), f"{where}.{k}") for k, v in value.items()}
        try:
            return hint(**kwargs)
        except TypeError as e:
            raise Fail("bad_input", f"{where}: {e}") from None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError as e:
            raise Fail("bad_input", f"{where}: {e}") from None
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (str, int, float, bool) and (not isinstance(value, hint) or (hint is int and isinstance(value, bool))):
        raise Fail("bad_input", f"{where}: expected {_JSON_NAMES[hint]}, got {_json_name(value)}")
    return value


_JSON_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _json_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def to_json(value: Any) -> str:
    """`value` as JSON text: dataclasses as objects, enums as their values."""
    try:
        return json.dumps(_plain(value), allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise Fail("bad_output", f"the output is not JSON: {e}") from None
