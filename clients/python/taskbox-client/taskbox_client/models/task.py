from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.rollout_view import RolloutView
    from ..models.task_version import TaskVersion


T = TypeVar("T", bound="Task")


@_attrs_define
class Task:
    """A task: its live version's definition, every version, and the
    rollout of a staged one.

        Attributes:
            created_at (str):
            definition (Any): The live version's definition, as `PUT /v1/tasks/{name}` took it.
            digest (str):
            name (str):
            version (int): The live version: what new jobs pin outside a rollout's share.
            versions (list[TaskVersion]):
            rollout (None | RolloutView | Unset):
    """

    created_at: str
    definition: Any
    digest: str
    name: str
    version: int
    versions: list[TaskVersion]
    rollout: None | RolloutView | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.rollout_view import RolloutView  # noqa: PLC0415

        created_at = self.created_at

        definition = self.definition

        digest = self.digest

        name = self.name

        version = self.version

        versions = []
        for versions_item_data in self.versions:
            versions_item = versions_item_data.to_dict()
            versions.append(versions_item)

        rollout: dict[str, Any] | None | Unset
        if isinstance(self.rollout, Unset):
            rollout = UNSET
        elif isinstance(self.rollout, RolloutView):
            rollout = self.rollout.to_dict()
        else:
            rollout = self.rollout

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
        if rollout is not UNSET:
            field_dict["rollout"] = rollout

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.rollout_view import RolloutView  # noqa: PLC0415
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

        def _parse_rollout(data: object) -> None | RolloutView | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                rollout_type_1 = RolloutView.from_dict(data)

                return rollout_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RolloutView | Unset, data)

        rollout = _parse_rollout(d.pop("rollout", UNSET))

        task = cls(
            created_at=created_at,
            definition=definition,
            digest=digest,
            name=name,
            version=version,
            versions=versions,
            rollout=rollout,
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
