from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.error_code import ErrorCode

T = TypeVar("T", bound="ItemErrorBody")


@_attrs_define
class ItemErrorBody:
    """
    Attributes:
        code (ErrorCode): Every code an error answer may carry; part of the HTTP contract (DESIGN
            §3.4), and listed in the OpenAPI spec from this enum.
        details (Any): More, by code: the input's violations (`JOB_INVALID_INPUT`), the
            definition's problems (`INVALID_TASK`, `INVALID_WORKFLOW`), the
            limit (`PAYLOAD_TOO_LARGE`, `REQUEST_TIMEOUT`, `RATE_LIMITED`,
            `QUOTA_EXCEEDED`), the
            job (`JOB_EXECUTION_ERROR`); else null.
        message (str): What was wrong and, where it helps, how to fix it.
        status (int):
    """

    code: ErrorCode
    details: Any
    message: str
    status: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code.value

        details = self.details

        message = self.message

        status = self.status

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "details": details,
                "message": message,
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        code = ErrorCode(d.pop("code"))

        details = d.pop("details")

        message = d.pop("message")

        status = d.pop("status")

        item_error_body = cls(
            code=code,
            details=details,
            message=message,
            status=status,
        )

        item_error_body.additional_properties = d
        return item_error_body

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
