from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.limits_spec import LimitsSpec
    from ..models.retry_policy import RetryPolicy


T = TypeVar("T", bound="StepSpec")


@_attrs_define
class StepSpec:
    """One step: a task run on the workflow's context.

    Attributes:
        name (str): Unique within the workflow (its steps and chains together).
        task (str): The task it runs (pinned, with its version, when a job is enqueued).
        fallback (None | str | Unset): A task run when the step fails for good; the task's when left out.
        limits (LimitsSpec | None | Unset):
        retry (None | RetryPolicy | Unset):
        timeout_ms (int | None | Unset): The step's budget across all its attempts, from its first start.
    """

    name: str
    task: str
    fallback: None | str | Unset = UNSET
    limits: LimitsSpec | None | Unset = UNSET
    retry: None | RetryPolicy | Unset = UNSET
    timeout_ms: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.limits_spec import LimitsSpec  # noqa: PLC0415
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415

        name = self.name

        task = self.task

        fallback: None | str | Unset
        if isinstance(self.fallback, Unset):
            fallback = UNSET
        else:
            fallback = self.fallback

        limits: dict[str, Any] | None | Unset
        if isinstance(self.limits, Unset):
            limits = UNSET
        elif isinstance(self.limits, LimitsSpec):
            limits = self.limits.to_dict()
        else:
            limits = self.limits

        retry: dict[str, Any] | None | Unset
        if isinstance(self.retry, Unset):
            retry = UNSET
        elif isinstance(self.retry, RetryPolicy):
            retry = self.retry.to_dict()
        else:
            retry = self.retry

        timeout_ms: int | None | Unset
        if isinstance(self.timeout_ms, Unset):
            timeout_ms = UNSET
        else:
            timeout_ms = self.timeout_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "task": task,
            }
        )
        if fallback is not UNSET:
            field_dict["fallback"] = fallback
        if limits is not UNSET:
            field_dict["limits"] = limits
        if retry is not UNSET:
            field_dict["retry"] = retry
        if timeout_ms is not UNSET:
            field_dict["timeout_ms"] = timeout_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.limits_spec import LimitsSpec  # noqa: PLC0415
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415

        d = dict(src_dict)
        name = d.pop("name")

        task = d.pop("task")

        def _parse_fallback(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        fallback = _parse_fallback(d.pop("fallback", UNSET))

        def _parse_limits(data: object) -> LimitsSpec | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                limits_type_1 = LimitsSpec.from_dict(data)

                return limits_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LimitsSpec | None | Unset, data)

        limits = _parse_limits(d.pop("limits", UNSET))

        def _parse_retry(data: object) -> None | RetryPolicy | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                retry_type_1 = RetryPolicy.from_dict(data)

                return retry_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RetryPolicy | Unset, data)

        retry = _parse_retry(d.pop("retry", UNSET))

        def _parse_timeout_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        timeout_ms = _parse_timeout_ms(d.pop("timeout_ms", UNSET))

        step_spec = cls(
            name=name,
            task=task,
            fallback=fallback,
            limits=limits,
            retry=retry,
            timeout_ms=timeout_ms,
        )

        return step_spec
