from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.log_line import LogLine


T = TypeVar("T", bound="AttemptLog")


@_attrs_define
class AttemptLog:
    """An attempt's log once it is over.

    Attributes:
        dropped_bytes (int): Bytes in those lines (and in the cut-off ends of over-long lines).
        dropped_lines (int): Lines that did not fit in the budget.
        lines (list[LogLine]):
    """

    dropped_bytes: int
    dropped_lines: int
    lines: list[LogLine]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dropped_bytes = self.dropped_bytes

        dropped_lines = self.dropped_lines

        lines = []
        for lines_item_data in self.lines:
            lines_item = lines_item_data.to_dict()
            lines.append(lines_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dropped_bytes": dropped_bytes,
                "dropped_lines": dropped_lines,
                "lines": lines,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.log_line import LogLine  # noqa: PLC0415

        d = dict(src_dict)
        dropped_bytes = d.pop("dropped_bytes")

        dropped_lines = d.pop("dropped_lines")

        lines = []
        _lines = d.pop("lines")
        for lines_item_data in _lines:
            lines_item = LogLine.from_dict(lines_item_data)

            lines.append(lines_item)

        attempt_log = cls(
            dropped_bytes=dropped_bytes,
            dropped_lines=dropped_lines,
            lines=lines,
        )

        attempt_log.additional_properties = d
        return attempt_log

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
