from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Quotas")


@_attrs_define
class Quotas:
    """A tenant's quotas. `None` is no limit here; on a tenant it means the
    server's default applies.

        Attributes:
            enqueue_burst (int | None | Unset): Enqueues at once above the rate (the bucket's size; default: one
                second of the rate).
            enqueue_per_second (int | None | Unset): Enqueues per second, sustained (a token bucket).
            fuel_per_minute (int | None | Unset): Fuel the tenant's attempts may burn per minute; past it, its jobs
                wait for the next minute (they never fail for it).
            max_component_bytes (int | None | Unset): Bytes of components stored, in all.
            max_components (int | None | Unset): Components stored.
            max_queued (int | None | Unset): Jobs queued or waiting at once.
            max_running (int | None | Unset): Jobs running at once, across every runner.
            max_task_versions (int | None | Unset): Task versions stored, over all the tenant's tasks.
    """

    enqueue_burst: int | None | Unset = UNSET
    enqueue_per_second: int | None | Unset = UNSET
    fuel_per_minute: int | None | Unset = UNSET
    max_component_bytes: int | None | Unset = UNSET
    max_components: int | None | Unset = UNSET
    max_queued: int | None | Unset = UNSET
    max_running: int | None | Unset = UNSET
    max_task_versions: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        enqueue_burst: int | None | Unset
        if isinstance(self.enqueue_burst, Unset):
            enqueue_burst = UNSET
        else:
            enqueue_burst = self.enqueue_burst

        enqueue_per_second: int | None | Unset
        if isinstance(self.enqueue_per_second, Unset):
            enqueue_per_second = UNSET
        else:
            enqueue_per_second = self.enqueue_per_second

        fuel_per_minute: int | None | Unset
        if isinstance(self.fuel_per_minute, Unset):
            fuel_per_minute = UNSET
        else:
            fuel_per_minute = self.fuel_per_minute

        max_component_bytes: int | None | Unset
        if isinstance(self.max_component_bytes, Unset):
            max_component_bytes = UNSET
        else:
            max_component_bytes = self.max_component_bytes

        max_components: int | None | Unset
        if isinstance(self.max_components, Unset):
            max_components = UNSET
        else:
            max_components = self.max_components

        max_queued: int | None | Unset
        if isinstance(self.max_queued, Unset):
            max_queued = UNSET
        else:
            max_queued = self.max_queued

        max_running: int | None | Unset
        if isinstance(self.max_running, Unset):
            max_running = UNSET
        else:
            max_running = self.max_running

        max_task_versions: int | None | Unset
        if isinstance(self.max_task_versions, Unset):
            max_task_versions = UNSET
        else:
            max_task_versions = self.max_task_versions

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if enqueue_burst is not UNSET:
            field_dict["enqueue_burst"] = enqueue_burst
        if enqueue_per_second is not UNSET:
            field_dict["enqueue_per_second"] = enqueue_per_second
        if fuel_per_minute is not UNSET:
            field_dict["fuel_per_minute"] = fuel_per_minute
        if max_component_bytes is not UNSET:
            field_dict["max_component_bytes"] = max_component_bytes
        if max_components is not UNSET:
            field_dict["max_components"] = max_components
        if max_queued is not UNSET:
            field_dict["max_queued"] = max_queued
        if max_running is not UNSET:
            field_dict["max_running"] = max_running
        if max_task_versions is not UNSET:
            field_dict["max_task_versions"] = max_task_versions

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_enqueue_burst(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        enqueue_burst = _parse_enqueue_burst(d.pop("enqueue_burst", UNSET))

        def _parse_enqueue_per_second(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        enqueue_per_second = _parse_enqueue_per_second(d.pop("enqueue_per_second", UNSET))

        def _parse_fuel_per_minute(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        fuel_per_minute = _parse_fuel_per_minute(d.pop("fuel_per_minute", UNSET))

        def _parse_max_component_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_component_bytes = _parse_max_component_bytes(d.pop("max_component_bytes", UNSET))

        def _parse_max_components(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_components = _parse_max_components(d.pop("max_components", UNSET))

        def _parse_max_queued(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_queued = _parse_max_queued(d.pop("max_queued", UNSET))

        def _parse_max_running(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_running = _parse_max_running(d.pop("max_running", UNSET))

        def _parse_max_task_versions(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_task_versions = _parse_max_task_versions(d.pop("max_task_versions", UNSET))

        quotas = cls(
            enqueue_burst=enqueue_burst,
            enqueue_per_second=enqueue_per_second,
            fuel_per_minute=fuel_per_minute,
            max_component_bytes=max_component_bytes,
            max_components=max_components,
            max_queued=max_queued,
            max_running=max_running,
            max_task_versions=max_task_versions,
        )

        return quotas
