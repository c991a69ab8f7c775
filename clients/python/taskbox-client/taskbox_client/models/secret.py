from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Secret")


@_attrs_define
class Secret:
    """A secret, as it is shown: never its value.

    Attributes:
        created_at (str):
        name (str):  Example: STRIPE_KEY.
        tenant (str):
        updated_at (str):
        version (int): 1 when it was made; one more at each put.
    """

    created_at: str
    name: str
    tenant: str
    updated_at: str
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        name = self.name

        tenant = self.tenant

        updated_at = self.updated_at

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "name": name,
                "tenant": tenant,
                "updated_at": updated_at,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        name = d.pop("name")

        tenant = d.pop("tenant")

        updated_at = d.pop("updated_at")

        version = d.pop("version")

        secret = cls(
            created_at=created_at,
            name=name,
            tenant=tenant,
            updated_at=updated_at,
            version=version,
        )

        secret.additional_properties = d
        return secret

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
