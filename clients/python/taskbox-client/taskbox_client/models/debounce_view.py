from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="DebounceView")


@_attrs_define
class DebounceView:
    """A debounced job's key and chain.

    Attributes:
        key (str): The key, made from its input.
        max_wait_ms (int): As declared, or its default (ten periods).
        period_ms (int):
        since (str): When its chain's first job was enqueued (RFC 3339): it runs no later
            than `max_wait_ms` after.
        replaced (None | str | Unset): The pending job it replaced (it was cancelled), if any.
        successor (None | str | Unset): The job that replaced it, once one did.
    """

    key: str
    max_wait_ms: int
    period_ms: int
    since: str
    replaced: None | str | Unset = UNSET
    successor: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        max_wait_ms = self.max_wait_ms

        period_ms = self.period_ms

        since = self.since

        replaced: None | str | Unset
        if isinstance(self.replaced, Unset):
            replaced = UNSET
        else:
            replaced = self.replaced

        successor: None | str | Unset
        if isinstance(self.successor, Unset):
            successor = UNSET
        else:
            successor = self.successor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "key": key,
                "max_wait_ms": max_wait_ms,
                "period_ms": period_ms,
                "since": since,
            }
        )
        if replaced is not UNSET:
            field_dict["replaced"] = replaced
        if successor is not UNSET:
            field_dict["successor"] = successor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        key = d.pop("key")

        max_wait_ms = d.pop("max_wait_ms")

        period_ms = d.pop("period_ms")

        since = d.pop("since")

        def _parse_replaced(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        replaced = _parse_replaced(d.pop("replaced", UNSET))

        def _parse_successor(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        successor = _parse_successor(d.pop("successor", UNSET))

        debounce_view = cls(
            key=key,
            max_wait_ms=max_wait_ms,
            period_ms=period_ms,
            since=since,
            replaced=replaced,
            successor=successor,
        )

        debounce_view.additional_properties = d
        return debounce_view

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
