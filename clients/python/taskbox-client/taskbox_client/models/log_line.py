from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.level import Level
from ..models.source import Source

T = TypeVar("T", bound="LogLine")


@_attrs_define
class LogLine:
    """One line of an attempt's log.

    Attributes:
        at_ms (float): Milliseconds since the attempt started.
        level (Level): Severity of a log line; the guest's `level` enum, one to one.
        message (str):
        source (Source): Where a log line came from.
    """

    at_ms: float
    level: Level
    message: str
    source: Source
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at_ms = self.at_ms

        level = self.level.value

        message = self.message

        source = self.source.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at_ms": at_ms,
                "level": level,
                "message": message,
                "source": source,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at_ms = d.pop("at_ms")

        level = Level(d.pop("level"))

        message = d.pop("message")

        source = Source(d.pop("source"))

        log_line = cls(
            at_ms=at_ms,
            level=level,
            message=message,
            source=source,
        )

        log_line.additional_properties = d
        return log_line

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
