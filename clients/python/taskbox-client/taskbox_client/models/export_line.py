from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ExportLine")


@_attrs_define
class ExportLine:
    """One line: a tenant's task version in one bucket (UTC).

    Attributes:
        attempts (int):
        cache_hits (int):
        fuel (int):
        fuel_saved (int):
        http_bytes (int):
        http_requests (int):
        memory_mib_seconds (float): Each attempt's peak memory times its wall-clock time, in MiB·s.
        start (str): The bucket's start, RFC 3339.
        task (str):
        tenant (str):
        version (int):
        wall_ms (int):
    """

    attempts: int
    cache_hits: int
    fuel: int
    fuel_saved: int
    http_bytes: int
    http_requests: int
    memory_mib_seconds: float
    start: str
    task: str
    tenant: str
    version: int
    wall_ms: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        cache_hits = self.cache_hits

        fuel = self.fuel

        fuel_saved = self.fuel_saved

        http_bytes = self.http_bytes

        http_requests = self.http_requests

        memory_mib_seconds = self.memory_mib_seconds

        start = self.start

        task = self.task

        tenant = self.tenant

        version = self.version

        wall_ms = self.wall_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "cache_hits": cache_hits,
                "fuel": fuel,
                "fuel_saved": fuel_saved,
                "http_bytes": http_bytes,
                "http_requests": http_requests,
                "memory_mib_seconds": memory_mib_seconds,
                "start": start,
                "task": task,
                "tenant": tenant,
                "version": version,
                "wall_ms": wall_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        cache_hits = d.pop("cache_hits")

        fuel = d.pop("fuel")

        fuel_saved = d.pop("fuel_saved")

        http_bytes = d.pop("http_bytes")

        http_requests = d.pop("http_requests")

        memory_mib_seconds = d.pop("memory_mib_seconds")

        start = d.pop("start")

        task = d.pop("task")

        tenant = d.pop("tenant")

        version = d.pop("version")

        wall_ms = d.pop("wall_ms")

        export_line = cls(
            attempts=attempts,
            cache_hits=cache_hits,
            fuel=fuel,
            fuel_saved=fuel_saved,
            http_bytes=http_bytes,
            http_requests=http_requests,
            memory_mib_seconds=memory_mib_seconds,
            start=start,
            task=task,
            tenant=tenant,
            version=version,
            wall_ms=wall_ms,
        )

        export_line.additional_properties = d
        return export_line

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
