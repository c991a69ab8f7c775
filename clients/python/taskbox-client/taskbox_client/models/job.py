from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.job_status import JobStatus
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.debounce_view import DebounceView
    from ..models.job_error_view import JobErrorView
    from ..models.progress_record import ProgressRecord
    from ..models.task_ref import TaskRef
    from ..models.throttle import Throttle


T = TypeVar("T", bound="Job")


@_attrs_define
class Job:
    """A job as the API shows it, written straight to the answer's text (a
    list or a batch renders many: no tree of values in between).

        Attributes:
            attempts (int):
            cancel_requested (bool):
            created_at (str):
            id (str):  Example: 01JD8Z6W3R5V4K2M9N7P1Q0XYZ.
            input_ (Any): The job's input, as it was enqueued.
            max_attempts (int):
            priority (int):
            queue (str):
            run_at (str): RFC 3339 times, UTC, to the millisecond.
            status (JobStatus): Where a job is in its life. The names are part of the HTTP contract.
            task (TaskRef): A task version pinned into a job.
            cached_from (None | str | Unset): The job whose output this one took from its task's result cache,
                without an attempt; absent for a job that ran.
            concurrency_key (None | str | Unset):
            deadline_at (None | str | Unset):
            debounce (DebounceView | None | Unset):
            error (JobErrorView | None | Unset):
            expire_after_ms (int | None | Unset):
            fairness_key (None | str | Unset): The key its tenant's claims share the runners' time by, when it
                named one (else its concurrency key is), and the key's weight.
            fairness_weight (int | None | Unset):
            fallback (None | TaskRef | Unset):
            finished_at (None | str | Unset):
            output (Any | Unset): The task's output, once it completed.
            progress (None | ProgressRecord | Unset):
            started_at (None | str | Unset):
            tenant (str | Unset): Whose job it is.
            throttle (None | Throttle | Unset):
            traceparent (None | str | Unset): The trace the job continues (the enqueue's `traceparent` header,
                or the attempt of the job that made it), as the W3C `traceparent`
                of the job's enqueue span in it. Absent: the job's trace is its
                own, and its trace id is its id's 128 bits.
            unique_key (None | str | Unset):
            waiting_for (Any | Unset): What a waiting job waits for, as the guest said it.
    """

    attempts: int
    cancel_requested: bool
    created_at: str
    id: str
    input_: Any
    max_attempts: int
    priority: int
    queue: str
    run_at: str
    status: JobStatus
    task: TaskRef
    cached_from: None | str | Unset = UNSET
    concurrency_key: None | str | Unset = UNSET
    deadline_at: None | str | Unset = UNSET
    debounce: DebounceView | None | Unset = UNSET
    error: JobErrorView | None | Unset = UNSET
    expire_after_ms: int | None | Unset = UNSET
    fairness_key: None | str | Unset = UNSET
    fairness_weight: int | None | Unset = UNSET
    fallback: None | TaskRef | Unset = UNSET
    finished_at: None | str | Unset = UNSET
    output: Any | Unset = UNSET
    progress: None | ProgressRecord | Unset = UNSET
    started_at: None | str | Unset = UNSET
    tenant: str | Unset = UNSET
    throttle: None | Throttle | Unset = UNSET
    traceparent: None | str | Unset = UNSET
    unique_key: None | str | Unset = UNSET
    waiting_for: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.debounce_view import DebounceView  # noqa: PLC0415
        from ..models.job_error_view import JobErrorView  # noqa: PLC0415
        from ..models.progress_record import ProgressRecord  # noqa: PLC0415
        from ..models.task_ref import TaskRef  # noqa: PLC0415
        from ..models.throttle import Throttle  # noqa: PLC0415

        attempts = self.attempts

        cancel_requested = self.cancel_requested

        created_at = self.created_at

        id = self.id

        input_ = self.input_

        max_attempts = self.max_attempts

        priority = self.priority

        queue = self.queue

        run_at = self.run_at

        status = self.status.value

        task = self.task.to_dict()

        cached_from: None | str | Unset
        if isinstance(self.cached_from, Unset):
            cached_from = UNSET
        else:
            cached_from = self.cached_from

        concurrency_key: None | str | Unset
        if isinstance(self.concurrency_key, Unset):
            concurrency_key = UNSET
        else:
            concurrency_key = self.concurrency_key

        deadline_at: None | str | Unset
        if isinstance(self.deadline_at, Unset):
            deadline_at = UNSET
        else:
            deadline_at = self.deadline_at

        debounce: dict[str, Any] | None | Unset
        if isinstance(self.debounce, Unset):
            debounce = UNSET
        elif isinstance(self.debounce, DebounceView):
            debounce = self.debounce.to_dict()
        else:
            debounce = self.debounce

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, JobErrorView):
            error = self.error.to_dict()
        else:
            error = self.error

        expire_after_ms: int | None | Unset
        if isinstance(self.expire_after_ms, Unset):
            expire_after_ms = UNSET
        else:
            expire_after_ms = self.expire_after_ms

        fairness_key: None | str | Unset
        if isinstance(self.fairness_key, Unset):
            fairness_key = UNSET
        else:
            fairness_key = self.fairness_key

        fairness_weight: int | None | Unset
        if isinstance(self.fairness_weight, Unset):
            fairness_weight = UNSET
        else:
            fairness_weight = self.fairness_weight

        fallback: dict[str, Any] | None | Unset
        if isinstance(self.fallback, Unset):
            fallback = UNSET
        elif isinstance(self.fallback, TaskRef):
            fallback = self.fallback.to_dict()
        else:
            fallback = self.fallback

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        else:
            finished_at = self.finished_at

        output = self.output

        progress: dict[str, Any] | None | Unset
        if isinstance(self.progress, Unset):
            progress = UNSET
        elif isinstance(self.progress, ProgressRecord):
            progress = self.progress.to_dict()
        else:
            progress = self.progress

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        else:
            started_at = self.started_at

        tenant = self.tenant

        throttle: dict[str, Any] | None | Unset
        if isinstance(self.throttle, Unset):
            throttle = UNSET
        elif isinstance(self.throttle, Throttle):
            throttle = self.throttle.to_dict()
        else:
            throttle = self.throttle

        traceparent: None | str | Unset
        if isinstance(self.traceparent, Unset):
            traceparent = UNSET
        else:
            traceparent = self.traceparent

        unique_key: None | str | Unset
        if isinstance(self.unique_key, Unset):
            unique_key = UNSET
        else:
            unique_key = self.unique_key

        waiting_for = self.waiting_for

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "cancel_requested": cancel_requested,
                "created_at": created_at,
                "id": id,
                "input": input_,
                "max_attempts": max_attempts,
                "priority": priority,
                "queue": queue,
                "run_at": run_at,
                "status": status,
                "task": task,
            }
        )
        if cached_from is not UNSET:
            field_dict["cached_from"] = cached_from
        if concurrency_key is not UNSET:
            field_dict["concurrency_key"] = concurrency_key
        if deadline_at is not UNSET:
            field_dict["deadline_at"] = deadline_at
        if debounce is not UNSET:
            field_dict["debounce"] = debounce
        if error is not UNSET:
            field_dict["error"] = error
        if expire_after_ms is not UNSET:
            field_dict["expire_after_ms"] = expire_after_ms
        if fairness_key is not UNSET:
            field_dict["fairness_key"] = fairness_key
        if fairness_weight is not UNSET:
            field_dict["fairness_weight"] = fairness_weight
        if fallback is not UNSET:
            field_dict["fallback"] = fallback
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if output is not UNSET:
            field_dict["output"] = output
        if progress is not UNSET:
            field_dict["progress"] = progress
        if started_at is not UNSET:
            field_dict["started_at"] = started_at
        if tenant is not UNSET:
            field_dict["tenant"] = tenant
        if throttle is not UNSET:
            field_dict["throttle"] = throttle
        if traceparent is not UNSET:
            field_dict["traceparent"] = traceparent
        if unique_key is not UNSET:
            field_dict["unique_key"] = unique_key
        if waiting_for is not UNSET:
            field_dict["waiting_for"] = waiting_for

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.debounce_view import DebounceView  # noqa: PLC0415
        from ..models.job_error_view import JobErrorView  # noqa: PLC0415
        from ..models.progress_record import ProgressRecord  # noqa: PLC0415
        from ..models.task_ref import TaskRef  # noqa: PLC0415
        from ..models.throttle import Throttle  # noqa: PLC0415

        d = dict(src_dict)
        attempts = d.pop("attempts")

        cancel_requested = d.pop("cancel_requested")

        created_at = d.pop("created_at")

        id = d.pop("id")

        input_ = d.pop("input")

        max_attempts = d.pop("max_attempts")

        priority = d.pop("priority")

        queue = d.pop("queue")

        run_at = d.pop("run_at")

        status = JobStatus(d.pop("status"))

        task = TaskRef.from_dict(d.pop("task"))

        def _parse_cached_from(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cached_from = _parse_cached_from(d.pop("cached_from", UNSET))

        def _parse_concurrency_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        concurrency_key = _parse_concurrency_key(d.pop("concurrency_key", UNSET))

        def _parse_deadline_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deadline_at = _parse_deadline_at(d.pop("deadline_at", UNSET))

        def _parse_debounce(data: object) -> DebounceView | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                debounce_type_1 = DebounceView.from_dict(data)

                return debounce_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DebounceView | None | Unset, data)

        debounce = _parse_debounce(d.pop("debounce", UNSET))

        def _parse_error(data: object) -> JobErrorView | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_1 = JobErrorView.from_dict(data)

                return error_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobErrorView | None | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_expire_after_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expire_after_ms = _parse_expire_after_ms(d.pop("expire_after_ms", UNSET))

        def _parse_fairness_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        fairness_key = _parse_fairness_key(d.pop("fairness_key", UNSET))

        def _parse_fairness_weight(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        fairness_weight = _parse_fairness_weight(d.pop("fairness_weight", UNSET))

        def _parse_fallback(data: object) -> None | TaskRef | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                fallback_type_1 = TaskRef.from_dict(data)

                return fallback_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TaskRef | Unset, data)

        fallback = _parse_fallback(d.pop("fallback", UNSET))

        def _parse_finished_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        output = d.pop("output", UNSET)

        def _parse_progress(data: object) -> None | ProgressRecord | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                progress_type_1 = ProgressRecord.from_dict(data)

                return progress_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ProgressRecord | Unset, data)

        progress = _parse_progress(d.pop("progress", UNSET))

        def _parse_started_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        tenant = d.pop("tenant", UNSET)

        def _parse_throttle(data: object) -> None | Throttle | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                throttle_type_1 = Throttle.from_dict(data)

                return throttle_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Throttle | Unset, data)

        throttle = _parse_throttle(d.pop("throttle", UNSET))

        def _parse_traceparent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        traceparent = _parse_traceparent(d.pop("traceparent", UNSET))

        def _parse_unique_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        unique_key = _parse_unique_key(d.pop("unique_key", UNSET))

        waiting_for = d.pop("waiting_for", UNSET)

        job = cls(
            attempts=attempts,
            cancel_requested=cancel_requested,
            created_at=created_at,
            id=id,
            input_=input_,
            max_attempts=max_attempts,
            priority=priority,
            queue=queue,
            run_at=run_at,
            status=status,
            task=task,
            cached_from=cached_from,
            concurrency_key=concurrency_key,
            deadline_at=deadline_at,
            debounce=debounce,
            error=error,
            expire_after_ms=expire_after_ms,
            fairness_key=fairness_key,
            fairness_weight=fairness_weight,
            fallback=fallback,
            finished_at=finished_at,
            output=output,
            progress=progress,
            started_at=started_at,
            tenant=tenant,
            throttle=throttle,
            traceparent=traceparent,
            unique_key=unique_key,
            waiting_for=waiting_for,
        )

        job.additional_properties = d
        return job

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
