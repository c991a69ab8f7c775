from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.stack import Stack


T = TypeVar("T", bound="Split")


@_attrs_define
class Split:
    """A figure split by tenant and by task, each a stack of series.

    Attributes:
        by_task (list[Stack]):
        by_tenant (list[Stack]):
    """

    by_task: list[Stack]
    by_tenant: list[Stack]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        by_task = []
        for by_task_item_data in self.by_task:
            by_task_item = by_task_item_data.to_dict()
            by_task.append(by_task_item)

        by_tenant = []
        for by_tenant_item_data in self.by_tenant:
            by_tenant_item = by_tenant_item_data.to_dict()
            by_tenant.append(by_tenant_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "by_task": by_task,
                "by_tenant": by_tenant,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.stack import Stack  # noqa: PLC0415

        d = dict(src_dict)
        by_task = []
        _by_task = d.pop("by_task")
        for by_task_item_data in _by_task:
            by_task_item = Stack.from_dict(by_task_item_data)

            by_task.append(by_task_item)

        by_tenant = []
        _by_tenant = d.pop("by_tenant")
        for by_tenant_item_data in _by_tenant:
            by_tenant_item = Stack.from_dict(by_tenant_item_data)

            by_tenant.append(by_tenant_item)

        split = cls(
            by_task=by_task,
            by_tenant=by_tenant,
        )

        split.additional_properties = d
        return split

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
