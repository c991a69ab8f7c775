from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="FuelSums")


@_attrs_define
class FuelSums:
    """Fuel recorded and fuel now, summed over the runs.

    Attributes:
        candidate (int):
        recorded (int):
        ratio (float | None | Unset): candidate ÷ recorded (`null` when nothing was recorded).
    """

    candidate: int
    recorded: int
    ratio: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        candidate = self.candidate

        recorded = self.recorded

        ratio: float | None | Unset
        if isinstance(self.ratio, Unset):
            ratio = UNSET
        else:
            ratio = self.ratio

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidate": candidate,
                "recorded": recorded,
            }
        )
        if ratio is not UNSET:
            field_dict["ratio"] = ratio

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        candidate = d.pop("candidate")

        recorded = d.pop("recorded")

        def _parse_ratio(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        ratio = _parse_ratio(d.pop("ratio", UNSET))

        fuel_sums = cls(
            candidate=candidate,
            recorded=recorded,
            ratio=ratio,
        )

        fuel_sums.additional_properties = d
        return fuel_sums

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
