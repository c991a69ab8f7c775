from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.item_error import ItemError
    from ..models.job import Job


T = TypeVar("T", bound="Batch")


@_attrs_define
class Batch:
    """A batch's answer.

    Attributes:
        jobs (list[ItemError | Job]):
    """

    jobs: list[ItemError | Job]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job import Job  # noqa: PLC0415

        jobs = []
        for jobs_item_data in self.jobs:
            jobs_item: dict[str, Any]
            if isinstance(jobs_item_data, Job):
                jobs_item = jobs_item_data.to_dict()
            else:
                jobs_item = jobs_item_data.to_dict()

            jobs.append(jobs_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "jobs": jobs,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.item_error import ItemError  # noqa: PLC0415
        from ..models.job import Job  # noqa: PLC0415

        d = dict(src_dict)
        jobs = []
        _jobs = d.pop("jobs")
        for jobs_item_data in _jobs:

            def _parse_jobs_item(data: object) -> ItemError | Job:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_item_type_0 = Job.from_dict(data)

                    return componentsschemas_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_item_type_1 = ItemError.from_dict(data)

                return componentsschemas_item_type_1

            jobs_item = _parse_jobs_item(jobs_item_data)

            jobs.append(jobs_item)

        batch = cls(
            jobs=jobs,
        )

        batch.additional_properties = d
        return batch

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
