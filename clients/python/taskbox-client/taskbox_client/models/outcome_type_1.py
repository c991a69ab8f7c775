from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.outcome_type_1_status import OutcomeType1Status

T = TypeVar("T", bound="OutcomeType1")


@_attrs_define
class OutcomeType1:
    """
    Attributes:
        code (str): Cut to 128 bytes.
        kind (str):
        message (str): Redacted, cut to 512 bytes.
        status (OutcomeType1Status):
    """

    code: str
    kind: str
    message: str
    status: OutcomeType1Status
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        kind = self.kind

        message = self.message

        status = self.status.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "kind": kind,
                "message": message,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        code = d.pop("code")

        kind = d.pop("kind")

        message = d.pop("message")

        status = OutcomeType1Status(d.pop("status"))

        outcome_type_1 = cls(
            code=code,
            kind=kind,
            message=message,
            status=status,
        )

        outcome_type_1.additional_properties = d
        return outcome_type_1

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
