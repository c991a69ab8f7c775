from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.concurrency_mode import ConcurrencyMode
from ..types import UNSET, Unset

T = TypeVar("T", bound="Concurrency")


@_attrs_define
class Concurrency:
    """At most one job per key runs at once (`exclusive`), or a newer job
    replaces a queued one with the same key (`supersedes`).

        Attributes:
            key (str):
            mode (ConcurrencyMode):
            limit (int | None | Unset): How many jobs of one key may run at once (1 to `MAX_KEY_LIMIT`;
                default 1).
    """

    key: str
    mode: ConcurrencyMode
    limit: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        mode = self.mode.value

        limit: int | None | Unset
        if isinstance(self.limit, Unset):
            limit = UNSET
        else:
            limit = self.limit

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "key": key,
                "mode": mode,
            }
        )
        if limit is not UNSET:
            field_dict["limit"] = limit

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        key = d.pop("key")

        mode = ConcurrencyMode(d.pop("mode"))

        def _parse_limit(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        limit = _parse_limit(d.pop("limit", UNSET))

        concurrency = cls(
            key=key,
            mode=mode,
            limit=limit,
        )

        return concurrency
