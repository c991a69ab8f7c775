from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.queue_depth import QueueDepth


T = TypeVar("T", bound="Queue")


@_attrs_define
class Queue:
    """One of the tenant's queues.

    Attributes:
        depth (QueueDepth): Jobs not ended, by status (`queued`, `waiting`, `running`).
        name (str):
        paused (bool):
        tenant (str):
        oldest_queued_age_ms (int | None | Unset): How long the oldest due queued job has waited; null when none waits.
    """

    depth: QueueDepth
    name: str
    paused: bool
    tenant: str
    oldest_queued_age_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        depth = self.depth.to_dict()

        name = self.name

        paused = self.paused

        tenant = self.tenant

        oldest_queued_age_ms: int | None | Unset
        if isinstance(self.oldest_queued_age_ms, Unset):
            oldest_queued_age_ms = UNSET
        else:
            oldest_queued_age_ms = self.oldest_queued_age_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "depth": depth,
                "name": name,
                "paused": paused,
                "tenant": tenant,
            }
        )
        if oldest_queued_age_ms is not UNSET:
            field_dict["oldest_queued_age_ms"] = oldest_queued_age_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.queue_depth import QueueDepth  # noqa: PLC0415

        d = dict(src_dict)
        depth = QueueDepth.from_dict(d.pop("depth"))

        name = d.pop("name")

        paused = d.pop("paused")

        tenant = d.pop("tenant")

        def _parse_oldest_queued_age_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        oldest_queued_age_ms = _parse_oldest_queued_age_ms(d.pop("oldest_queued_age_ms", UNSET))

        queue = cls(
            depth=depth,
            name=name,
            paused=paused,
            tenant=tenant,
            oldest_queued_age_ms=oldest_queued_age_ms,
        )

        queue.additional_properties = d
        return queue

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
