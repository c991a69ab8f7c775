from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="VersionFigures")


@_attrs_define
class VersionFigures:
    """What one task version did since a rollout began: its jobs that ended,
    and its attempts and their fuel.

        Attributes:
            attempts (int): Its attempts, whatever they ended in.
            completed (int): Jobs pinned to it that completed (a cache hit included).
            failed (int): Jobs pinned to it that failed for good.
            fuel (int): The fuel its attempts burned.
            version (int):
    """

    attempts: int
    completed: int
    failed: int
    fuel: int
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        completed = self.completed

        failed = self.failed

        fuel = self.fuel

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "completed": completed,
                "failed": failed,
                "fuel": fuel,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        completed = d.pop("completed")

        failed = d.pop("failed")

        fuel = d.pop("fuel")

        version = d.pop("version")

        version_figures = cls(
            attempts=attempts,
            completed=completed,
            failed=failed,
            fuel=fuel,
            version=version,
        )

        version_figures.additional_properties = d
        return version_figures

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
