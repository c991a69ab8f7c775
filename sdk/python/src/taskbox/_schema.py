"""`python -m taskbox._schema OUT`: writes the JSON Schema of the task's input type to OUT,
for `taskbox build` (natively, with pydantic from PyPI in the build's environment; the
component never imports this). A task whose input is not annotated gets no schema: it prints
`none` and writes nothing."""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

from ._task import input_type, registered


def schema(tp: Any) -> dict[str, Any] | None:
    """The JSON Schema (2020-12) of `tp`, or None for `Any` (the input is any JSON)."""
    if tp is Any:
        return None
    from pydantic import TypeAdapter  # only at build time

    out = TypeAdapter(tp).json_schema()
    out.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m taskbox._schema OUT", file=sys.stderr)
        return 2
    importlib.import_module("app")
    found = schema(input_type(registered()))
    if found is None:
        print("none")
        return 0
    with open(argv[1], "w", encoding="utf-8") as f:
        json.dump(found, f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
