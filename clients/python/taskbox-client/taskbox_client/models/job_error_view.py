from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.error_kind import ErrorKind

T = TypeVar("T", bound="JobErrorView")


@_attrs_define
class JobErrorView:
    """A job's error as the API shows it (`JobError::brief`'s shape).

    Attributes:
        code (str):
        kind (ErrorKind): Why an attempt (or a job) failed. The names are part of the HTTP contract.
        message (str):
    """

    code: str
    kind: ErrorKind
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        kind = self.kind.value

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "kind": kind,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        code = d.pop("code")

        kind = ErrorKind(d.pop("kind"))

        message = d.pop("message")

        job_error_view = cls(
            code=code,
            kind=kind,
            message=message,
        )

        job_error_view.additional_properties = d
        return job_error_view

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
