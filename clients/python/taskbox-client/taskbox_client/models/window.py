from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.ended import Ended


T = TypeVar("T", bound="Window")


@_attrs_define
class Window:
    """What a tenant used in one window.

    Attributes:
        attempts (int):
        end (str):
        fuel_used (int):
        http_bytes (int): Outbound HTTP body bytes its guests sent and received.
        http_requests (int): Outbound HTTP requests its guests made.
        jobs_ended (Ended): Jobs that ended in a window, by how.
        start (str):
        wall_ms (int):
        cache_hits (int | Unset): Jobs a deterministic task's result cache completed without an attempt.
        fuel_budget (int | None | Unset): The tenant's `fuel_per_minute`; null when it has none.
        fuel_left (int | None | Unset):
        fuel_saved (int | Unset): The fuel the cached jobs' sources burned: what the hits saved.
    """

    attempts: int
    end: str
    fuel_used: int
    http_bytes: int
    http_requests: int
    jobs_ended: Ended
    start: str
    wall_ms: int
    cache_hits: int | Unset = UNSET
    fuel_budget: int | None | Unset = UNSET
    fuel_left: int | None | Unset = UNSET
    fuel_saved: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        end = self.end

        fuel_used = self.fuel_used

        http_bytes = self.http_bytes

        http_requests = self.http_requests

        jobs_ended = self.jobs_ended.to_dict()

        start = self.start

        wall_ms = self.wall_ms

        cache_hits = self.cache_hits

        fuel_budget: int | None | Unset
        if isinstance(self.fuel_budget, Unset):
            fuel_budget = UNSET
        else:
            fuel_budget = self.fuel_budget

        fuel_left: int | None | Unset
        if isinstance(self.fuel_left, Unset):
            fuel_left = UNSET
        else:
            fuel_left = self.fuel_left

        fuel_saved = self.fuel_saved

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "end": end,
                "fuel_used": fuel_used,
                "http_bytes": http_bytes,
                "http_requests": http_requests,
                "jobs_ended": jobs_ended,
                "start": start,
                "wall_ms": wall_ms,
            }
        )
        if cache_hits is not UNSET:
            field_dict["cache_hits"] = cache_hits
        if fuel_budget is not UNSET:
            field_dict["fuel_budget"] = fuel_budget
        if fuel_left is not UNSET:
            field_dict["fuel_left"] = fuel_left
        if fuel_saved is not UNSET:
            field_dict["fuel_saved"] = fuel_saved

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.ended import Ended  # noqa: PLC0415

        d = dict(src_dict)
        attempts = d.pop("attempts")

        end = d.pop("end")

        fuel_used = d.pop("fuel_used")

        http_bytes = d.pop("http_bytes")

        http_requests = d.pop("http_requests")

        jobs_ended = Ended.from_dict(d.pop("jobs_ended"))

        start = d.pop("start")

        wall_ms = d.pop("wall_ms")

        cache_hits = d.pop("cache_hits", UNSET)

        def _parse_fuel_budget(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        fuel_budget = _parse_fuel_budget(d.pop("fuel_budget", UNSET))

        def _parse_fuel_left(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        fuel_left = _parse_fuel_left(d.pop("fuel_left", UNSET))

        fuel_saved = d.pop("fuel_saved", UNSET)

        window = cls(
            attempts=attempts,
            end=end,
            fuel_used=fuel_used,
            http_bytes=http_bytes,
            http_requests=http_requests,
            jobs_ended=jobs_ended,
            start=start,
            wall_ms=wall_ms,
            cache_hits=cache_hits,
            fuel_budget=fuel_budget,
            fuel_left=fuel_left,
            fuel_saved=fuel_saved,
        )

        window.additional_properties = d
        return window

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
