from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.backoff_kind import BackoffKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="Backoff")


@_attrs_define
class Backoff:
    """The wait before the next attempt.

    Attributes:
        delay_ms (int): The first delay (and every delay, for `fixed`).
        kind (BackoffKind):
        factor (float | None | Unset): Growth per attempt for `exponential` (default 2.0).
        jitter (float | None | Unset): Random spread, as a fraction of the delay either way (default 0.1).
        max_delay_ms (int | None | Unset): Cap on the delay (default 100 × `delay_ms`).
    """

    delay_ms: int
    kind: BackoffKind
    factor: float | None | Unset = UNSET
    jitter: float | None | Unset = UNSET
    max_delay_ms: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        delay_ms = self.delay_ms

        kind = self.kind.value

        factor: float | None | Unset
        if isinstance(self.factor, Unset):
            factor = UNSET
        else:
            factor = self.factor

        jitter: float | None | Unset
        if isinstance(self.jitter, Unset):
            jitter = UNSET
        else:
            jitter = self.jitter

        max_delay_ms: int | None | Unset
        if isinstance(self.max_delay_ms, Unset):
            max_delay_ms = UNSET
        else:
            max_delay_ms = self.max_delay_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "delay_ms": delay_ms,
                "kind": kind,
            }
        )
        if factor is not UNSET:
            field_dict["factor"] = factor
        if jitter is not UNSET:
            field_dict["jitter"] = jitter
        if max_delay_ms is not UNSET:
            field_dict["max_delay_ms"] = max_delay_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        delay_ms = d.pop("delay_ms")

        kind = BackoffKind(d.pop("kind"))

        def _parse_factor(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        factor = _parse_factor(d.pop("factor", UNSET))

        def _parse_jitter(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        jitter = _parse_jitter(d.pop("jitter", UNSET))

        def _parse_max_delay_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_delay_ms = _parse_max_delay_ms(d.pop("max_delay_ms", UNSET))

        backoff = cls(
            delay_ms=delay_ms,
            kind=kind,
            factor=factor,
            jitter=jitter,
            max_delay_ms=max_delay_ms,
        )

        return backoff
