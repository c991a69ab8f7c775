from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="QueueSwitched")


@_attrs_define
class QueueSwitched:
    """What a pause or resume did.

    Attributes:
        changed (bool): Whether the queue was otherwise before.
        paused (bool):
        queue (str):
    """

    changed: bool
    paused: bool
    queue: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        changed = self.changed

        paused = self.paused

        queue = self.queue

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "changed": changed,
                "paused": paused,
                "queue": queue,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        changed = d.pop("changed")

        paused = d.pop("paused")

        queue = d.pop("queue")

        queue_switched = cls(
            changed=changed,
            paused=paused,
            queue=queue,
        )

        queue_switched.additional_properties = d
        return queue_switched

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
