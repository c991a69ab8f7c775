from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="StreamFrame")


@_attrs_define
class StreamFrame:
    """One server-sent event of the stream.

    Attributes:
        data (str): The `Event` as JSON; for `gap` and `dropped` a notice saying what
            was lost and where to go on from; for `error` the API's error shape
            (`{"error": {code, message, details}}`, `UNAUTHENTICATED` for a
            revoked or expired token) and, on a tenant's stream, `last_seq`.
        event (str): The event's type (`job.completed`, …), or `gap` (events were pruned
            before this reader read them), `dropped` (the reader was too slow
            and is disconnected) or `error` (the stream's token was revoked or
            expired, or could not be checked, and the stream ends).
        id (None | str | Unset): The event's sequence number (for `Last-Event-ID`); none on `gap`,
            `dropped` and `error`.
    """

    data: str
    event: str
    id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data

        event = self.event

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "event": event,
            }
        )
        if id is not UNSET:
            field_dict["id"] = id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        data = d.pop("data")

        event = d.pop("event")

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        stream_frame = cls(
            data=data,
            event=event,
            id=id,
        )

        stream_frame.additional_properties = d
        return stream_frame

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
