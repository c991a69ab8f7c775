from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.job_gauges import JobGauges
    from ..models.window import Window


T = TypeVar("T", bound="Usage")


@_attrs_define
class Usage:
    """A tenant's usage: its jobs now, and this window and the last.

    Attributes:
        current (Window): What a tenant used in one window.
        jobs (JobGauges): How many of a tenant's jobs are in each unfinished state.
        last (Window): What a tenant used in one window.
        tenant (str):
        window_ms (int):
    """

    current: Window
    jobs: JobGauges
    last: Window
    tenant: str
    window_ms: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        current = self.current.to_dict()

        jobs = self.jobs.to_dict()

        last = self.last.to_dict()

        tenant = self.tenant

        window_ms = self.window_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "current": current,
                "jobs": jobs,
                "last": last,
                "tenant": tenant,
                "window_ms": window_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_gauges import JobGauges  # noqa: PLC0415
        from ..models.window import Window  # noqa: PLC0415

        d = dict(src_dict)
        current = Window.from_dict(d.pop("current"))

        jobs = JobGauges.from_dict(d.pop("jobs"))

        last = Window.from_dict(d.pop("last"))

        tenant = d.pop("tenant")

        window_ms = d.pop("window_ms")

        usage = cls(
            current=current,
            jobs=jobs,
            last=last,
            tenant=tenant,
            window_ms=window_ms,
        )

        usage.additional_properties = d
        return usage

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
