from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="BundleComponent")


@_attrs_define
class BundleComponent:
    """The pinned component.

    Attributes:
        base64 (str): Its bytes, base64 (standard alphabet, padded).
        digest (str):
        size (int):
    """

    base64: str
    digest: str
    size: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        base64 = self.base64

        digest = self.digest

        size = self.size

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "base64": base64,
                "digest": digest,
                "size": size,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        base64 = d.pop("base64")

        digest = d.pop("digest")

        size = d.pop("size")

        bundle_component = cls(
            base64=base64,
            digest=digest,
            size=size,
        )

        bundle_component.additional_properties = d
        return bundle_component

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
