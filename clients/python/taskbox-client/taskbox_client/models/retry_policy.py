from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.backoff import Backoff


T = TypeVar("T", bound="RetryPolicy")


@_attrs_define
class RetryPolicy:
    """How a task's failed attempts are retried.

    Attributes:
        backoff (Backoff | Unset): The wait before the next attempt.
        max_attempts (int | Unset): Attempts in all, the first included (default 3).
        non_retryable (list[str] | Unset): Failure codes that fail the job at once (matched against the guest's code).
    """

    backoff: Backoff | Unset = UNSET
    max_attempts: int | Unset = UNSET
    non_retryable: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        backoff: dict[str, Any] | Unset = UNSET
        if not isinstance(self.backoff, Unset):
            backoff = self.backoff.to_dict()

        max_attempts = self.max_attempts

        non_retryable: list[str] | Unset = UNSET
        if not isinstance(self.non_retryable, Unset):
            non_retryable = self.non_retryable

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if backoff is not UNSET:
            field_dict["backoff"] = backoff
        if max_attempts is not UNSET:
            field_dict["max_attempts"] = max_attempts
        if non_retryable is not UNSET:
            field_dict["non_retryable"] = non_retryable

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.backoff import Backoff  # noqa: PLC0415

        d = dict(src_dict)
        _backoff = d.pop("backoff", UNSET)
        backoff: Backoff | Unset
        if isinstance(_backoff, Unset):
            backoff = UNSET
        else:
            backoff = Backoff.from_dict(_backoff)

        max_attempts = d.pop("max_attempts", UNSET)

        non_retryable = cast(list[str], d.pop("non_retryable", UNSET))

        retry_policy = cls(
            backoff=backoff,
            max_attempts=max_attempts,
            non_retryable=non_retryable,
        )

        return retry_policy
