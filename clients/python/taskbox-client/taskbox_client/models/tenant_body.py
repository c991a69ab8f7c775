from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.quotas import Quotas


T = TypeVar("T", bound="TenantBody")


@_attrs_define
class TenantBody:
    """
    Attributes:
        quotas (None | Quotas | Unset):
        weight (int | None | Unset): Its share of the runners against the others' (1 to 10000; default 1).
    """

    quotas: None | Quotas | Unset = UNSET
    weight: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.quotas import Quotas  # noqa: PLC0415

        quotas: dict[str, Any] | None | Unset
        if isinstance(self.quotas, Unset):
            quotas = UNSET
        elif isinstance(self.quotas, Quotas):
            quotas = self.quotas.to_dict()
        else:
            quotas = self.quotas

        weight: int | None | Unset
        if isinstance(self.weight, Unset):
            weight = UNSET
        else:
            weight = self.weight

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if quotas is not UNSET:
            field_dict["quotas"] = quotas
        if weight is not UNSET:
            field_dict["weight"] = weight

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.quotas import Quotas  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_quotas(data: object) -> None | Quotas | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                quotas_type_1 = Quotas.from_dict(data)

                return quotas_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Quotas | Unset, data)

        quotas = _parse_quotas(d.pop("quotas", UNSET))

        def _parse_weight(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        weight = _parse_weight(d.pop("weight", UNSET))

        tenant_body = cls(
            quotas=quotas,
            weight=weight,
        )

        return tenant_body
