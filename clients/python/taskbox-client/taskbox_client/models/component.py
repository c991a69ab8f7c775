from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.abi import Abi

T = TypeVar("T", bound="Component")


@_attrs_define
class Component:
    """A stored component.

    Attributes:
        abi (Abi): How the host calls a guest (DESIGN §3.1–3.2).
        digest (str): `sha256:` and the hex of its bytes' sha256: what a task names.
        size (int): Bytes.
    """

    abi: Abi
    digest: str
    size: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        abi = self.abi.value

        digest = self.digest

        size = self.size

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "abi": abi,
                "digest": digest,
                "size": size,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        abi = Abi(d.pop("abi"))

        digest = d.pop("digest")

        size = d.pop("size")

        component = cls(
            abi=abi,
            digest=digest,
            size=size,
        )

        component.additional_properties = d
        return component

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
