from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.network_spec import NetworkSpec


T = TypeVar("T", bound="BundleGrants")


@_attrs_define
class BundleGrants:
    """What the task granted its guests: the hosts they could call and the
    names of the secrets they could read, never the values. A replay
    grants neither unless it is told to.

        Attributes:
            secrets (list[str]):
            network (NetworkSpec | None | Unset):
    """

    secrets: list[str]
    network: NetworkSpec | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.network_spec import NetworkSpec  # noqa: PLC0415

        secrets = self.secrets

        network: dict[str, Any] | None | Unset
        if isinstance(self.network, Unset):
            network = UNSET
        elif isinstance(self.network, NetworkSpec):
            network = self.network.to_dict()
        else:
            network = self.network

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "secrets": secrets,
            }
        )
        if network is not UNSET:
            field_dict["network"] = network

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.network_spec import NetworkSpec  # noqa: PLC0415

        d = dict(src_dict)
        secrets = cast(list[str], d.pop("secrets"))

        def _parse_network(data: object) -> NetworkSpec | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                network_type_1 = NetworkSpec.from_dict(data)

                return network_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NetworkSpec | None | Unset, data)

        network = _parse_network(d.pop("network", UNSET))

        bundle_grants = cls(
            secrets=secrets,
            network=network,
        )

        bundle_grants.additional_properties = d
        return bundle_grants

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
