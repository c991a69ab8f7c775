from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_type import EventType

if TYPE_CHECKING:
    from ..models.event_job import EventJob


T = TypeVar("T", bound="Event")


@_attrs_define
class Event:
    """One event: these fields, and what its type adds (`error`,
    `will_retry`, `run_at`, `reason`, `step`, …).

        Attributes:
            at (str):
            attempt (int): The job's attempts so far.
            job (EventJob): The job an event is of.
            seq (int): The tenant's sequence number: 1, 2, 3, … for every reader.
            type_ (EventType): What happened to a job. The names are part of the HTTP contract.
    """

    at: str
    attempt: int
    job: EventJob
    seq: int
    type_: EventType
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at

        attempt = self.attempt

        job = self.job.to_dict()

        seq = self.seq

        type_ = self.type_.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "attempt": attempt,
                "job": job,
                "seq": seq,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.event_job import EventJob  # noqa: PLC0415

        d = dict(src_dict)
        at = d.pop("at")

        attempt = d.pop("attempt")

        job = EventJob.from_dict(d.pop("job"))

        seq = d.pop("seq")

        type_ = EventType(d.pop("type"))

        event = cls(
            at=at,
            attempt=attempt,
            job=job,
            seq=seq,
            type_=type_,
        )

        event.additional_properties = d
        return event

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
