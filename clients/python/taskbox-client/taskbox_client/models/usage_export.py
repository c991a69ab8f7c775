from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.by import By

if TYPE_CHECKING:
    from ..models.export_line import ExportLine


T = TypeVar("T", bound="UsageExport")


@_attrs_define
class UsageExport:
    """The export: its range, its buckets, its lines.

    Attributes:
        by (By): How wide each line's bucket is.
        from_ (str):
        lines (list[ExportLine]): Each tenant's, task's and version's lines, by bucket.
        to (str):
    """

    by: By
    from_: str
    lines: list[ExportLine]
    to: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        by = self.by.value

        from_ = self.from_

        lines = []
        for lines_item_data in self.lines:
            lines_item = lines_item_data.to_dict()
            lines.append(lines_item)

        to = self.to

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "by": by,
                "from": from_,
                "lines": lines,
                "to": to,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.export_line import ExportLine  # noqa: PLC0415

        d = dict(src_dict)
        by = By(d.pop("by"))

        from_ = d.pop("from")

        lines = []
        _lines = d.pop("lines")
        for lines_item_data in _lines:
            lines_item = ExportLine.from_dict(lines_item_data)

            lines.append(lines_item)

        to = d.pop("to")

        usage_export = cls(
            by=by,
            from_=from_,
            lines=lines,
            to=to,
        )

        usage_export.additional_properties = d
        return usage_export

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
