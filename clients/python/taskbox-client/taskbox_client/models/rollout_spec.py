from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RolloutSpec")


@_attrs_define
class RolloutSpec:
    """A canary rollout of a new version.

    Attributes:
        percent (int): The share of new jobs that pins the staged version, 0 to 100.
    """

    percent: int

    def to_dict(self) -> dict[str, Any]:
        percent = self.percent

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "percent": percent,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        percent = d.pop("percent")

        rollout_spec = cls(
            percent=percent,
        )

        return rollout_spec
