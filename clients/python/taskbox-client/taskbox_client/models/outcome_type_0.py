from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.outcome_type_0_status import OutcomeType0Status

T = TypeVar("T", bound="OutcomeType0")


@_attrs_define
class OutcomeType0:
    """
    Attributes:
        output_bytes (int): The canonical output's length in bytes.
        output_sha256 (str): `sha256:` and the hex sha256 of the output as canonical JSON
            (keys sorted, no spaces): equal outputs have equal hashes.
        status (OutcomeType0Status):
    """

    output_bytes: int
    output_sha256: str
    status: OutcomeType0Status
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        output_bytes = self.output_bytes

        output_sha256 = self.output_sha256

        status = self.status.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "output_bytes": output_bytes,
                "output_sha256": output_sha256,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        output_bytes = d.pop("output_bytes")

        output_sha256 = d.pop("output_sha256")

        status = OutcomeType0Status(d.pop("status"))

        outcome_type_0 = cls(
            output_bytes=output_bytes,
            output_sha256=output_sha256,
            status=status,
        )

        outcome_type_0.additional_properties = d
        return outcome_type_0

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
