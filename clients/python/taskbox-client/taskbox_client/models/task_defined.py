from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="TaskDefined")


@_attrs_define
class TaskDefined:
    """A task version, as its definition made it.

    Attributes:
        digest (str):
        name (str):
        version (int):
        rollout_percent (int | None | Unset): Set when the version was staged: the share of new jobs it gets
            until it is promoted or rolled back.
    """

    digest: str
    name: str
    version: int
    rollout_percent: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        digest = self.digest

        name = self.name

        version = self.version

        rollout_percent: int | None | Unset
        if isinstance(self.rollout_percent, Unset):
            rollout_percent = UNSET
        else:
            rollout_percent = self.rollout_percent

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "digest": digest,
                "name": name,
                "version": version,
            }
        )
        if rollout_percent is not UNSET:
            field_dict["rollout_percent"] = rollout_percent

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        digest = d.pop("digest")

        name = d.pop("name")

        version = d.pop("version")

        def _parse_rollout_percent(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        rollout_percent = _parse_rollout_percent(d.pop("rollout_percent", UNSET))

        task_defined = cls(
            digest=digest,
            name=name,
            version=version,
            rollout_percent=rollout_percent,
        )

        task_defined.additional_properties = d
        return task_defined

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
