from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="LimitsSpec")


@_attrs_define
class LimitsSpec:
    """Limits a task asks for; any left out take the server's defaults.

    Attributes:
        fuel (int | None | Unset):
        memory_mb (int | None | Unset):
        timeout_ms (int | None | Unset):
    """

    fuel: int | None | Unset = UNSET
    memory_mb: int | None | Unset = UNSET
    timeout_ms: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        fuel: int | None | Unset
        if isinstance(self.fuel, Unset):
            fuel = UNSET
        else:
            fuel = self.fuel

        memory_mb: int | None | Unset
        if isinstance(self.memory_mb, Unset):
            memory_mb = UNSET
        else:
            memory_mb = self.memory_mb

        timeout_ms: int | None | Unset
        if isinstance(self.timeout_ms, Unset):
            timeout_ms = UNSET
        else:
            timeout_ms = self.timeout_ms

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if fuel is not UNSET:
            field_dict["fuel"] = fuel
        if memory_mb is not UNSET:
            field_dict["memory_mb"] = memory_mb
        if timeout_ms is not UNSET:
            field_dict["timeout_ms"] = timeout_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_fuel(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        fuel = _parse_fuel(d.pop("fuel", UNSET))

        def _parse_memory_mb(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        memory_mb = _parse_memory_mb(d.pop("memory_mb", UNSET))

        def _parse_timeout_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        timeout_ms = _parse_timeout_ms(d.pop("timeout_ms", UNSET))

        limits_spec = cls(
            fuel=fuel,
            memory_mb=memory_mb,
            timeout_ms=timeout_ms,
        )

        return limits_spec
