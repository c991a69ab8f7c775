from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="WaitSeries")


@_attrs_define
class WaitSeries:
    """How long the jobs that started in a bucket had waited from when they
    were due, estimated within the class of a histogram each fell in
    (classes from 1 ms to an hour); null for a bucket where none started.

        Attributes:
            p50 (list[float | None]):
            p90 (list[float | None]):
            p99 (list[float | None]):
    """

    p50: list[float | None]
    p90: list[float | None]
    p99: list[float | None]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        p50 = []
        for p50_item_data in self.p50:
            p50_item: float | None
            p50_item = p50_item_data
            p50.append(p50_item)

        p90 = []
        for p90_item_data in self.p90:
            p90_item: float | None
            p90_item = p90_item_data
            p90.append(p90_item)

        p99 = []
        for p99_item_data in self.p99:
            p99_item: float | None
            p99_item = p99_item_data
            p99.append(p99_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "p50": p50,
                "p90": p90,
                "p99": p99,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        p50 = []
        _p50 = d.pop("p50")
        for p50_item_data in _p50:

            def _parse_p50_item(data: object) -> float | None:
                if data is None:
                    return data
                return cast(float | None, data)

            p50_item = _parse_p50_item(p50_item_data)

            p50.append(p50_item)

        p90 = []
        _p90 = d.pop("p90")
        for p90_item_data in _p90:

            def _parse_p90_item(data: object) -> float | None:
                if data is None:
                    return data
                return cast(float | None, data)

            p90_item = _parse_p90_item(p90_item_data)

            p90.append(p90_item)

        p99 = []
        _p99 = d.pop("p99")
        for p99_item_data in _p99:

            def _parse_p99_item(data: object) -> float | None:
                if data is None:
                    return data
                return cast(float | None, data)

            p99_item = _parse_p99_item(p99_item_data)

            p99.append(p99_item)

        wait_series = cls(
            p50=p50,
            p90=p90,
            p99=p99,
        )

        wait_series.additional_properties = d
        return wait_series

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
