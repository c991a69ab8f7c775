from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="BundleLimits")


@_attrs_define
class BundleLimits:
    """The limits the attempt ran under.

    Attributes:
        fuel (int):
        memory_mb (int):
        timeout_ms (int):
    """

    fuel: int
    memory_mb: int
    timeout_ms: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        fuel = self.fuel

        memory_mb = self.memory_mb

        timeout_ms = self.timeout_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "fuel": fuel,
                "memory_mb": memory_mb,
                "timeout_ms": timeout_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        fuel = d.pop("fuel")

        memory_mb = d.pop("memory_mb")

        timeout_ms = d.pop("timeout_ms")

        bundle_limits = cls(
            fuel=fuel,
            memory_mb=memory_mb,
            timeout_ms=timeout_ms,
        )

        bundle_limits.additional_properties = d
        return bundle_limits

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
