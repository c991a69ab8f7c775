from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_status import DeliveryStatus
from ..models.event_type import EventType
from ..types import UNSET, Unset

T = TypeVar("T", bound="DeliveryView")


@_attrs_define
class DeliveryView:
    """One event's delivery to a webhook.

    Attributes:
        attempts (int):
        created_at (str):
        id (int):
        seq (int): The event's sequence number.
        status (DeliveryStatus): Where a delivery stands.
        type_ (EventType): What happened to a job. The names are part of the HTTP contract.
        last_at (None | str | Unset):
        last_error (None | str | Unset):
        last_status (int | None | Unset): The HTTP status of the last try, if it got one.
        next_at (None | str | Unset): When it is tried next, while pending.
    """

    attempts: int
    created_at: str
    id: int
    seq: int
    status: DeliveryStatus
    type_: EventType
    last_at: None | str | Unset = UNSET
    last_error: None | str | Unset = UNSET
    last_status: int | None | Unset = UNSET
    next_at: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        created_at = self.created_at

        id = self.id

        seq = self.seq

        status = self.status.value

        type_ = self.type_.value

        last_at: None | str | Unset
        if isinstance(self.last_at, Unset):
            last_at = UNSET
        else:
            last_at = self.last_at

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        last_status: int | None | Unset
        if isinstance(self.last_status, Unset):
            last_status = UNSET
        else:
            last_status = self.last_status

        next_at: None | str | Unset
        if isinstance(self.next_at, Unset):
            next_at = UNSET
        else:
            next_at = self.next_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "created_at": created_at,
                "id": id,
                "seq": seq,
                "status": status,
                "type": type_,
            }
        )
        if last_at is not UNSET:
            field_dict["last_at"] = last_at
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_status is not UNSET:
            field_dict["last_status"] = last_status
        if next_at is not UNSET:
            field_dict["next_at"] = next_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        created_at = d.pop("created_at")

        id = d.pop("id")

        seq = d.pop("seq")

        status = DeliveryStatus(d.pop("status"))

        type_ = EventType(d.pop("type"))

        def _parse_last_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_at = _parse_last_at(d.pop("last_at", UNSET))

        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))

        def _parse_last_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_status = _parse_last_status(d.pop("last_status", UNSET))

        def _parse_next_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_at = _parse_next_at(d.pop("next_at", UNSET))

        delivery_view = cls(
            attempts=attempts,
            created_at=created_at,
            id=id,
            seq=seq,
            status=status,
            type_=type_,
            last_at=last_at,
            last_error=last_error,
            last_status=last_status,
            next_at=next_at,
        )

        delivery_view.additional_properties = d
        return delivery_view

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
