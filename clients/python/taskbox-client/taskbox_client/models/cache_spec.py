from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="CacheSpec")


@_attrs_define
class CacheSpec:
    """How long a deterministic task's results are reused.

    Attributes:
        ttl_ms (int): How long after a job completes its output serves later jobs of the
            same input (1 ms to 30 days).
    """

    ttl_ms: int

    def to_dict(self) -> dict[str, Any]:
        ttl_ms = self.ttl_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "ttl_ms": ttl_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        ttl_ms = d.pop("ttl_ms")

        cache_spec = cls(
            ttl_ms=ttl_ms,
        )

        return cache_spec
