from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.step_spec import StepSpec


T = TypeVar("T", bound="WorkflowSpec")


@_attrs_define
class WorkflowSpec:
    """The body of `PUT /v1/workflows/{name}`. Unknown fields are refused.

    Attributes:
        steps (list[StepSpec]):
        deadline_ms (int | None | Unset): Bounds a job across all its steps, from enqueue.
        input_schema (Any | Unset):
        on_cancel (list[StepSpec] | Unset): Run, with the context, when a job of the workflow is cancelled.
        on_error (list[StepSpec] | Unset): Run, with the context and the error, when a step fails for good.
        queue (None | str | Unset): The queue its jobs go to unless the enqueue names one.
        restore (bool | Unset): Whether a retried job keeps its completed steps' results (and does
            not run them again); `false` starts it over.
    """

    steps: list[StepSpec]
    deadline_ms: int | None | Unset = UNSET
    input_schema: Any | Unset = UNSET
    on_cancel: list[StepSpec] | Unset = UNSET
    on_error: list[StepSpec] | Unset = UNSET
    queue: None | str | Unset = UNSET
    restore: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        deadline_ms: int | None | Unset
        if isinstance(self.deadline_ms, Unset):
            deadline_ms = UNSET
        else:
            deadline_ms = self.deadline_ms

        input_schema = self.input_schema

        on_cancel: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.on_cancel, Unset):
            on_cancel = []
            for on_cancel_item_data in self.on_cancel:
                on_cancel_item = on_cancel_item_data.to_dict()
                on_cancel.append(on_cancel_item)

        on_error: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.on_error, Unset):
            on_error = []
            for on_error_item_data in self.on_error:
                on_error_item = on_error_item_data.to_dict()
                on_error.append(on_error_item)

        queue: None | str | Unset
        if isinstance(self.queue, Unset):
            queue = UNSET
        else:
            queue = self.queue

        restore = self.restore

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "steps": steps,
            }
        )
        if deadline_ms is not UNSET:
            field_dict["deadline_ms"] = deadline_ms
        if input_schema is not UNSET:
            field_dict["input_schema"] = input_schema
        if on_cancel is not UNSET:
            field_dict["on_cancel"] = on_cancel
        if on_error is not UNSET:
            field_dict["on_error"] = on_error
        if queue is not UNSET:
            field_dict["queue"] = queue
        if restore is not UNSET:
            field_dict["restore"] = restore

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.step_spec import StepSpec  # noqa: PLC0415

        d = dict(src_dict)
        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = StepSpec.from_dict(steps_item_data)

            steps.append(steps_item)

        def _parse_deadline_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        deadline_ms = _parse_deadline_ms(d.pop("deadline_ms", UNSET))

        input_schema = d.pop("input_schema", UNSET)

        _on_cancel = d.pop("on_cancel", UNSET)
        on_cancel: list[StepSpec] | Unset = UNSET
        if _on_cancel is not UNSET:
            on_cancel = []
            for on_cancel_item_data in _on_cancel:
                on_cancel_item = StepSpec.from_dict(on_cancel_item_data)

                on_cancel.append(on_cancel_item)

        _on_error = d.pop("on_error", UNSET)
        on_error: list[StepSpec] | Unset = UNSET
        if _on_error is not UNSET:
            on_error = []
            for on_error_item_data in _on_error:
                on_error_item = StepSpec.from_dict(on_error_item_data)

                on_error.append(on_error_item)

        def _parse_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        queue = _parse_queue(d.pop("queue", UNSET))

        restore = d.pop("restore", UNSET)

        workflow_spec = cls(
            steps=steps,
            deadline_ms=deadline_ms,
            input_schema=input_schema,
            on_cancel=on_cancel,
            on_error=on_error,
            queue=queue,
            restore=restore,
        )

        return workflow_spec
