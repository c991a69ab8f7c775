from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Stack")


@_attrs_define
class Stack:
    """One named series of a stack, a value a bucket.

    Attributes:
        name (str): A tenant, a task (`tenant/task` across tenants), a queue, or
            `(other)` for what the named ones leave out.
        total (int): The sum of `values`.
        values (list[int]):
    """

    name: str
    total: int
    values: list[int]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        total = self.total

        values = self.values

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "total": total,
                "values": values,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        total = d.pop("total")

        values = cast(list[int], d.pop("values"))

        stack = cls(
            name=name,
            total=total,
            values=values,
        )

        stack.additional_properties = d
        return stack

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
