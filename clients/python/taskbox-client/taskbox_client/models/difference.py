from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Difference")


@_attrs_define
class Difference:
    """The first place two outputs differ: a JSON pointer, and the JSON text
    of the value at it on each side (absent: no field), redacted and cut
    to [`PREVIEW_BYTES`] in all.

        Attributes:
            path (str):
            candidate (None | str | Unset):
            recorded (None | str | Unset):
    """

    path: str
    candidate: None | str | Unset = UNSET
    recorded: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        path = self.path

        candidate: None | str | Unset
        if isinstance(self.candidate, Unset):
            candidate = UNSET
        else:
            candidate = self.candidate

        recorded: None | str | Unset
        if isinstance(self.recorded, Unset):
            recorded = UNSET
        else:
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

        def _parse_candidate(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        candidate = _parse_candidate(d.pop("candidate", UNSET))

        def _parse_recorded(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        recorded = _parse_recorded(d.pop("recorded", UNSET))

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
