from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.overlap import Overlap
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.before_job import BeforeJob
    from ..models.last_job import LastJob


T = TypeVar("T", bound="Schedule")


@_attrs_define
class Schedule:
    """A schedule as the API shows it: its definition and where its firing
    stands, with its last job's status.

        Attributes:
            catchup_window_ms (int):
            created_at (str):
            cron (str):
            enabled (bool):
            fired (int):
            input_ (Any):
            name (str):
            next_slots (list[str]): The next five slots from now, paused or not (UTC; the page shows
                them in `timezone`).
            overlap (Overlap): What a slot does while the schedule's last job is still active.
            skipped (int):
            tenant (str):
            timezone (str): An IANA zone (`UTC` when the definition left it out).
            updated_at (str):
            before (None | str | Unset):
            before_job (BeforeJob | None | Unset):
            buffered_slot (None | str | Unset): A slot held for its last job's end (`overlap: buffer_one`).
            cron_words (None | str | Unset): `cron` in words ("at 09:30, on Monday through Friday"); null for
                an expression with parts it has no words for.
            last_error (None | str | Unset):
            last_job (LastJob | None | Unset):
            last_slot (None | str | Unset):
            next_slot (None | str | Unset): The next slot it fires at; null while paused.
            queue (None | str | Unset):
            task (None | str | Unset):
            workflow (None | str | Unset):
    """

    catchup_window_ms: int
    created_at: str
    cron: str
    enabled: bool
    fired: int
    input_: Any
    name: str
    next_slots: list[str]
    overlap: Overlap
    skipped: int
    tenant: str
    timezone: str
    updated_at: str
    before: None | str | Unset = UNSET
    before_job: BeforeJob | None | Unset = UNSET
    buffered_slot: None | str | Unset = UNSET
    cron_words: None | str | Unset = UNSET
    last_error: None | str | Unset = UNSET
    last_job: LastJob | None | Unset = UNSET
    last_slot: None | str | Unset = UNSET
    next_slot: None | str | Unset = UNSET
    queue: None | str | Unset = UNSET
    task: None | str | Unset = UNSET
    workflow: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.before_job import BeforeJob  # noqa: PLC0415
        from ..models.last_job import LastJob  # noqa: PLC0415

        catchup_window_ms = self.catchup_window_ms

        created_at = self.created_at

        cron = self.cron

        enabled = self.enabled

        fired = self.fired

        input_ = self.input_

        name = self.name

        next_slots = self.next_slots

        overlap = self.overlap.value

        skipped = self.skipped

        tenant = self.tenant

        timezone = self.timezone

        updated_at = self.updated_at

        before: None | str | Unset
        if isinstance(self.before, Unset):
            before = UNSET
        else:
            before = self.before

        before_job: dict[str, Any] | None | Unset
        if isinstance(self.before_job, Unset):
            before_job = UNSET
        elif isinstance(self.before_job, BeforeJob):
            before_job = self.before_job.to_dict()
        else:
            before_job = self.before_job

        buffered_slot: None | str | Unset
        if isinstance(self.buffered_slot, Unset):
            buffered_slot = UNSET
        else:
            buffered_slot = self.buffered_slot

        cron_words: None | str | Unset
        if isinstance(self.cron_words, Unset):
            cron_words = UNSET
        else:
            cron_words = self.cron_words

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        last_job: dict[str, Any] | None | Unset
        if isinstance(self.last_job, Unset):
            last_job = UNSET
        elif isinstance(self.last_job, LastJob):
            last_job = self.last_job.to_dict()
        else:
            last_job = self.last_job

        last_slot: None | str | Unset
        if isinstance(self.last_slot, Unset):
            last_slot = UNSET
        else:
            last_slot = self.last_slot

        next_slot: None | str | Unset
        if isinstance(self.next_slot, Unset):
            next_slot = UNSET
        else:
            next_slot = self.next_slot

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

        workflow: None | str | Unset
        if isinstance(self.workflow, Unset):
            workflow = UNSET
        else:
            workflow = self.workflow

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "catchup_window_ms": catchup_window_ms,
                "created_at": created_at,
                "cron": cron,
                "enabled": enabled,
                "fired": fired,
                "input": input_,
                "name": name,
                "next_slots": next_slots,
                "overlap": overlap,
                "skipped": skipped,
                "tenant": tenant,
                "timezone": timezone,
                "updated_at": updated_at,
            }
        )
        if before is not UNSET:
            field_dict["before"] = before
        if before_job is not UNSET:
            field_dict["before_job"] = before_job
        if buffered_slot is not UNSET:
            field_dict["buffered_slot"] = buffered_slot
        if cron_words is not UNSET:
            field_dict["cron_words"] = cron_words
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_job is not UNSET:
            field_dict["last_job"] = last_job
        if last_slot is not UNSET:
            field_dict["last_slot"] = last_slot
        if next_slot is not UNSET:
            field_dict["next_slot"] = next_slot
        if queue is not UNSET:
            field_dict["queue"] = queue
        if task is not UNSET:
            field_dict["task"] = task
        if workflow is not UNSET:
            field_dict["workflow"] = workflow

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.before_job import BeforeJob  # noqa: PLC0415
        from ..models.last_job import LastJob  # noqa: PLC0415

        d = dict(src_dict)
        catchup_window_ms = d.pop("catchup_window_ms")

        created_at = d.pop("created_at")

        cron = d.pop("cron")

        enabled = d.pop("enabled")

        fired = d.pop("fired")

        input_ = d.pop("input")

        name = d.pop("name")

        next_slots = cast(list[str], d.pop("next_slots"))

        overlap = Overlap(d.pop("overlap"))

        skipped = d.pop("skipped")

        tenant = d.pop("tenant")

        timezone = d.pop("timezone")

        updated_at = d.pop("updated_at")

        def _parse_before(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        before = _parse_before(d.pop("before", UNSET))

        def _parse_before_job(data: object) -> BeforeJob | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                before_job_type_1 = BeforeJob.from_dict(data)

                return before_job_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BeforeJob | None | Unset, data)

        before_job = _parse_before_job(d.pop("before_job", UNSET))

        def _parse_buffered_slot(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        buffered_slot = _parse_buffered_slot(d.pop("buffered_slot", UNSET))

        def _parse_cron_words(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cron_words = _parse_cron_words(d.pop("cron_words", UNSET))

        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))

        def _parse_last_job(data: object) -> LastJob | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                last_job_type_1 = LastJob.from_dict(data)

                return last_job_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LastJob | None | Unset, data)

        last_job = _parse_last_job(d.pop("last_job", UNSET))

        def _parse_last_slot(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_slot = _parse_last_slot(d.pop("last_slot", UNSET))

        def _parse_next_slot(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_slot = _parse_next_slot(d.pop("next_slot", UNSET))

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

        def _parse_workflow(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workflow = _parse_workflow(d.pop("workflow", UNSET))

        schedule = cls(
            catchup_window_ms=catchup_window_ms,
            created_at=created_at,
            cron=cron,
            enabled=enabled,
            fired=fired,
            input_=input_,
            name=name,
            next_slots=next_slots,
            overlap=overlap,
            skipped=skipped,
            tenant=tenant,
            timezone=timezone,
            updated_at=updated_at,
            before=before,
            before_job=before_job,
            buffered_slot=buffered_slot,
            cron_words=cron_words,
            last_error=last_error,
            last_job=last_job,
            last_slot=last_slot,
            next_slot=next_slot,
            queue=queue,
            task=task,
            workflow=workflow,
        )

        schedule.additional_properties = d
        return schedule

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
