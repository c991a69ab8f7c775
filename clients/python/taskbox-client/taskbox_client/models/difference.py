from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Difference")


@_attrs_define
class Difference:
    """One place two outputs differ: a JSON pointer, and the value at it in
    each (absent: `null` with `missing` naming the side).

        Attributes:
            path (str):
            candidate (Any | Unset):
            recorded (Any | Unset):
    """

    path: str
    candidate: Any | Unset = UNSET
    recorded: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        path = self.path

        candidate = self.candidate

        recorded = self.recorded

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "path": path,
            }
        )
        if candidate is not UNSET:
            field_dict["candidate"] = candidate
        if recorded is not UNSET:
            field_dict["recorded"] = recorded

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        path = d.pop("path")

        candidate = d.pop("candidate", UNSET)

        recorded = d.pop("recorded", UNSET)

        difference = cls(
            path=path,
            candidate=candidate,
            recorded=recorded,
        )

        difference.additional_properties = d
        return difference

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
