from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ResumeBody")


@_attrs_define
class ResumeBody:
    """
    Attributes:
        input_ (Any | Unset): A new input for the job (checked against the task's `input_schema`).
    """

    input_: Any | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        input_ = self.input_

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if input_ is not UNSET:
            field_dict["input"] = input_

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        input_ = d.pop("input", UNSET)

        resume_body = cls(
            input_=input_,
        )

        return resume_body
