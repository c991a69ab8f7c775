from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="Throttle")


@_attrs_define
class Throttle:
    """At most `limit` jobs of one key start in any `period_ms`; the rest wait
    their turn, in order. As a task or a job declares it, `key` is read as a
    concurrency key is (text, a `{field}` template or a JSON pointer into
    the input); as a job keeps it, it is the key made from the job's input.

        Example:
            {'key': '{customer}', 'limit': 10, 'period_ms': 60000}

        Attributes:
            key (str):
            limit (int): 1 to 1,000 starts a period.
            period_ms (int): 1 ms to a day.
    """

    key: str
    limit: int
    period_ms: int

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        limit = self.limit

        period_ms = self.period_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "key": key,
                "limit": limit,
                "period_ms": period_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        key = d.pop("key")

        limit = d.pop("limit")

        period_ms = d.pop("period_ms")

        throttle = cls(
            key=key,
            limit=limit,
            period_ms=period_ms,
        )

        return throttle
