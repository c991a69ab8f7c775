from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="VerifyRequest")


@_attrs_define
class VerifyRequest:
    """The body of `POST /v1/tasks/{name}/verify`.

    Attributes:
        component (str): The candidate's digest, as `POST /v1/components` answered it.
        sample (int | None | Unset): How many of the task's last ended jobs to run again (1 to 1000,
            default 100).
    """

    component: str
    sample: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        component = self.component

        sample: int | None | Unset
        if isinstance(self.sample, Unset):
            sample = UNSET
        else:
            sample = self.sample

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "component": component,
            }
        )
        if sample is not UNSET:
            field_dict["sample"] = sample

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        component = d.pop("component")

        def _parse_sample(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        sample = _parse_sample(d.pop("sample", UNSET))

        verify_request = cls(
            component=component,
            sample=sample,
        )

        return verify_request
