from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="JobSeries")


@_attrs_define
class JobSeries:
    """Jobs a bucket.

    Attributes:
        completed (list[int]):
        failed (list[int]):
        started (list[int]): Jobs whose first attempt started in the bucket.
    """

    completed: list[int]
    failed: list[int]
    started: list[int]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        completed = self.completed

        failed = self.failed

        started = self.started

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "completed": completed,
                "failed": failed,
                "started": started,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        completed = cast(list[int], d.pop("completed"))

        failed = cast(list[int], d.pop("failed"))

        started = cast(list[int], d.pop("started"))

        job_series = cls(
            completed=completed,
            failed=failed,
            started=started,
        )

        job_series.additional_properties = d
        return job_series

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
