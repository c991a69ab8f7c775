from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.version_state import VersionState
from ..types import UNSET, Unset

T = TypeVar("T", bound="TaskVersion")


@_attrs_define
class TaskVersion:
    """One version of a task.

    Attributes:
        created_at (str):
        digest (str):
        state (VersionState): Where a version stands.
        version (int):
        rolled_back_at (None | str | Unset):
        rollout_started_at (None | str | Unset): When it was staged, for a version that was.
    """

    created_at: str
    digest: str
    state: VersionState
    version: int
    rolled_back_at: None | str | Unset = UNSET
    rollout_started_at: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        digest = self.digest

        state = self.state.value

        version = self.version

        rolled_back_at: None | str | Unset
        if isinstance(self.rolled_back_at, Unset):
            rolled_back_at = UNSET
        else:
            rolled_back_at = self.rolled_back_at

        rollout_started_at: None | str | Unset
        if isinstance(self.rollout_started_at, Unset):
            rollout_started_at = UNSET
        else:
            rollout_started_at = self.rollout_started_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "digest": digest,
                "state": state,
                "version": version,
            }
        )
        if rolled_back_at is not UNSET:
            field_dict["rolled_back_at"] = rolled_back_at
        if rollout_started_at is not UNSET:
            field_dict["rollout_started_at"] = rollout_started_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        digest = d.pop("digest")

        state = VersionState(d.pop("state"))

        version = d.pop("version")

        def _parse_rolled_back_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        rolled_back_at = _parse_rolled_back_at(d.pop("rolled_back_at", UNSET))

        def _parse_rollout_started_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        rollout_started_at = _parse_rollout_started_at(d.pop("rollout_started_at", UNSET))

        task_version = cls(
            created_at=created_at,
            digest=digest,
            state=state,
            version=version,
            rolled_back_at=rolled_back_at,
            rollout_started_at=rollout_started_at,
        )

        task_version.additional_properties = d
        return task_version

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
