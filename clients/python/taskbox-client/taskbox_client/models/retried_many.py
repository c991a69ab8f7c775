from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RetriedMany")


@_attrs_define
class RetriedMany:
    """What a re-drive of many did.

    Attributes:
        more (bool): Whether more failed jobs match past `limit`.
        refused (int): Jobs that matched but were refused (a unique key taken since,
            `max_queued`).
        retried (int): Jobs queued again.
    """

    more: bool
    refused: int
    retried: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        more = self.more

        refused = self.refused

        retried = self.retried

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "more": more,
                "refused": refused,
                "retried": retried,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        more = d.pop("more")

        refused = d.pop("refused")

        retried = d.pop("retried")

        retried_many = cls(
            more=more,
            refused=refused,
            retried=retried,
        )

        retried_many.additional_properties = d
        return retried_many

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
