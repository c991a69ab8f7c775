from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.overlap import Overlap
from ..types import UNSET, Unset

T = TypeVar("T", bound="ScheduleSpec")


@_attrs_define
class ScheduleSpec:
    """A schedule's definition. Unknown fields are refused, so that a
    misspelled one is not silently ignored.

        Attributes:
            cron (str): 5 fields (minute hour day-of-month month day-of-week), or 6–7 with
                seconds first and a year last.
            before (None | str | Unset): A task run first, on `{"schedule", "slot", "input"}`: its output is
                the slot's job's input, or `{"skip": true}` skips the slot.
            catchup_window_ms (int | None | Unset):
            input_ (Any | Unset):
            overlap (Overlap | Unset): What a slot does while the schedule's last job is still active.
            queue (None | str | Unset):
            task (None | str | Unset):
            timezone (None | str | Unset): An IANA zone; UTC when left out.
            workflow (None | str | Unset):
    """

    cron: str
    before: None | str | Unset = UNSET
    catchup_window_ms: int | None | Unset = UNSET
    input_: Any | Unset = UNSET
    overlap: Overlap | Unset = UNSET
    queue: None | str | Unset = UNSET
    task: None | str | Unset = UNSET
    timezone: None | str | Unset = UNSET
    workflow: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cron = self.cron

        before: None | str | Unset
        if isinstance(self.before, Unset):
            before = UNSET
        else:
            before = self.before

        catchup_window_ms: int | None | Unset
        if isinstance(self.catchup_window_ms, Unset):
            catchup_window_ms = UNSET
        else:
            catchup_window_ms = self.catchup_window_ms

        input_ = self.input_

        overlap: str | Unset = UNSET
        if not isinstance(self.overlap, Unset):
            overlap = self.overlap.value

        queue: None | str | Unset
        if isinstance(self.queue, Unset):
            queue = UNSET
        else:
            queue = self.queue

        task: None | str | Unset
        if isinstance(self.task, Unset):
            task = UNSET
        else:
            task = self.task

        timezone: None | str | Unset
        if isinstance(self.timezone, Unset):
            timezone = UNSET
        else:
            timezone = self.timezone

        workflow: None | str | Unset
        if isinstance(self.workflow, Unset):
            workflow = UNSET
        else:
            workflow = self.workflow

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cron": cron,
            }
        )
        if before is not UNSET:
            field_dict["before"] = before
        if catchup_window_ms is not UNSET:
            field_dict["catchup_window_ms"] = catchup_window_ms
        if input_ is not UNSET:
            field_dict["input"] = input_
        if overlap is not UNSET:
            field_dict["overlap"] = overlap
        if queue is not UNSET:
            field_dict["queue"] = queue
        if task is not UNSET:
            field_dict["task"] = task
        if timezone is not UNSET:
            field_dict["timezone"] = timezone
        if workflow is not UNSET:
            field_dict["workflow"] = workflow

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        cron = d.pop("cron")

        def _parse_before(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        before = _parse_before(d.pop("before", UNSET))

        def _parse_catchup_window_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        catchup_window_ms = _parse_catchup_window_ms(d.pop("catchup_window_ms", UNSET))

        input_ = d.pop("input", UNSET)

        _overlap = d.pop("overlap", UNSET)
        overlap: Overlap | Unset
        if isinstance(_overlap, Unset):
            overlap = UNSET
        else:
            overlap = Overlap(_overlap)

        def _parse_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        queue = _parse_queue(d.pop("queue", UNSET))

        def _parse_task(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        task = _parse_task(d.pop("task", UNSET))

        def _parse_timezone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        timezone = _parse_timezone(d.pop("timezone", UNSET))

        def _parse_workflow(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workflow = _parse_workflow(d.pop("workflow", UNSET))

        schedule_spec = cls(
            cron=cron,
            before=before,
            catchup_window_ms=catchup_window_ms,
            input_=input_,
            overlap=overlap,
            queue=queue,
            task=task,
            timezone=timezone,
            workflow=workflow,
        )

        return schedule_spec
