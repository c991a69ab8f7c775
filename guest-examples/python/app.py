"""py-sales: a taskbox task written in Python (componentize-py, world `task`).

Input  {"csv": string, "group_by": column, "sum": column}
Output {"groups": [{"key", "rows", "total"}], "rows", "total"}: the CSV's rows grouped by one
       column with another summed, groups sorted by total, largest first (ties by key).
For example.json a test should expect 5 rows, total 1190.5, and "north" first with 700.
Errors: input that is not JSON, or a column the CSV lacks → err({code: "bad_input",
retryable: false}); a value in the summed column that is not a number → err({code:
"bad_number", retryable: false}). Raising `Err(Failure(...))` is how componentize-py
returns the `err` case.
"""

import csv
import io
import json

import wit_world
from componentize_py_types import Err
from wit_world.imports import host, types


def fail(code: str, message: str) -> Err:
    return Err(types.Failure(code=code, message=message, retryable=False))


class WitWorld(wit_world.WitWorld):
    def run(self, job: types.Job, input: str) -> types.Outcome:
        try:
            args = json.loads(input)
            text, key_col, sum_col = args["csv"], args["group_by"], args["sum"]
        except (ValueError, KeyError, TypeError) as e:
            raise fail("bad_input", f"expected {{csv, group_by, sum}}: {e}")

        reader = csv.DictReader(io.StringIO(text))
        columns = reader.fieldnames or []
        for col in (key_col, sum_col):
            if col not in columns:
                raise fail("bad_input", f"the CSV has no column {col!r} (it has {columns})")

        groups: dict[str, list] = {}
        rows = 0
        for line, row in enumerate(reader, start=2):
            try:
                value = float(row[sum_col])
            except (TypeError, ValueError):
                raise fail("bad_number", f"line {line}: {row[sum_col]!r} is not a number")
            g = groups.setdefault(row[key_col], [0, 0.0])
            g[0] += 1
            g[1] += value
            rows += 1

        ordered = sorted(groups.items(), key=lambda kv: (-kv[1][1], kv[0]))
        out = {
            "groups": [{"key": k, "rows": n, "total": round(t, 2)} for k, (n, t) in ordered],
            "rows": rows,
            "total": round(sum(t for _, t in groups.values()), 2),
        }
        host.log(host.Level.INFO, f"job {job.id} attempt {job.attempt}: {rows} rows in {len(groups)} groups")
        return types.Outcome_Done(json.dumps(out))
