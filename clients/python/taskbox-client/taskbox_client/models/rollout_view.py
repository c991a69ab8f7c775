from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.version_figures import VersionFigures


T = TypeVar("T", bound="RolloutView")


@_attrs_define
class RolloutView:
    """A rollout in progress: the staged version's share, and what each of
    the two versions did in the jobs made since it began.

        Attributes:
            figures (list[VersionFigures]): The staged version's figures, then the live one's.
            live_version (int): The live version the rest of the jobs pin.
            percent (int): The share of new jobs that pins the staged version.
            started_at (str):
            version (int): The staged version.
    """

    figures: list[VersionFigures]
    live_version: int
    percent: int
    started_at: str
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        figures = []
        for figures_item_data in self.figures:
            figures_item = figures_item_data.to_dict()
            figures.append(figures_item)

        live_version = self.live_version

        percent = self.percent

        started_at = self.started_at

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "figures": figures,
                "live_version": live_version,
                "percent": percent,
                "started_at": started_at,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.version_figures import VersionFigures  # noqa: PLC0415

        d = dict(src_dict)
        figures = []
        _figures = d.pop("figures")
        for figures_item_data in _figures:
            figures_item = VersionFigures.from_dict(figures_item_data)

            figures.append(figures_item)

        live_version = d.pop("live_version")

        percent = d.pop("percent")

        started_at = d.pop("started_at")

        version = d.pop("version")

        rollout_view = cls(
            figures=figures,
            live_version=live_version,
            percent=percent,
            started_at=started_at,
            version=version,
        )

        rollout_view.additional_properties = d
        return rollout_view

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
