from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Debounce")


@_attrs_define
class Debounce:
    """A job enqueued while another of its key is pending replaces it, and
    runs `period_ms` after the last enqueue, but never later than
    `max_wait_ms` after the first. As a task or a job declares it, `key` is
    read as a concurrency key is (text, a `{field}` template or a JSON
    pointer into the input).

        Example:
            {'key': '{customer}', 'max_wait_ms': 30000, 'period_ms': 2000}

        Attributes:
            key (str):
            period_ms (int): How long after the last enqueue the job runs: 1 ms to a day.
            max_wait_ms (int | None | Unset): The most a chain of replacements holds its job back from the first
                enqueue: `period_ms` to a week; ten periods (at most a week) when
                absent.
    """

    key: str
    period_ms: int
    max_wait_ms: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        period_ms = self.period_ms

        max_wait_ms: int | None | Unset
        if isinstance(self.max_wait_ms, Unset):
            max_wait_ms = UNSET
        else:
            max_wait_ms = self.max_wait_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "key": key,
                "period_ms": period_ms,
            }
        )
        if max_wait_ms is not UNSET:
            field_dict["max_wait_ms"] = max_wait_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        key = d.pop("key")

        period_ms = d.pop("period_ms")

        def _parse_max_wait_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_wait_ms = _parse_max_wait_ms(d.pop("max_wait_ms", UNSET))

        debounce = cls(
            key=key,
            period_ms=period_ms,
            max_wait_ms=max_wait_ms,
        )

        return debounce
