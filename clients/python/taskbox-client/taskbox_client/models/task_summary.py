from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="TaskSummary")


@_attrs_define
class TaskSummary:
    """A task's newest version, as `GET /v1/tasks` lists it.

    Attributes:
        created_at (str):
        digest (str):
        name (str):
        queue (str):
        tenant (str):
        version (int):
    """

    created_at: str
    digest: str
    name: str
    queue: str
    tenant: str
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        digest = self.digest

        name = self.name

        queue = self.queue

        tenant = self.tenant

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "digest": digest,
                "name": name,
                "queue": queue,
                "tenant": tenant,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        digest = d.pop("digest")

        name = d.pop("name")

        queue = d.pop("queue")

        tenant = d.pop("tenant")

        version = d.pop("version")

        task_summary = cls(
            created_at=created_at,
            digest=digest,
            name=name,
            queue=queue,
            tenant=tenant,
            version=version,
        )

        task_summary.additional_properties = d
        return task_summary

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
