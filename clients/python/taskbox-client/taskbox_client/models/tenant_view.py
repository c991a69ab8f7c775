from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.tenant_view_quotas import TenantViewQuotas


T = TypeVar("T", bound="TenantView")


@_attrs_define
class TenantView:
    """A tenant: its share of the runners and its quotas.

    Attributes:
        created_at (str):
        name (str):
        quotas (TenantViewQuotas): Every quota, with its limit (null: none) and whose it is.
        weight (int): Its share of the runners against the other tenants'.
    """

    created_at: str
    name: str
    quotas: TenantViewQuotas
    weight: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        name = self.name

        quotas = self.quotas.to_dict()

        weight = self.weight

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "name": name,
                "quotas": quotas,
                "weight": weight,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tenant_view_quotas import TenantViewQuotas  # noqa: PLC0415

        d = dict(src_dict)
        created_at = d.pop("created_at")

        name = d.pop("name")

        quotas = TenantViewQuotas.from_dict(d.pop("quotas"))

        weight = d.pop("weight")

        tenant_view = cls(
            created_at=created_at,
            name=name,
            quotas=quotas,
            weight=weight,
        )

        tenant_view.additional_properties = d
        return tenant_view

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
