from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.task_version import TaskVersion


T = TypeVar("T", bound="Task")


@_attrs_define
class Task:
    """A task: its newest version's definition, and every version.

    Attributes:
        created_at (str):
        definition (Any): The newest version's definition, as `PUT /v1/tasks/{name}` took it.
        digest (str):
        name (str):
        version (int):
        versions (list[TaskVersion]):
    """

    created_at: str
    definition: Any
    digest: str
    name: str
    version: int
    versions: list[TaskVersion]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        definition = self.definition

        digest = self.digest

        name = self.name

        version = self.version

        versions = []
        for versions_item_data in self.versions:
            versions_item = versions_item_data.to_dict()
            versions.append(versions_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "definition": definition,
                "digest": digest,
                "name": name,
                "version": version,
                "versions": versions,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.task_version import TaskVersion  # noqa: PLC0415

        d = dict(src_dict)
        created_at = d.pop("created_at")

        definition = d.pop("definition")

        digest = d.pop("digest")

        name = d.pop("name")

        version = d.pop("version")

        versions = []
        _versions = d.pop("versions")
        for versions_item_data in _versions:
            versions_item = TaskVersion.from_dict(versions_item_data)

            versions.append(versions_item)

        task = cls(
            created_at=created_at,
            definition=definition,
            digest=digest,
            name=name,
            version=version,
            versions=versions,
        )

        task.additional_properties = d
        return task

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
